package dr

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/test/helpers/drpair"
)

// CLI tests of `dynops dr` on stand-in pairs: exit codes, refusals, JSON and
// the audit record, through the same code as the binary.

func pairFlags(p drpair.Pair) []string {
	return []string{"--table", p.Table, "--regions", drpair.Home + "," + drpair.Away, "--allow-unreplicated"}
}

func TestCLIStatusVerdict_DDB_DR_01(t *testing.T) {
	t.Parallel()
	p := drpair.New(t, target, drpair.Options{})
	p.PublishLatency(t, drpair.Home, drpair.Away, 250, 750)
	log := filepath.Join(t.TempDir(), "audit.jsonl")

	out, _, code := target.Dynops(t, log, append([]string{"dr", "status", "-o", "json"}, pairFlags(p)...)...)
	require.Equal(t, 0, code)
	var rep struct {
		State    failover.State
		Verdicts []failover.Verdict
		Ready    bool
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.True(t, rep.Ready)
	assert.Equal(t, drpair.Home, rep.State.Active)
	home, _ := rep.State.Region(drpair.Home)
	l, ok := home.LatencyInto(drpair.Away)
	require.True(t, ok)
	assert.Equal(t, 1, l.Datapoints, "both values fall in one 60 s period")
	assert.Equal(t, "750ms", l.Max.String())
	assert.Equal(t, "500ms", l.Avg.String())

	_, _, code = target.Dynops(t, log, append([]string{"dr", "failover", "--to", drpair.Away, "--yes"}, pairFlags(p)...)...)
	require.Equal(t, 0, code)
	out, _, code = target.Dynops(t, log, append([]string{"dr", "status"}, pairFlags(p)...)...)
	assert.Equal(t, 1, code, "after a failover the old region is fenced: not ready to fail over back (that is a failback)")
	assert.Contains(t, out, "FENCED (by content: DynopsDRFenceWrites)")
	assert.Contains(t, out, "NOT READY to fail over to "+drpair.Home)
	assert.Contains(t, out, "dynops dr failback --table "+p.Table+" --to "+drpair.Home)
}

// TestCLIRegionsDiscovered_DDB_DR_01: without --regions, dr reads the
// table's replicas from its region: a table with none is not a global table
// (the runbook for a restore in one region instead), and a table it cannot
// describe names the way out (--regions) when that region is down.
func TestCLIRegionsDiscovered_DDB_DR_01(t *testing.T) {
	t.Parallel()
	p := drpair.New(t, target, drpair.Options{})
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	for _, tc := range []struct {
		name, table string
		want        []string
	}{
		{"a table with no replicas", p.Table, []string{p.Table + " in " + drpair.Home + " lists no replicas: it is not a global table", "dr-restore-in-region.md"}},
		{"a table it cannot describe", "dev-hoge-nosuchtable", []string{"dev-hoge-nosuchtable", "if " + drpair.Home + " is down, pass --regions with the table's regions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := target.Dynops(t, log, "dr", "status", "--table", tc.table)
			assert.Equal(t, 1, code)
			for _, w := range tc.want {
				assert.Contains(t, errOut, w)
			}
			assert.NotContains(t, errOut, "%!w(<nil>)")
		})
	}
}

func TestCLIRefusals(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"drill refuses prod", []string{"dr", "drill", "--table", "prod-hoge-session", "--yes"}, 2, "drill refuses table prod-hoge-session (protected"},
		{"failover needs --to", []string{"dr", "failover", "--table", "dev-hoge-session"}, 2, "--to is required"},
		{"failover needs --table", []string{"dr", "failover", "--to", "eu-central-1"}, 2, "--table is required"},
		{"one region is not a pair", []string{"dr", "status", "--table", "dev-hoge-session", "--regions", "eu-west-1"}, 2, "at least two regions"},
		{"--to outside --regions", []string{"dr", "failover", "--table", "dev-hoge-session", "--regions", "eu-west-1,eu-central-1", "--to", "us-east-1"}, 2, "us-east-1 is not in --regions"},
		{"bad --health-check", []string{"dr", "failover", "--table", "dev-hoge-session", "--to", "eu-central-1", "--health-check", "eu-west-1="}, 2, "--health-check takes REGION=ID"},
		{"break-glass must be an ARN", []string{"dr", "failover", "--table", "dev-hoge-session", "--to", "eu-central-1", "--break-glass-role-arn", "admin"}, 2, "is not one IAM role ARN"},
		{"prod needs the typed name", []string{"dr", "failover", "--table", "prod-hoge-session", "--to", "eu-central-1", "--yes"}, 2, "--confirm prod-hoge-session"},
		{"--alarm without a pause drill", []string{"dr", "drill", "--table", "dev-hoge-session", "--alarm", "dev-hoge-session-replication-latency-eu-central-1"}, 2, "--alarm and --keep-running belong to a pause drill"},
		{"--pause-timeout under its bound", []string{"dr", "drill", "--table", "dev-hoge-session", "--pause-replication", "EXT1", "--pause-timeout", "1s"}, 2, "--pause-timeout"},
		{"a pause drill refuses prod", []string{"dr", "drill", "--table", "prod-hoge-session", "--pause-replication", "EXT1", "--yes"}, 2, "drill refuses table prod-hoge-session (protected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := target.Dynops(t, log, tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, errOut, tc.want)
		})
	}
}

