package root

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

// finished runs args (which fail before any AWS call answers: the endpoint
// is not a URL) and returns the run's `finished` record and stderr.
func finished(t *testing.T, args ...string) (audit.Record, string) {
	t.Helper()
	_, errOut, _, log := run(t, append(args, "--endpoint-url", "not a url")...)
	recs, err := audit.Read(log)
	if err != nil || len(recs) == 0 {
		t.Fatalf("%v: audit records %+v, %v", args, recs, err)
	}
	return recs[len(recs)-1], errOut
}

// TestAuditRecordNamesRegionsAndProfile: the record carries --region, every
// region of --regions and the profile (--profile, else AWS_PROFILE).
func TestAuditRecordNamesRegionsAndProfile(t *testing.T) {
	t.Setenv("AWS_PROFILE", "")
	r, _ := finished(t, "check", "--table", "dev-a-b", "--region", "eu-west-1", "--profile", "oncall")
	if !strings.Contains(r.Identity.CallerError, `--endpoint-url "not a url" is not a URL`) {
		t.Errorf("the caller could not be looked up: the record says %q, not why", r.Identity.CallerError)
	}
	if !slices.Equal(r.Identity.Regions, []string{"eu-west-1"}) || r.Identity.Profile != "oncall" {
		t.Errorf("--region eu-west-1 --profile oncall: identity %+v", r.Identity)
	}
	t.Setenv("AWS_PROFILE", "from-env")
	r, _ = finished(t, "dr", "status", "--table", "dev-a-b", "--regions", "eu-west-1, us-east-1")
	if !slices.Contains(r.Identity.Regions, "eu-west-1") || !slices.Contains(r.Identity.Regions, "us-east-1") || r.Identity.Profile != "from-env" {
		t.Errorf("--regions eu-west-1,us-east-1 and AWS_PROFILE: regions %q profile %q", r.Identity.Regions, r.Identity.Profile)
	}
}

// TestAuditRecordTargetsOfAListFlag: each table of a list flag is a target
// of its own.
func TestAuditRecordTargetsOfAListFlag(t *testing.T) {
	r, _ := finished(t, "check", "--table", "dev-a-b,dev-c-d", "--region", "eu-west-1")
	if !slices.Equal(r.Targets, []string{"dev-a-b", "dev-c-d"}) {
		t.Errorf("--table dev-a-b,dev-c-d: targets %q", r.Targets)
	}
}

// TestAuditLogFromEnvironment: without --audit-log the record goes to
// DYNOPS_AUDIT_LOG, not to the default path.
func TestAuditLogFromEnvironment(t *testing.T) {
	log := filepath.Join(t.TempDir(), "env.jsonl")
	t.Setenv("DYNOPS_AUDIT_LOG", log)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ios, _, _, _ := iostreams.Test()
	Execute(context.Background(), factory.New(ios), "1.2.3", []string{"check", "--table", "dev-a-b", "--endpoint-url", "not a url"})
	if recs, err := audit.Read(log); err != nil || len(recs) != 2 {
		t.Errorf("DYNOPS_AUDIT_LOG=%s: records %+v, %v", log, recs, err)
	}
}

// TestDryRunRecordAndNotice: a command that takes --yes, run without it, is
// recorded as a dry run and says where its record went; with --yes it is
// not a dry run; a command without --yes prints no notice.
func TestDryRunRecordAndNotice(t *testing.T) {
	r, errOut := finished(t, "pitr", "restore", "--table", "dev-a-b", "--latest", "--region", "eu-west-1")
	if !r.DryRun || !strings.Contains(errOut, "audit: record appended to ") {
		t.Errorf("pitr restore without --yes: dry_run %v, stderr %q", r.DryRun, errOut)
	}
	r, _ = finished(t, "pitr", "restore", "--table", "dev-a-b", "--latest", "--region", "eu-west-1", "--yes")
	if r.DryRun {
		t.Error("pitr restore --yes recorded as a dry run")
	}
	_, errOut = finished(t, "check", "--table", "dev-a-b", "--region", "eu-west-1")
	if strings.Contains(errOut, "audit: record appended") {
		t.Errorf("check (no --yes) printed the notice: %q", errOut)
	}
}

// TestUnknownSubcommandWithoutSuggestion: no "Did you mean" when nothing
// is close.
func TestUnknownSubcommandWithoutSuggestion(t *testing.T) {
	_, errOut, code, _ := run(t, "table", "nothing-like-it")
	if code != 2 || strings.Contains(errOut, "Did you mean") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestInterruptedReport: an interrupted command says so, what it was doing
// and the state it leaves, without the "error:" prefix, and exits 130.
func TestInterruptedReport(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ios, _, _, errOut := iostreams.Test()
	f := factory.New(ios)
	cmd := NewCmdRoot(f, "1.2.3")
	restore, _, err := cmd.Find([]string{"pitr", "restore"})
	if err != nil {
		t.Fatal(err)
	}
	code := report(ctx, f, restore, nil, errors.Join(errors.New("restoring dev-a-b"), context.Canceled))
	if code != exitcode.Interrupted || !strings.HasPrefix(errOut.String(), "interrupted: dynops pitr restore stopped while restoring dev-a-b") ||
		!strings.Contains(errOut.String(), "a restore already started goes on in AWS") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}
