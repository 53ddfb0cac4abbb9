package guard

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/protect"
)

// The targets are given with their tags (as export import's new table is):
// the decision needs no AWS call, so the sequence runs without the emulator.
// The caller is given too (root looks it up with STS).
func newFactory(t *testing.T) (*factory.Factory, string) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	f := factory.New(ios)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	f.Audit = audit.New(audit.Options{Path: log, Caller: func(context.Context) (audit.Caller, error) {
		return audit.Caller{ARN: "arn:aws:iam::123456789012:user/oncall", Account: "123456789012"}, nil
	}})
	f.Audit.SetCommand("dynops test", nil, nil)
	return f, log
}

var (
	dev  = protect.Target{Kind: protect.Table, Name: "dev-hoge-user", Tags: map[string]string{"env": "dev"}, TagsFrom: "test"}
	prod = protect.Target{Kind: protect.Table, Name: "prod-hoge-user", Tags: map[string]string{"env": "prod"}, TagsFrom: "test"}
)

// TestDryRunNoticeNamesTheTypedName: a dry run ends with the one notice,
// and for a protected target it says the name must be typed or given with
// --confirm; an unprotected one adds nothing.
func TestDryRunNoticeNamesTheTypedName(t *testing.T) {
	f, _ := newFactory(t)
	d, err := Decide(f, prod, dev)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Confirm(false, nil)
	if err != nil || !c.DryRun() {
		t.Fatalf("without --yes: dry run %v, err %v", c != nil && c.DryRun(), err)
	}
	got := c.DryRunNotice("restore")
	want := "Dry run: nothing was changed. Add --yes to restore. table prod-hoge-user is protected ("
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "with --yes, type its name when asked or add --confirm prod-hoge-user.") || strings.Contains(got, "dev-hoge-user") {
		t.Errorf("notice %q", got)
	}
	d, _ = Decide(f, dev)
	c, _ = d.Confirm(false, nil)
	if got := c.DryRunNotice("repair"); got != "Dry run: nothing was changed. Add --yes to repair." {
		t.Errorf("unprotected notice %q", got)
	}
}

// TestStartAuditOnlyAfterConfirmation: a dry run cannot start the audit
// record; a confirmed run writes `started` once.
func TestStartAuditOnlyAfterConfirmation(t *testing.T) {
	ctx := context.Background()
	f, log := newFactory(t)
	d, _ := Decide(f, dev)
	c, _ := d.Confirm(false, nil)
	if _, err := c.StartAudit(ctx, audit.Plan{Targets: []string{"dev-hoge-user"}}); !errors.Is(err, ErrDryRun) || f.Audit.Started() {
		t.Errorf("dry run started the audit: %v", err)
	}
	c, err := d.Confirm(true, nil)
	if err != nil || c.DryRun() {
		t.Fatalf("with --yes on an unprotected table: %v", err)
	}
	rec, err := c.StartAudit(ctx, audit.Plan{Targets: []string{"dev-hoge-user"}})
	if err != nil || rec != f.Audit || !f.Audit.Started() {
		t.Fatalf("StartAudit: %v", err)
	}
	runs, err := audit.Read(log)
	if err != nil || len(runs) != 1 {
		t.Errorf("audit log: %v runs, %v", len(runs), err)
	}
}

// TestProtectedNeedsTheName: with --yes, a protected target without its
// name (and no terminal) is refused as bad input; with --confirm NAME it goes
// ahead; a --confirm naming no target is refused, dry run or not.
func TestProtectedNeedsTheName(t *testing.T) {
	f, _ := newFactory(t)
	d, _ := Decide(f, prod)
	if _, err := d.Confirm(true, nil); !factory.IsUsageError(err) || !strings.Contains(err.Error(), "--confirm prod-hoge-user") {
		t.Errorf("protected without its name: %v", err)
	}
	if c, err := d.Confirm(true, []string{"prod-hoge-user"}); err != nil || c.DryRun() {
		t.Errorf("with --confirm: %v", err)
	}
	for _, yes := range []bool{false, true} {
		if _, err := d.Confirm(yes, []string{"prod-other"}); !factory.IsUsageError(err) {
			t.Errorf("--confirm of another table (yes %v): %v", yes, err)
		}
	}
	none, _ := Decide(f)
	if c, err := none.Confirm(true, nil); err != nil || c.DryRun() {
		t.Errorf("nothing to protect, --yes: %v", err)
	}
	if _, err := none.Confirm(true, []string{"prod-hoge-user"}); !factory.IsUsageError(err) {
		t.Errorf("nothing to protect, --confirm given: %v", err)
	}
}

// TestPrintDryRunOnlyForAPerson: the dry-run notice ends the human output;
// under --output json stdout carries the JSON document only, so the notice
// is not printed.
func TestPrintDryRunOnlyForAPerson(t *testing.T) {
	for _, output := range []string{factory.OutputTable, factory.OutputJSON} {
		f, _ := newFactory(t)
		out := &strings.Builder{}
		f.IOStreams.Out = out
		f.Flags.Output = output
		d, err := Decide(f, dev)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := d.Confirm(false, nil)
		c.PrintDryRun("repair")
		want := "\nDry run: nothing was changed. Add --yes to repair.\n"
		if output == factory.OutputJSON {
			want = ""
		}
		if out.String() != want {
			t.Errorf("-o %s: stdout %q, want %q", output, out.String(), want)
		}
	}
}
