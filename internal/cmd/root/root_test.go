package root

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
		// A mistyped subcommand of every parent: exit 2 with cobra's suggestion.
		{[]string{"pitr", "restroe"}, 2, "Did you mean this?\n\trestore"},
		{[]string{"pitr", "restroe", "--table", "dev-a-b", "--latest", "--yes"}, 2, "Did you mean this?\n\trestore"},
		{[]string{"dlq", "redrvie", "--queue", "q", "--yes"}, 2, "\tredrive"},
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
		{[]string{"dlq", "redrive", "--queue", "q", "--concurrency", "0"}, 2, "--concurrency 0 is out of range: use 1 to 64 (Lambda invocations at once)"},
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
				if st.IsDecision() {
					if len(st.Choices) < 2 || st.Run != "" {
						t.Fatalf("decision %s: choices %v, run %q", st.ID, st.Choices, st.Run)
					}
					return // a choice, no command
				}
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
				// A changing command is destructive (the runner adds --yes after
				// asking) or, said so, a dry run for its plan.
				if hasYes := cmd.Flags().Lookup("yes") != nil; hasYes != (st.Destructive || st.DryRun) {
					t.Errorf("%s: destructive: %v, dry-run: %v, but the command has --yes: %v", cmd.CommandPath(), st.Destructive, st.DryRun, hasYes)
				}
			})
		}
	}
}

// The dr-failover runbook passes the env's FIS pause template to dr failover
// (its pause param), so that the failover refuses while an experiment of
// it pauses replication into the target region (issue 44).
func TestDRFailoverRunbookPassesThePauseTemplate(t *testing.T) {
	all, err := runbook.LoadAll(runbooks.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, rb := range all {
		if rb.Name != "dr-failover" {
			continue
		}
		for _, st := range rb.Steps {
			if !strings.HasPrefix(st.Run, "dr failover ") { // the runbook drops the leading "dynops"
				continue
			}
			vars := map[string]string{}
			for _, name := range runbook.Placeholders(st.Run) {
				vars[name] = ""
			}
			vars["table"], vars["to"], vars["pause"] = "prod-hoge-session", "eu-central-1", "--pause-template EXT1234567890"
			line, err := runbook.Expand(st.Run, vars)
			if err != nil {
				t.Fatalf("step %s: %v (the runbook must declare the pause param)", st.ID, err)
			}
			args, err := runbook.Split(line)
			if err != nil {
				t.Fatal(err)
			}
			ios, _, _, _ := iostreams.Test()
			cmd, rest, err := NewCmdRoot(factory.New(ios), "test").Find(args)
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if got, _ := cmd.Flags().GetString("pause-template"); got != "EXT1234567890" {
				t.Errorf("step %s runs %q: --pause-template is %q, want the pause param's template", st.ID, line, got)
			}
			return
		}
		t.Fatal("dr-failover has no dr failover step")
	}
	t.Fatal("no dr-failover runbook embedded")
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
		{[]string{"runbook", "run", "pitr-restore", "--incident", "INC-1", "--param", "tabel=x"}, 2, "runbook pitr-restore has no such parameter (it takes: table, restore_point, damage)"},
		{[]string{"runbook", "run", "pitr-restore", "--incident", "INC-1", "--param", "table"}, 2, "--param \"table\": write name=value"},
		{[]string{"runbook", "run", "pitr-restore", "--incident", "../etc", "--param", "table=x"}, 2, "--incident: incident id \"../etc\""},
		{[]string{"runbook", "run", "pitr-restore", "--incident", "INC-1", "--param", "table=x", "--until", "nope"}, 2, "--until nope: runbook pitr-restore has no such step (steps: status, restore, diff, scope, path, repair, verify)"},
		{[]string{"audit", "timeline"}, 2, "audit timeline needs --incident ID"},
		{[]string{"audit", "timeline", "--incident", "INC-1", "--format", "html"}, 2, "--format \"html\": use markdown"},
		{[]string{"audit", "log", "--since", "-1h"}, 2, "--since -1h0m0s is out of range: use 0s or more"},
		{[]string{"audit", "log", "--since", "2days"}, 2, `invalid argument "2days" for "--since" flag: "2days" is not a duration: write a number and a unit, e.g. 90s, 15m, 2h or 2d`},
		{[]string{"audit", "log", "--since", "2d"}, 1, "reading the audit log"}, // days parse (root makes every duration flag take them)
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
	if code != 0 || json.Unmarshal([]byte(out), &rb) != nil || len(rb.Steps) != 7 {
		t.Fatalf("show -o json: exit %d\n%s", code, out)
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
		"dynops pitr repair":  time.Minute,
		"dynops export list":  30 * time.Second,
	}
	ios, _, _, _ := iostreams.Test()
	root := NewCmdRoot(factory.New(ios), "1.2.3")
	for path, want := range cases {
		cmd, _, err := root.Find(strings.Fields(path)[1:])
		if err != nil {
			t.Fatal(err)
		}
		if got := commandTimeout(cmd); got != want {
			t.Errorf("commandTimeout(%q) = %s, want %s", path, got, want)
		}
	}
}

// A command line refused as a usage error (exit 2) is answered without any
// AWS call, the identity lookup included: an endpoint that answers nothing
// must not delay the message. The refusal is still audited, saying why the
// caller is missing.
func TestUsageErrorMakesNoAWSCall(t *testing.T) {
	srv, calls := countingEndpoint(t)
	for _, args := range [][]string{
		{"export", "full", "--bucket", "b"},
		{"export", "import", "--bucket", "b", "--prefix", "p", "--table", "dev-hoge-user", "--hash-key", "id:BOOL", "--yes"},
		{"pitr", "restore", "--table", "dev-hoge-user", "--latest", "--time", "2026-01-01T00:00:00Z"},
		{"dlq", "move", "--yes"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			calls.Store(0)
			_, errOut, code, log := run(t, append(args, "--endpoint-url", srv.URL, "--region", "eu-west-1")...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (usage): %s", code, errOut)
			}
			if n := calls.Load(); n != 0 {
				t.Errorf("%d AWS calls for a usage error", n)
			}
			recs, err := audit.Read(log)
			if err != nil || len(recs) != 2 {
				t.Fatalf("records %v, %v", recs, err)
			}
			if r := recs[1]; r.Result != audit.ResultRefused || !strings.Contains(r.Identity.CallerError, "not looked up") {
				t.Errorf("finished record %+v", r)
			}
		})
	}
}

