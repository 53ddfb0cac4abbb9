package emulator

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The child half of TestServerDiesWithAPanickingTest: start a server, say its
// PID, then panic the way a broken test does (no deferred Stop runs).
func TestHelperStartThenPanic(t *testing.T) {
	if os.Getenv("DYNOPS_EMULATOR_PANIC_CHILD") != "1" {
		t.Skip("child process of TestServerDiesWithAPanickingTest only")
	}
	e, err := Start(context.Background(), Options{})
	require.NoError(t, err)
	os.Stdout.WriteString("PID " + strconv.Itoa(e.PID()) + "\n")
	panic("a test that panics")
}

func TestServerDiesWithAPanickingTest(t *testing.T) {
	if _, err := exec.LookPath("moto_server"); err != nil {
		t.Fatalf("moto_server is needed: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperStartThenPanic$", "-test.v")
	// The child's log folder stays behind (it panics before any cleanup): in
	// a temp dir of this test's own.
	cmd.Env = append(os.Environ(), "DYNOPS_EMULATOR_PANIC_CHILD=1", "TMPDIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	pid := 0
	sc := bufio.NewScanner(out)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if p, ok := strings.CutPrefix(sc.Text(), "PID "); ok {
			pid, err = strconv.Atoi(p)
			require.NoError(t, err)
		}
	}
	waitErr := cmd.Wait()
	require.Error(t, waitErr, "the child must fail: it panics")
	require.NotZero(t, pid, "the child never reported the server's PID; it printed:\n%s", strings.Join(seen, "\n"))

	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("moto_server (pid %d) still runs 10s after the test process that started it panicked", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive reports whether pid is a running process (a zombie counts as gone).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat))
	return len(fields) > 2 && fields[2] != "Z"
}

// Close removes the log folder Start made, unless asked to keep it (a failed
// run); a folder the caller gave is never removed.
func TestCloseRemovesOnlyItsOwnLogFolder(t *testing.T) {
	for _, tc := range []struct {
		name      string
		callerDir bool
		keep      bool
		wantGone  bool
	}{
		{"own folder, passed run", false, false, true},
		{"own folder, failed run", false, true, false},
		{"caller's folder, passed run", true, false, false},
		{"caller's folder, failed run", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			o := Options{}
			if tc.callerDir {
				o.LogDir = t.TempDir()
			}
			e, err := Start(context.Background(), o)
			require.NoError(t, err)
			dir := filepath.Dir(e.LogPath)
			if tc.callerDir {
				require.Equal(t, o.LogDir, dir)
			} else {
				require.Equal(t, os.Getenv("TMPDIR"), filepath.Dir(dir), "the log folder is made in the temp dir")
			}
			require.FileExists(t, e.LogPath)
			require.NoError(t, e.Close(tc.keep))
			assert.False(t, alive(e.PID()), "Close stops the server")
			if tc.wantGone {
				assert.NoDirExists(t, dir)
			} else {
				assert.FileExists(t, e.LogPath)
			}
		})
	}
}

func TestVersionIsTheMeasuredOne(t *testing.T) {
	e, err := Start(context.Background(), Options{})
	require.NoError(t, err)
	defer func() { _ = e.Close(false) }()
	v, err := e.CheckVersion(context.Background(), false)
	require.NoError(t, err)
	assert.Equal(t, MeasuredVersion, v)
}

func TestCheckVersionRefusesAnotherRelease(t *testing.T) {
	for _, tc := range []struct {
		found      string
		allowOther bool
		wantErr    bool
	}{
		{MeasuredVersion, false, false},
		{"5.2.2", false, true},
		{"5.1.0", false, true},
		{"", false, true},
		{"5.2.2", true, false},
	} {
		err := checkVersion(tc.found, tc.allowOther)
		if !tc.wantErr {
			assert.NoError(t, err, "found %q allowOther %v", tc.found, tc.allowOther)
			continue
		}
		if assert.Error(t, err, "found %q", tc.found) {
			assert.Contains(t, err.Error(), "moto "+tc.found+",")
			assert.Contains(t, err.Error(), "DYNOPS_EMULATOR_ANY_VERSION=1", "the message says the way out")
		}
	}
}

// TestStartRefusedWithoutEmulator: under DYNOPS_NO_EMULATOR (make
// test-unit) no server starts, and the error names the variable.
func TestStartRefusedWithoutEmulator(t *testing.T) {
	t.Setenv(NoEmulatorEnv, "1")
	emu, err := Start(context.Background(), Options{ReadyTimeout: time.Second})
	if emu != nil {
		_ = emu.Close(false)
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), NoEmulatorEnv+" is set")
}
