package root

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

func run(t *testing.T, args ...string) (string, string, int, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	code := Execute(context.Background(), factory.New(ios), "1.2.3", append(args, "--audit-log", log))
	return out.String(), errOut.String(), code, log
}

func TestVersionJSON(t *testing.T) {
	out, _, code, log := run(t, "version", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var v struct{ Version string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Version != "1.2.3" {
		t.Fatalf("version output %q: %v", out, err)
	}
	if _, err := audit.Read(log); err == nil {
		t.Error("version is not an action: it writes no audit record")
	}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		args    []string
		code    int
		message string
	}{
		{[]string{"no-such-command"}, 2, "unknown command"},
		{[]string{"check", "--no-such-flag"}, 2, "unknown flag"},
		{[]string{"check"}, 2, "needs --table NAME or --env ENV"},
		{[]string{"check", "--table", "dev-a-b", "--endpoint-url", "not a url", "--region", "eu-west-1"}, 1, "--endpoint-url"},
		// A mistyped subcommand of every parent: exit 2 with cobra's suggestion.
		{[]string{"pitr", "restroe"}, 2, "Did you mean this?\n\trestore"},
		{[]string{"pitr", "stauts"}, 2, "Did you mean this?\n\tstatus"},
		{[]string{"dlq", "inpsect"}, 2, "Did you mean this?\n\tinspect"},
		{[]string{"dlq", "redrvie"}, 2, "\tredrive"},
		{[]string{"export", "ful"}, 2, "\tfull"},
		{[]string{"export", "imprt"}, 2, "\timport"},
		{[]string{"dr", "failovr"}, 2, "\tfailover"},
		{[]string{"table", "dif"}, 2, "\tdiff"},
		{[]string{"table", "nothing-like-it"}, 2, `unknown command "nothing-like-it" for "dynops table"`},
		{[]string{"pitr"}, 2, "dynops pitr needs a subcommand"},
		{[]string{"dr"}, 2, "dynops dr needs a subcommand"},
		// Number and duration flags are validated before anything runs.
		{[]string{"dlq", "inspect", "--queue", "q", "--critical", "-1h"}, 2, "--critical"},
		{[]string{"dlq", "redrive", "--queue", "q", "--concurrency", "0"}, 2, "--concurrency 0 is below 1"},
		{[]string{"dlq", "redrive", "--queue", "q", "--max", "-3"}, 2, "--max -3"},
		{[]string{"dlq", "move", "--queue", "q", "--visibility-timeout", "0s"}, 2, "--visibility-timeout"},
		{[]string{"table", "diff", "--source", "a-b-c", "--target", "a-b-d", "--segments", "0"}, 2, "--segments 0"},
		{[]string{"table", "diff", "--source", "a-b-c", "--target", "a-b-d", "--buckets", "-1"}, 2, "--buckets"},
		{[]string{"pitr", "repair", "--from", "a-b-c", "--to", "a-b-d", "--all-differences", "--workers", "0"}, 2, "--workers"},
		{[]string{"export", "verify", "--bucket", "b", "--prefix", "p", "--parallel", "-2"}, 2, "--parallel"},
		{[]string{"dr", "status", "--table", "a-b-c", "--latency-window", "-15m"}, 2, "--latency-window"},
		{[]string{"dr", "failover", "--table", "a-b-c", "--to", "us-east-1", "--max-replication-latency", "0s"}, 2, "--max-replication-latency"},
		{[]string{"dr", "drill", "--table", "a-b-c", "--replication-timeout", "-1s"}, 2, "--replication-timeout"},
		{[]string{"check", "--table", "a-b-c", "--timeout", "-5s"}, 2, "--timeout"},
		{[]string{"export", "wait", "arn", "--wait-timeout", "-1m"}, 2, "--wait-timeout"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, errOut, code, _ := run(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.message) {
				t.Fatalf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut, c.code, c.message)
			}
		})
	}
}

func TestFailedRunIsAudited(t *testing.T) {
	_, _, code, log := run(t, "check", "--table", "dev-a-b", "--endpoint-url", "not a url", "--region", "eu-west-1")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	recs, err := audit.Read(log)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %v, %v", recs, err)
	}
	r := recs[0]
	if r.Command != "dynops check" || r.Result != "failed" || !strings.Contains(r.Error, "--endpoint-url") || r.Params["table"] != "[dev-a-b]" {
		t.Errorf("record %+v", r)
	}
}

func TestJSONErrorObject(t *testing.T) {
	for _, args := range [][]string{
		{"pitr", "restroe", "-o", "json"},
		{"-o", "json", "no-such-command"},
		{"dlq", "inspect", "--queue", "q", "--critical", "-1h", "--output=json"},
		{"check", "--table", "dev-a-b", "--endpoint-url", "not a url", "--region", "eu-west-1", "-o", "json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, _, code, _ := run(t, args...)
			var doc ErrorDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("stdout is not one JSON document: %q: %v", out, err)
			}
			if doc.Error.Message == "" || doc.Error.ExitCode != code || doc.Error.Code == "" {
				t.Errorf("error object %+v, exit %d", doc, code)
			}
		})
	}
}

func TestVersionFlagAndCommandShowCommit(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		ios, _, stdout, _ := iostreams.Test()
		code := Execute(context.Background(), factory.New(ios), "1.2.3", args)
		out := stdout.String()
		if code != 0 || !strings.HasPrefix(out, "dynops 1.2.3 (") || !strings.Contains(out, "commit ") || !strings.Contains(out, "go1.") {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
}

func TestCommandTimeouts(t *testing.T) {
	cases := map[string]time.Duration{
		"dynops dr failover":  10 * time.Second,
		"dynops dr status":    10 * time.Second,
		"dynops table diff":   time.Minute,
		"dynops check":        20 * time.Second,
		"dynops pitr status":  15 * time.Second,
		"dynops pitr restore": 30 * time.Second,
		"dynops drx":          30 * time.Second,
	}
	for path, want := range cases {
		if got := commandTimeout(path); got != want {
			t.Errorf("commandTimeout(%q) = %s, want %s", path, got, want)
		}
	}
}
