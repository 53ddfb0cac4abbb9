// Package emulator runs the local AWS emulator (moto_server) for tests and
// the demo: it starts it on a free loopback port, waits until it answers,
// resets or configures it, and stops it by PID.
package emulator

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Emulator is a running moto_server.
type Emulator struct {
	// URL is the endpoint, e.g. http://127.0.0.1:41234.
	URL string
	// LogPath holds the server's output.
	LogPath string

	cmd  *exec.Cmd
	done chan error
	// ownDir is the log folder Start created (no Options.LogDir), which
	// Close removes; a folder the caller gave is the caller's.
	ownDir string
}

// Options tune Start.
type Options struct {
	// LogDir is where the server log goes (default: a temp dir).
	LogDir string
	// ReadyTimeout bounds the wait for the first answer (default 60s).
	ReadyTimeout time.Duration
	// Detached starts a server that outlives the process that started it
	// (its own session, no Pdeathsig): the sandbox, stopped later by PID
	// (StopPID). Tests never detach: a test that dies must take its server
	// with it.
	Detached bool
}

// NoEmulatorEnv set (to anything) refuses every Start: `make test-unit`
// sets it, so a package that starts an emulator cannot slip into the "no
// emulator" target unnoticed.
const NoEmulatorEnv = "DYNOPS_NO_EMULATOR"

// Start starts moto_server on a free loopback port and waits until it answers.
func Start(ctx context.Context, o Options) (*Emulator, error) {
	if os.Getenv(NoEmulatorEnv) != "" {
		return nil, fmt.Errorf("%s is set (make test-unit runs only packages without an emulator), and this package starts one: leave it out of test-unit's list, or run it with go test", NoEmulatorEnv)
	}
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, fmt.Errorf("moto_server not found on PATH: install moto[server] 5.2.1 (pip install 'moto[server]==5.2.1'); scripts/setup.sh checks for it")
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	ownDir := ""
	if o.LogDir == "" {
		if o.LogDir, err = os.MkdirTemp("", "dynops-emulator-"); err != nil {
			return nil, fmt.Errorf("creating emulator log dir: %w", err)
		}
		ownDir = o.LogDir
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken between probe and bind
		port, err := freePort()
		if err != nil {
			lastErr = err
			break
		}
		e, err := start(ctx, bin, port, o)
		if err == nil {
			e.ownDir = ownDir
			return e, nil
		}
		lastErr = err
	}
	// The errors quote the log's tail, so a folder of our own goes.
	if ownDir != "" {
		_ = os.RemoveAll(ownDir)
	}
	return nil, lastErr
}

func start(ctx context.Context, bin string, port int, o Options) (*Emulator, error) {
	logPath := filepath.Join(o.LogDir, fmt.Sprintf("moto-%d.log", port))
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating emulator log: %w", err)
	}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = logf, logf
	// Own process group, so Stop ends the interpreter behind any wrapper script.
	// Pdeathsig: the kernel kills the server when the process that started it
	// dies without calling Stop (a test that panics or hits -timeout exits
	// without running deferred calls). It survives the exec chain of a wrapper
	// such as a pyenv shim, which execs the interpreter in the same process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if o.Detached {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	cmd.Env = append(os.Environ(),
		"MOTO_IAM_LOAD_MANAGED_POLICIES=true", // AWS-managed policies for Lambda roles
		"AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing",
	)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting moto_server: %w", err)
	}
	logf.Close()
	e := &Emulator{URL: fmt.Sprintf("http://127.0.0.1:%d", port), LogPath: logPath, cmd: cmd, done: make(chan error, 1)}
	go func() { e.done <- cmd.Wait() }()

	deadline := time.Now().Add(o.ReadyTimeout)
	for {
		select {
		case err := <-e.done:
			return nil, fmt.Errorf("moto_server exited before it was ready (%v); log: %s", err, tail(logPath))
		case <-ctx.Done():
			e.Stop()
			return nil, ctx.Err()
		case <-time.After(150 * time.Millisecond):
		}
		if e.ping(ctx) == nil {
			return e, nil
		}
		if time.Now().After(deadline) {
			e.Stop()
			return nil, fmt.Errorf("moto_server did not answer on %s within %s; log: %s", e.URL, o.ReadyTimeout, tail(logPath))
		}
	}
}

// MeasuredVersion is the moto release whose behaviour the README's support
// table, EMULATOR.md and every "needs real AWS" skip reason describe.
const MeasuredVersion = "5.2.1"

