// Package setup tests scripts/setup.sh.
package setup

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer the test reads while the script writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecondSetupWaits: while one setup holds a tool cache, a second one
// says so and waits; it builds nothing beside the first (two cold setups
// side by side each built every tool, ~1,000 CPU-s each).
func TestSecondSetupWaits(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock (util-linux) is not on PATH: setup runs without its lock here")
	}
	tools := t.TempDir()
	lock, err := os.OpenFile(filepath.Join(tools, ".setup.lock"), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	var out syncBuffer
	cmd := exec.Command("bash", "../../../scripts/setup.sh")
	cmd.Env = append(os.Environ(), "DYNOPS_TOOLS_DIR="+tools)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done }()

	deadline := time.After(30 * time.Second)
	for !strings.Contains(out.String(), "waiting for another setup of "+tools) {
		select {
		case err := <-done:
			t.Fatalf("setup ended (%v) while another held %s:\n%s", err, tools, out.String())
		case <-deadline:
			t.Fatalf("setup did not say it waits in 30 s:\n%s", out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	select {
	case err := <-done:
		t.Fatalf("setup went on (%v) while another held the lock:\n%s", err, out.String())
	case <-time.After(2 * time.Second):
	}
	if strings.Contains(out.String(), "building") {
		t.Errorf("setup built while another held the lock:\n%s", out.String())
	}
	entries, _ := os.ReadDir(tools)
	if len(entries) != 1 {
		t.Errorf("the tool cache holds more than the lock: %v", entries)
	}
}
