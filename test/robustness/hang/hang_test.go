// Package hang checks that no dynops command hangs on an endpoint that
// accepts connections and never answers (a half-dead region): every command
// family fails within twice its --timeout, exits 124 and names the endpoint.
package hang

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/root"
)

// silentListener accepts connections on a loopback port and never answers.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// Families is every command family with arguments that reach AWS; a
// command that is missing here is a command nobody checked for hangs.
func families(endpoint string) map[string][]string {
	queue := endpoint + "/123456789012/dev-hoge-user-dlq"
	arn := "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user/export/01700000000000-abcd1234"
	return map[string][]string{
		"check table":           {"check", "--table", "dev-hoge-user"},
		"check env":             {"check", "--env", "dev"},
		"pitr status":           {"pitr", "status", "--table", "dev-hoge-user"},
		"pitr restore dry run":  {"pitr", "restore", "--table", "dev-hoge-user", "--latest"},
		"pitr restore --yes":    {"pitr", "restore", "--table", "dev-hoge-user", "--latest", "--yes"},
		"pitr repair":           {"pitr", "repair", "--from", "dev-hoge-user-restored", "--to", "dev-hoge-user", "--all-differences"},
		"table diff":            {"table", "diff", "--source", "dev-hoge-user-restored", "--target", "dev-hoge-user"},
		"table diff --engine":   {"table", "diff", "--source", "dev-hoge-user-restored", "--target", "dev-hoge-user", "--engine", "local", "--shards", "2", "--run-prefix", "s3://dev-hoge-ops/diff-runs"},
		"shard run":             {"shard", "run", "--run", "s3://dev-hoge-ops/diff-runs/r1", "--stage", "map", "--shard", "0/2"},
		"export full":           {"export", "full", "--table", "dev-hoge-user", "--bucket", "dev-hoge-exports"},
		"export full --wait":    {"export", "full", "--table", "dev-hoge-user", "--bucket", "dev-hoge-exports", "--wait"},
		"export incremental":    {"export", "incremental", "--table", "dev-hoge-user", "--bucket", "dev-hoge-exports", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-01T06:00:00Z"},
		"export list":           {"export", "list"},
		"export status":         {"export", "status", arn},
		"export wait":           {"export", "wait", arn},
		"export import dry run": {"export", "import", "--bucket", "dev-hoge-exports", "--prefix", "full", "--table", "dev-hoge-new", "--hash-key", "pk:S"},
		"export verify":         {"export", "verify", "--bucket", "dev-hoge-exports", "--prefix", "full"},
		"dlq inspect":           {"dlq", "inspect", "--queue", queue},
		"dlq redrive dry run":   {"dlq", "redrive", "--queue", queue},
		"dlq redrive --yes":     {"dlq", "redrive", "--queue", queue, "--function", "dev-hoge-consumer", "--yes"},
		"dlq move":              {"dlq", "move", "--queue", queue, "--to-queue", endpoint + "/123456789012/dev-hoge-user"},
		"dr status":             {"dr", "status", "--table", "dev-hoge-session"},
		"dr failover dry run":   {"dr", "failover", "--table", "dev-hoge-session", "--to", "eu-central-1"},
		"dr failback dry run":   {"dr", "failback", "--table", "dev-hoge-session"},
		"dr drill dry run":      {"dr", "drill", "--table", "dev-hoge-session"},
	}
}

func TestEveryCommandFamilyFailsWithinTwiceItsTimeout(t *testing.T) {
	endpoint := silentListener(t)
	const timeout = time.Second
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_ACCESS_KEY_ID", "testing")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
	fams := families(endpoint)
	// pitr verify reads a repair's record first, then the table.
	record := filepath.Join(t.TempDir(), "repair.jsonl")
	require.NoError(t, os.WriteFile(record, []byte(`{"repair":{"from":"dev-hoge-user-restored","to":"dev-hoge-user","key_names":["user_id"]}}`+"\n"+
		`{"key":{"user_id":{"S":"u1"}},"kind":"changed","outcome":"copied","source_sum":"x"}`+"\n"), 0o600))
	fams["pitr verify"] = []string{"pitr", "verify", "--record", record}
	for name, args := range fams {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := cmdtest.Run(t, root.Execute, cmdtest.Env{Endpoint: endpoint, Region: "eu-west-1"}, append(append([]string{}, args...), "--timeout", timeout.String())...)
			took := time.Since(start)
			t.Logf("took %s", took.Round(time.Millisecond))
			code, errOut := r.Code, r.Stderr
			if took > 2*timeout {
				t.Errorf("took %s, more than twice --timeout %s", took.Round(time.Millisecond), timeout)
			}
			if code != 124 {
				t.Errorf("exit %d, want 124 (timeout)", code)
			}
			if !strings.Contains(errOut, endpoint) || !strings.Contains(errOut, "--timeout") {
				t.Errorf("stderr does not name the endpoint %s and --timeout: %q", endpoint, errOut)
			}
		})
	}
}
