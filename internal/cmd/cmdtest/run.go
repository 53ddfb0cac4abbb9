package cmdtest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

// Execute runs the whole command tree as the binary does and returns its
// exit code: root.Execute. cmdtest cannot import root (root imports every
// command, and the commands' in-package tests import cmdtest), so a test
// beside a command, in its package's _test package, passes root.Execute.
type Execute func(ctx context.Context, f *factory.Factory, version string, args []string) int

// Env is where a Run runs: what the binary would get from its flags and
// environment.
type Env struct {
	// Endpoint is --endpoint-url (the emulator's URL); "" adds none.
	Endpoint string
	// Region is --region; "" adds none.
	Region string
	// AuditLog is --audit-log; "" is audit.jsonl in a temp dir of the test's own.
	AuditLog string
	// Stdin is what the command reads on stdin (not a terminal).
	Stdin string
	// Vars are environment variables set for the run (t.Setenv: a test
	// that sets any cannot run in parallel).
	Vars map[string]string
	// Streams, when set, adjusts the test streams before the run: a
	// terminal (SetTTY), the progress interval (SetProgressEvery).
	Streams func(*iostreams.IOStreams)
}

// Result is what a Run gave: the streams and the exit code as the binary
// would have printed and returned them, and the audit log it wrote.
type Result struct {
	Stdout, Stderr string
	Code           int
	AuditLog       string
}

// Run runs dynops args in-process through execute (root.Execute) with test
// streams, the flags of env added after args, and returns what the binary
// would: stdout, stderr and the exit code of root's mapping (2 a refusal,
// 1 a failure, 130 an interrupt).
func Run(t testing.TB, execute Execute, env Env, args ...string) Result {
	t.Helper()
	for k, v := range env.Vars {
		t.Setenv(k, v)
	}
	if env.AuditLog == "" {
		env.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	}
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(env.Stdin)
	if env.Streams != nil {
		env.Streams(ios)
	}
	full := append(append([]string{}, args...), "--audit-log", env.AuditLog)
	if env.Region != "" {
		full = append(full, "--region", env.Region)
	}
	if env.Endpoint != "" {
		full = append(full, "--endpoint-url", env.Endpoint)
	}
	code := execute(context.Background(), factory.New(ios), "test", full)
	t.Logf("dynops %s -> exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return Result{Stdout: out.String(), Stderr: errOut.String(), Code: code, AuditLog: env.AuditLog}
}