func TestCLIFailoverRefusedIsAudited(t *testing.T) {
	t.Parallel()
	p := drpair.New(t, target, drpair.Options{})
	p.PublishLatency(t, drpair.Home, drpair.Away, 90000)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	out, errOut, code := target.Dynops(t, log, append([]string{"dr", "failover", "--to", drpair.Away, "--yes"}, pairFlags(p)...)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "replication-latency  FAIL")
	assert.Contains(t, out, "nothing was changed")
	assert.Contains(t, errOut, "preflight refused the switch")
	p.AssertUnchanged(t)
	all, err := audit.Read(log)
	require.NoError(t, err)
	recs := audit.Runs(all) // started + finished per run
	require.Len(t, recs, 1)
	assert.Equal(t, "failed", recs[0].Result)
	require.Len(t, recs[0].Actions, 2, "the protection decision, then only the preflight ran")
	assert.Equal(t, "protection", recs[0].Actions[0].What)
	assert.Equal(t, "dr failover: preflight", recs[0].Actions[1].What)
}

func TestCLIDryRunIsAuditedAsPlanned(t *testing.T) {
	t.Parallel()
	p := drpair.New(t, target, drpair.Options{})
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	out, _, code := target.Dynops(t, log, append([]string{"dr", "failover", "--to", drpair.Away}, pairFlags(p)...)...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "DRY RUN")
	assert.Contains(t, out, "fence-old          PLANNED")
	p.AssertUnchanged(t)
	all, err := audit.Read(log)
	require.NoError(t, err)
	recs := audit.Runs(all) // started + finished per run
	require.Len(t, recs, 1)
	assert.True(t, recs[0].DryRun)
	assert.Len(t, recs[0].Actions, 10, "the protection decision, the preflight and eight planned steps")
	for _, a := range recs[0].Actions {
		if a.What == "dr failover: drain" {
			b, err := json.Marshal(a.Detail)
			require.NoError(t, err)
			assert.Contains(t, string(b), `"rule":"nothing-to-wait"`, "the planned drain and what it came from are audited")
			return
		}
	}
	t.Fatal("no audit record of the planned drain")
}

