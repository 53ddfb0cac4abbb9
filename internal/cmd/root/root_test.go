package root

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

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
