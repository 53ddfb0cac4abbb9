package harness

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Proc is one run of the dynops binary as a process of its own, for the
// tests that need one (a SIGKILL, a SIGINT, a pseudo-terminal, stdin that is
// not a terminal, the local engine's re-exec): Target.Command is the only way
// the suites under test/ start it (TestNoDynopsProcessByHand).
type Proc struct {
	// Cmd is the process, ready to start: the binary, the arguments with the
	// target's flags, the environment. A test may give it a pseudo-terminal
	// or pipes before Start.
	Cmd *exec.Cmd
	// AuditLog is the --audit-log the run writes.
	AuditLog string

	t              testing.TB
	stdout, stderr lockedBuffer
	done           chan struct{}
}

// CommandOption changes how Target.Command runs dynops.
type CommandOption func(*commandConfig)

type commandConfig struct {
	endpoint    string
	endpointSet bool
	auditLog    string
	base        []string
	env         []string
	dir         string
	tmp         string
	stdin       io.Reader
}

// Via sends the run through endpoint instead of the emulator (a fault or
// holding proxy in front of it); "" gives no --endpoint-url.
func Via(endpoint string) CommandOption {
	return func(c *commandConfig) { c.endpoint, c.endpointSet = endpoint, true }
}

// AuditLog names the run's --audit-log (default: audit.jsonl in a temp dir
// of the test's own).
func AuditLog(path string) CommandOption { return func(c *commandConfig) { c.auditLog = path } }

// Env adds KEY=VALUE pairs to the process's environment (they win over the
// defaults: credentials of another principal, DYNOPS_CONFIG, ...).
func Env(kv ...string) CommandOption { return func(c *commandConfig) { c.env = append(c.env, kv...) } }

// CleanEnv starts the environment from kv instead of the test process's
// (os.Environ()): a run that must not see the developer's AWS_PROFILE, HOME
// or config. The test credentials and TMPDIR are still added.
func CleanEnv(kv ...string) CommandOption {
	return func(c *commandConfig) { c.base = append([]string{}, kv...) }
}

// Dir runs the process in dir (default: the test process's working dir).
func Dir(dir string) CommandOption { return func(c *commandConfig) { c.dir = dir } }

// TempDir is the process's TMPDIR (default: a temp dir of the test's own,
// removed when the test ends: a process the test SIGKILLs cannot remove its
// temp files).
func TempDir(dir string) CommandOption { return func(c *commandConfig) { c.tmp = dir } }

// Stdin gives the process r as its stdin (default: /dev/null, not a terminal).
func Stdin(r io.Reader) CommandOption { return func(c *commandConfig) { c.stdin = r } }

// Command returns dynops args as a process of its own against the target:
// the built binary (DYNOPS_TEST_BIN or ./cmd/dynops, built once), args
// followed by --region, --audit-log and (on the emulator) --endpoint-url,
// and the environment of processEnv. Run it with Run, or Start it and Wait.
func (tg *Target) Command(t testing.TB, args []string, opts ...CommandOption) *Proc {
	t.Helper()
	c := commandConfig{endpoint: tg.Endpoint()}
	for _, o := range opts {
		o(&c)
	}
	if c.auditLog == "" {
		c.auditLog = t.TempDir() + string(os.PathSeparator) + "audit.jsonl"
	}
	if c.tmp == "" {
		c.tmp = t.TempDir()
	}
	if c.base == nil {
		c.base = os.Environ()
	}
	full := append(append([]string{}, args...), "--region", tg.Region, "--audit-log", c.auditLog)
	if c.endpoint != "" {
		full = append(full, "--endpoint-url", c.endpoint)
	}
	cmd := exec.Command(binary(t), full...)
	cmd.Env = append(processEnv(c.base, c.tmp), c.env...)
	cmd.Dir = c.dir
	cmd.Stdin = c.stdin
	return &Proc{Cmd: cmd, AuditLog: c.auditLog, t: t, done: make(chan struct{})}
}

// processEnv is the environment of a dynops process: base, a TMPDIR of the
// test's own and the emulator's test credentials.
func processEnv(base []string, tmp string) []string {
	env := append([]string{}, base...)
	return append(env, "TMPDIR="+tmp, "AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing")
}

// Run runs the process to its end and returns its stdout, stderr and exit
// code; it fails the test when the process cannot start or dies of a signal.
func (p *Proc) Run() (stdout, stderr string, code int) {
	p.t.Helper()
	p.Start()
	code = p.Wait()
	if code < 0 {
		p.t.Fatalf("dynops %s: %v\n%s", p.args(), p.Cmd.ProcessState, p.Stderr())
	}
	return p.Stdout(), p.Stderr(), code
}

// Start starts the process in the background, its stdout and stderr kept
// (unless the test set Cmd.Stdout/Stderr); when the test ends it is killed
// if still running.
func (p *Proc) Start() {
	p.t.Helper()
	if p.Cmd.Stdout == nil {
		p.Cmd.Stdout = &p.stdout
	}
	if p.Cmd.Stderr == nil {
		p.Cmd.Stderr = &p.stderr
	}
	if err := p.Cmd.Start(); err != nil {
		p.t.Fatalf("starting dynops %s: %v", p.args(), err)
	}
	go func() { _ = p.Cmd.Wait(); close(p.done) }()
	p.t.Cleanup(func() { _ = p.Cmd.Process.Kill(); <-p.done })
}

// Signal sends sig to the started process (an error once it has ended).
func (p *Proc) Signal(sig os.Signal) error { return p.Cmd.Process.Signal(sig) }

// Done is closed when the started process has ended (its output read to
// the end); usable before Start, e.g. by a proxy's handler that kills it.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Wait waits for the started process to end and returns its exit code (-1:
// ended by a signal), logging the run.
func (p *Proc) Wait() int {
	p.t.Helper()
	<-p.done
	code := p.Cmd.ProcessState.ExitCode()
	p.t.Logf("dynops %s -> exit %d\n%s%s", p.args(), code, p.Stdout(), p.Stderr())
	return code
}

// WaitWithin is Wait bounded by d: it kills the process and fails the test
// when it is still running after d.
func (p *Proc) WaitWithin(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		_ = p.Cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("dynops %s still running after %s:\n%s", p.args(), d, p.Stderr())
	}
	return p.Wait()
}

// Stdout is what the process wrote to stdout so far (when kept by Start).
func (p *Proc) Stdout() string { return p.stdout.String() }

// Stderr is what the process wrote to stderr so far (when kept by Start).
func (p *Proc) Stderr() string { return p.stderr.String() }

// args is the command line without the binary, for messages.
func (p *Proc) args() string { return strings.Join(p.Cmd.Args[1:], " ") }

// lockedBuffer is a bytes.Buffer the process writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