// TestUnknownRegionNamed: a region no AWS partition has, in any flag that
// takes regions, is refused at once naming the flag (exit 2, no request
// sent), not "no answer from <endpoint>" after a timeout.
func TestUnknownRegionNamed(t *testing.T) {
	srv, calls := countingEndpoint(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pitr", "status", "--table", "dev-hoge-user", "--region", "mars-north-9"}, `--region "mars-north-9" is not an AWS region`},
		{[]string{"dr", "status", "--table", "dev-hoge-user", "--regions", "eu-west-1,moon-1", "--region", "eu-west-1"}, `--regions "moon-1" is not an AWS region`},
		{[]string{"dr", "failover", "--table", "dev-hoge-user", "--to", "mars", "--region", "eu-west-1"}, `--to "mars" is not an AWS region`},
		{[]string{"dr", "failback", "--table", "dev-hoge-user", "--to", "eu-west-1", "--from", "eu-west", "--region", "eu-west-1"}, `--from "eu-west" is not an AWS region`},
		{[]string{"export", "import", "--bucket", "b", "--prefix", "p", "--table", "dev-hoge-user", "--hash-key", "id:S", "--source-region", "eu_west_1", "--region", "eu-west-1"}, `--source-region "eu_west_1" is not an AWS region`},
		{[]string{"export", "revert", "--bucket", "b", "--prefix", "p", "--table", "dev-hoge-user", "--bucket-region", "EU-WEST-1", "--region", "eu-west-1"}, `--bucket-region "EU-WEST-1" is not an AWS region`},
	} {
		calls.Store(0)
		_, errOut, code, _ := run(t, append(c.args, "--endpoint-url", srv.URL)...)
		if code != 2 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "eu-west-1, us-east-1") {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
		if n := calls.Load(); n != 0 {
			t.Errorf("%v: %d request(s) sent for a region that does not exist", c.args, n)
		}
	}
}

// countingEndpoint is an AWS endpoint that answers 503 and counts the
// requests it got.
func countingEndpoint(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	calls := &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return srv, calls
}
