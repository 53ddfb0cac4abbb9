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
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/runbooks"
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
	if err != nil || len(recs) != 2 {
		t.Fatalf("records %v, %v", recs, err)
	}
	if recs[0].Event != audit.EventStarted || !recs[0].Late || recs[0].RunID != recs[1].RunID {
		t.Errorf("started record %+v", recs[0])
	}
	r := recs[1]
	if r.Event != audit.EventFinished || r.Command != "dynops check" || r.Result != "failed" || !strings.Contains(r.Error, "--endpoint-url") ||
		r.Params["table"] != "[dev-a-b]" || r.ExitCode == nil || *r.ExitCode != 1 || r.Identity.CallerError == "" || r.Identity.OSUser == "" {
		t.Errorf("record %+v", r)
	}
}

func TestIncidentFromFlagOrEnvironment(t *testing.T) {
	t.Setenv("DYNOPS_INCIDENT", "INC-ENV")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--table", "dev-a-b", "--endpoint-url", "not a url"}, "INC-ENV"},
		{[]string{"check", "--table", "dev-a-b", "--endpoint-url", "not a url", "--incident", "INC-FLAG"}, "INC-FLAG"},
	} {
		_, _, _, log := run(t, c.args...)
		recs, err := audit.Read(log)
		if err != nil || len(recs) != 2 || recs[0].Incident != c.want || recs[1].Incident != c.want {
			t.Errorf("%v: records %+v, %v; want incident %s", c.args, recs, err, c.want)
		}
	}
}

// Every step of every embedded runbook is a command of this tree, its flags
// parse, and it is marked destructive exactly when the command has --yes.
func TestRunbookStepsMatchTheCommandTree(t *testing.T) {
	all, err := runbook.LoadAll(runbooks.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 5 {
		t.Fatalf("%d runbooks embedded, want at least 5", len(all))
	}
	for _, rb := range all {
		for _, st := range rb.Steps {
			t.Run(rb.Name+"/"+st.ID, func(t *testing.T) {
				vars := map[string]string{}
				for _, name := range runbook.Placeholders(st.Run) {
					vars[name] = "x"
				}
				line, _ := runbook.Expand(st.Run, vars)
				args, err := runbook.Split(line)
				if err != nil {
					t.Fatal(err)
				}
				ios, _, _, _ := iostreams.Test()
				root := NewCmdRoot(factory.New(ios), "test")
				cmd, rest, err := root.Find(args)
				if err != nil || !cmd.Runnable() || cmd == root {
					t.Fatalf("%q is not a dynops command: %v", line, err)
				}
				if err := cmd.ParseFlags(rest); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				if hasYes := cmd.Flags().Lookup("yes") != nil; hasYes != st.Destructive {
					t.Errorf("%s: destructive: %v, but the command has --yes: %v", cmd.CommandPath(), st.Destructive, hasYes)
				}
			})
		}
	}
}

// Bad input to the audit and runbook commands: exit 2, a message naming the
// input and the fix, and no step run.
func TestAuditAndRunbookBadInput(t *testing.T) {
	cases := []struct {
		args    []string
		code    int
		message string
	}{
		{[]string{"runbook", "show", "nope"}, 2, "no runbook \"nope\": the runbooks are dlq-redrive, dr-failover"},
		{[]string{"runbook", "run", "nope"}, 2, "dynops runbook list"},
		{[]string{"runbook", "run", "pitr-restore", "--incident", "INC-1"}, 2, "missing runbook parameters: --param table=VALUE"},
		{[]string{"runbook", "run", "pitr-restore", "--incident", "INC-1", "--param", "tabel=x"}, 2, "runbook pitr-restore has no such parameter (it takes: table, restore_point)"},
		{[]string{"runbook", "run", "pitr-restore", "--incident", "INC-1", "--param", "table"}, 2, "--param \"table\": write name=value"},
		{[]string{"runbook", "run", "pitr-restore", "--incident", "../etc", "--param", "table=x"}, 2, "--incident: incident id \"../etc\""},
		{[]string{"runbook", "run", "pitr-restore", "--incident", "INC-1", "--param", "table=x", "--until", "nope"}, 2, "--until nope: runbook pitr-restore has no such step (steps: status, restore, diff, repair, verify)"},
		{[]string{"audit", "timeline"}, 2, "audit timeline needs --incident ID"},
		{[]string{"audit", "timeline", "--incident", "INC-1", "--format", "html"}, 2, "--format \"html\": use markdown"},
		{[]string{"audit", "log", "--since", "-1h"}, 2, "--since -1h0m0s: use a positive duration"},
		{[]string{"audit", "log"}, 1, "reading the audit log"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, errOut, code, _ := run(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.message) {
				t.Fatalf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut, c.code, c.message)
			}
			if strings.Contains(out+errOut, "== step") {
				t.Fatalf("a step ran: %s", errOut)
			}
		})
	}
}

func TestRunbookListAndShow(t *testing.T) {
	out, _, code, _ := run(t, "runbook", "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, name := range []string{"pitr-restore", "dlq-redrive", "dr-failover", "dr-restore-in-region", "export-and-cross-region-restore"} {
		if !strings.Contains(out, name) {
			t.Errorf("runbook list lacks %s:\n%s", name, out)
		}
	}
	if strings.Contains(out, "README") {
		t.Error("runbooks/README.md is the format, not a runbook")
	}
	out, _, code, _ = run(t, "runbook", "show", "pitr-restore")
	if code != 0 || !strings.HasPrefix(out, "# Runbook: items deleted or corrupted") || !strings.Contains(out, "```dynops\nstep: restore") {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	out, _, code, _ = run(t, "runbook", "show", "pitr-restore", "-o", "json")
	var rb struct {
		Steps []struct{ ID string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &rb) != nil || len(rb.Steps) != 5 {
		t.Fatalf("show -o json: exit %d\n%s", code, out)
	}
}