// Version asks the interpreter that runs the server which moto it imports.
// The server's /proc/PID/exe is that interpreter: wrappers (a pyenv shim)
// exec it in the same process, so this is the moto that answers, not
// whichever python3 comes first on PATH.
func (e *Emulator) Version(ctx context.Context) (string, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", e.PID()))
	if err != nil {
		return "", fmt.Errorf("finding the interpreter of moto_server (pid %d): %w", e.PID(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "-c", "import importlib.metadata as m; print(m.version('moto'))").Output()
	if err != nil {
		return "", fmt.Errorf("asking %s for the moto version: %w", exe, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// CheckVersion fails unless the server is the moto release the skip reasons
// were measured on, so that a newer moto cannot leave stale skips (a feature
// it gained would stay skipped) or unexplained failures. allowOther (the
// DYNOPS_EMULATOR_ANY_VERSION=1 escape hatch) turns the mismatch into a note.
func (e *Emulator) CheckVersion(ctx context.Context, allowOther bool) (string, error) {
	v, err := e.Version(ctx)
	if err != nil {
		return "", err
	}
	return v, checkVersion(v, allowOther)
}

func checkVersion(v string, allowOther bool) error {
	if v != MeasuredVersion && !allowOther {
		return fmt.Errorf("moto_server is moto %s, but the emulator facts, the README support table and the skip reasons were measured on moto %s: install it (pip install 'moto[server]==%s'), or re-measure the support table and set DYNOPS_EMULATOR_ANY_VERSION=1", v, MeasuredVersion, MeasuredVersion)
	}
	return nil
}

// PID is the server's process ID.
func (e *Emulator) PID() int { return e.cmd.Process.Pid }

// Stop ends the server and its process group: SIGTERM, then SIGKILL after 5s.
func (e *Emulator) Stop() error {
	pid := e.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-e.done:
		return nil
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-e.done
		return fmt.Errorf("moto_server (pid %d) ignored SIGTERM and was killed", pid)
	}
}

// IsServer reports whether pid is a running moto_server that this user
// may signal, read from /proc: a PID recorded by an earlier run may since
// belong to another process, which must not be signalled.
func IsServer(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(b), "moto_server")
}

// StopPID ends a detached server by its PID and process group: SIGTERM,
// then SIGKILL after 5s. It refuses a PID that is not a moto_server.
func StopPID(pid int) error {
	if !IsServer(pid) {
		return fmt.Errorf("pid %d is not a running moto_server", pid)
	}
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !IsServer(pid) {
			return nil
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return nil
}

// Close stops the server and removes the log folder Start created, unless
// keepLog (a failed run, whose log is worth reading): then it says where the
// log is. Every run used to leave a dynops-emulator-* folder in the temp dir.
func (e *Emulator) Close(keepLog bool) error {
	err := e.Stop()
	switch {
	case e.ownDir == "":
	case keepLog:
		fmt.Fprintf(os.Stderr, "emulator: log kept at %s\n", e.LogPath)
	default:
		if rmErr := os.RemoveAll(e.ownDir); rmErr != nil && err == nil {
			err = fmt.Errorf("removing the emulator log folder: %w", rmErr)
		}
	}
	return err
}

// Reset clears all state in the emulator.
func (e *Emulator) Reset(ctx context.Context) error {
	return e.post(ctx, "/moto-api/reset", "")
}

// Configure posts a moto configuration document, e.g. {"lambda":{"use_docker":false}}.
func (e *Emulator) Configure(ctx context.Context, jsonBody string) error {
	return e.post(ctx, "/moto-api/config", jsonBody)
}

// SetTransition sets how a model's status advances (moto's state manager),
// e.g. SetTransition(ctx, "ecs::task", `{"progression": "manual", "times": 1000000}`):
// moto advances an ECS task one status per DescribeTasks call (RUNNING to
// STOPPED in four) unless told otherwise.
func (e *Emulator) SetTransition(ctx context.Context, model, transition string) error {
	return e.post(ctx, "/moto-api/state-manager/set-transition", fmt.Sprintf(`{"model_name": %q, "transition": %s}`, model, transition))
}

func (e *Emulator) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.URL+"/moto-api/data.json", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

func (e *Emulator) post(ctx context.Context, path, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+path, strings.NewReader(body))
	if err != nil {
		return fmt.Errorf("emulator %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("emulator %s: %w", path, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("emulator %s: %s", path, resp.Status)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