// TestCLIDrainCountdown_DDB_DR_01: a failover with --drain waits that long
// after the fence, counting down on stderr with the total and the ETA,
// prints the drain's plan, and audits it; --drain 0s without --force and
// --reason is a usage error that changes nothing.
func TestCLIDrainCountdown_DDB_DR_01(t *testing.T) {
	t.Parallel()
	p := drpair.New(t, target, drpair.Options{})
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	_, errOut, code := target.Dynops(t, log, append([]string{"dr", "failover", "--to", drpair.Away, "--yes", "--drain", "0s"}, pairFlags(p)...)...)
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "--drain 0s skips the wait")
	p.AssertUnchanged(t)

	out, errOut, code := target.Dynops(t, log, append([]string{"dr", "failover", "--to", drpair.Away, "--yes", "--drain", "6s"}, pairFlags(p)...)...)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	assert.Contains(t, out, "drain ")
	assert.Contains(t, out, "waited 6s of 6s")
	assert.Contains(t, out, "wait 6s (--drain; the rules give 0s: nothing replicates into the target")
	assert.Contains(t, errOut, "drain (seconds after the fence): 5/6 (83%)")
	assert.Contains(t, errOut, "ETA 1s")
	assert.Equal(t, drpair.Away, p.Pointer(t, drpair.Home))
	all, err := audit.Read(log)
	require.NoError(t, err)
	found := false
	for _, r := range audit.Runs(all) {
		for _, a := range r.Actions {
			if a.What == "dr failover: drain" {
				b, err := json.Marshal(a.Detail)
				require.NoError(t, err)
				assert.Contains(t, string(b), `"rule":"override"`)
				assert.Contains(t, string(b), `"wait_ns":6000000000`)
				assert.Contains(t, string(b), `"status":"done"`)
				found = true
			}
		}
	}
	assert.True(t, found, "the drain is audited")
}

// TestCLIDryRunsChangeNothing: every switch without --yes (failover, drill,
// and a failback after a real failover) exits 0, says it is a dry run and
// changes nothing, read back from both regions: pointers and fences.
func TestCLIDryRunsChangeNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup []string // a real switch first (with --yes)
		args  []string
		want  string
	}{
		{name: "failover", args: []string{"dr", "failover", "--to", drpair.Away}, want: "DRY RUN"},
		{name: "drill", args: []string{"dr", "drill"}, want: "DRY RUN"},
		{name: "failback", setup: []string{"dr", "failover", "--to", drpair.Away, "--yes"}, args: []string{"dr", "failback", "--to", drpair.Home}, want: "DRY RUN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := drpair.New(t, target, drpair.Options{})
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			state := func() string {
				return fmt.Sprint(p.Pointer(t, drpair.Home), p.Pointer(t, drpair.Away), p.Fenced(t, drpair.Home), p.Fenced(t, drpair.Away))
			}
			if tc.setup != nil {
				_, errOut, code := target.Dynops(t, log, append(tc.setup, pairFlags(p)...)...)
				require.Equal(t, 0, code, errOut)
			}
			before := state()
			out, errOut, code := target.Dynops(t, log, append(tc.args, pairFlags(p)...)...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, tc.want)
			assert.Equal(t, before, state(), "nothing changed (read back)")
			if tc.setup == nil {
				p.AssertUnchanged(t)
			}
		})
	}
}

// TestCLIPauseDrillNeedsItsTemplate: a pause drill reads its FIS template
// before anything else; where it cannot (here: the emulator has no FIS) it
// stops there, naming the template and the region, and changes nothing.
func TestCLIPauseDrillNeedsItsTemplate(t *testing.T) {
	t.Parallel()
	p := drpair.New(t, target, drpair.Options{})
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	before := fmt.Sprint(p.Pointer(t, drpair.Home), p.Pointer(t, drpair.Away), p.Fenced(t, drpair.Home), p.Fenced(t, drpair.Away))
	_, errOut, code := target.Dynops(t, log, append([]string{"dr", "drill", "--to", drpair.Away, "--pause-replication", "EXTnotthere1", "--yes"}, pairFlags(p)...)...)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "reading experiment template EXTnotthere1 in "+drpair.Away)
	assert.Equal(t, before, fmt.Sprint(p.Pointer(t, drpair.Home), p.Pointer(t, drpair.Away), p.Fenced(t, drpair.Home), p.Fenced(t, drpair.Away)), "nothing changed")
}
