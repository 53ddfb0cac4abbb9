package root

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

// TestJQFiltersTheJSONOfEveryCommand: --jq is applied once, by the output
// layer, to whatever -o json document a command prints: here version,
// runbook list, runbook show and audit log, each through its own
// production path (the audit log is one a failed check wrote).
func TestJQFiltersTheJSONOfEveryCommand(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	exec := func(args ...string) (string, string, int) {
		ios, _, out, errOut := iostreams.Test()
		code := Execute(context.Background(), factory.New(ios), "1.2.3", append(args, "--audit-log", log))
		return out.String(), errOut.String(), code
	}
	if _, _, code := exec("check", "--table", "dev-a-b", "--endpoint-url", "not a url", "--region", "eu-west-1"); code != 1 {
		t.Fatalf("the check that writes the audit record: exit %d", code)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"version", "-o", "json", "--jq", ".version"}, "1.2.3\n"},
		{[]string{"runbook", "list", "-o", "json", "--jq", `.[] | select(.name | startswith("dr-")) | .name`}, "dr-failover\ndr-restore-in-region\n"},
		{[]string{"runbook", "show", "pitr-restore", "--output=json", "--jq", "[.steps[].id]"}, `["status","restore","diff","scope","path","repair","verify"]` + "\n"},
		{[]string{"audit", "log", "-o", "json", "--jq", `.[] | [.command, .result, .exit_code] | @tsv`}, "dynops check\tfailed\t1\n"},
		{[]string{"audit", "log", "-o", "json", "--jq", `.[0].targets`}, `["dev-a-b"]` + "\n"},
		{[]string{"version", "-o", "json", "--jq", "empty"}, ""},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, errOut, code := exec(c.args...)
			if code != 0 || out != c.want {
				t.Errorf("exit %d, stdout %q, want %q (stderr %q)", code, out, c.want, errOut)
			}
		})
	}
}

// TestJQRefusals: a --jq that does not parse, one that fails on the
// document and one without -o json exit 2 naming the flag; nothing but the
// (unfiltered) error object is on stdout.
func TestJQRefusals(t *testing.T) {
	cases := []struct {
		args    []string
		message string
		errDoc  bool // stdout holds the JSON error object
	}{
		{[]string{"version", "-o", "json", "--jq", ".version |"}, `--jq ".version |" is not a jq expression`, true},
		{[]string{"version", "-o", "json", "--jq", "nosuchfn"}, `--jq "nosuchfn" does not compile: function not defined: nosuchfn/0`, true},
		{[]string{"version", "-o", "json", "--jq", ".version.major"}, `--jq ".version.major" failed on the output: expected an object but got: string`, false},
		{[]string{"runbook", "list", "-o", "json", "--jq", `.[] | if .name == "pitr-restore" then error("boom") else .name end`}, `failed on the output: error: boom`, false}, // after results: none written,
		{[]string{"version", "--jq", ".version"}, `--jq ".version" filters the JSON document: add -o json (the output is table)`, false},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, errOut, code, _ := run(t, c.args...)
			if code != 2 || !strings.Contains(errOut, c.message) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut, c.message)
			}
			if !c.errDoc {
				if out != "" {
					t.Errorf("stdout %q: a failed filter writes none of its results", out)
				}
				return
			}
			var doc ErrorDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Error.ExitCode != 2 || !strings.Contains(doc.Error.Message, "--jq") {
				t.Errorf("stdout %q: want the error object, unfiltered (%v)", out, err)
			}
		})
	}
}
