package badinput

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/migrate"
)

// TestGuardTable runs EVERY destructive command against the same protected
// targets (prod-, PROD-, Prod-, production-, prd-, live-, legacy names, an
// unknown env, the env tag prod on an innocuous name, tags that cannot be
// read) with --yes and no typed name, on the emulator: each must be refused
// (exit 2, naming the target, why it is protected and --confirm NAME) and
// change nothing. Where the command would otherwise work, a control runs the
// same command as a dry run with --confirm NAME and must pass, so the refusal
// is the guard's. Removing the guard from any one command fails this test.
func TestGuardTable(t *testing.T) {
	const mismatchRow = "PROD- upper case, legacy"
	x := setup(t)
	regions := []string{"--regions", "eu-west-1,eu-central-1", "--allow-unreplicated"}
	t.Cleanup(func() { unchanged(t, x) })

	type command struct {
		name string
		// args builds the refused run for a protected table, queue or
		// function; nil when the command does not take that kind.
		args func(p protectedTarget) []string
		// control: the dry run with --confirm NAME that must pass (false:
		// none, e.g. drill refuses protected tables outright, and the DR
		// preflight needs a real pair).
		control bool
		// writes: the command has no --yes and no dry run (migrate backfill
		// and catch-up write as they go; migrate plan is their preview).
		writes bool
		// after: what the refused run must not have left behind outside the
		// emulator (e.g. a migration state file).
		after func(t *testing.T, p protectedTarget)
	}
	mig := &migrations{dir: t.TempDir()}
	tableCmds := []command{
		{name: "pitr restore", control: true, args: func(p protectedTarget) []string {
			return []string{"pitr", "restore", "--table", p.name, "--latest"}
		}},
		{name: "pitr repair", control: true, args: func(p protectedTarget) []string {
			// An accepted unrelated source, so that the guard is what is left.
			return []string{"pitr", "repair", "--from", x.devRestored, "--to", p.name, "--all-differences", "--delete-extra",
				"--allow-unrelated-source", "guard table test", "--unscoped", "guard table test"}
		}},
		{name: "dr failover", args: func(p protectedTarget) []string {
			return append([]string{"dr", "failover", "--table", p.name, "--to", "eu-central-1"}, regions...)
		}},
		{name: "dr failback", args: func(p protectedTarget) []string {
			return append([]string{"dr", "failback", "--table", p.name, "--to", "eu-west-1"}, regions...)
		}},
		{name: "dr drill", args: func(p protectedTarget) []string {
			return append([]string{"dr", "drill", "--table", p.name}, regions...)
		}},
		// export apply writes the incremental exports' changes into --table.
		// The emulator keeps no export records: the exports are taken with
		// --unverified-exports, which a dry run (the control) reads on a
		// protected table; with --yes only the break-glass role may.
		{name: "export apply", control: true, args: func(p protectedTarget) []string {
			return []string{"export", "apply", "--bucket", x.bucket, "--prefix", x.incPrefix, "--table", p.name, "--since", x.incSince,
				"--source-table", x.incTableArn, "--unverified-exports", "guard table test: the emulator keeps no export records"}
		}},
		// export revert writes the window's old images back into --table:
		// an export of that very table (revertPrefix, setup), taken with
		// --unverified-exports, which a dry run (the control) reads on a
		// protected table.
		{name: "export revert", control: true, args: func(p protectedTarget) []string {
			return []string{"export", "revert", "--bucket", x.bucket, "--prefix", revertPrefix(p.name), "--table", p.name,
				"--unverified-exports", "guard table test: the emulator keeps no export records"}
		}},
		// The migration's writing steps decide every destination; the
		// switch steps decide the source (whose writes the fence stops).
		{name: "migrate backfill", writes: true, args: func(p protectedTarget) []string {
			return []string{"migrate", "backfill", "--source", x.devTable, "--routes", mig.routes(t, p.name), "--state", mig.statePath(p.name, "backfill")}
		}, after: func(t *testing.T, p protectedTarget) {
			_, err := os.Stat(mig.statePath(p.name, "backfill"))
			assert.True(t, os.IsNotExist(err), "a refused backfill leaves no state file: %v", err)
		}},
		{name: "migrate catch-up", writes: true, args: func(p protectedTarget) []string {
			return []string{"migrate", "catch-up", "--source", x.devTable, "--routes", mig.routes(t, p.name), "--state", mig.state(t, x.devTable, p.name, "catch-up")}
		}},
		{name: "migrate cutover", control: true, args: func(p protectedTarget) []string {
			return []string{"migrate", "cutover", "--source", p.name, "--routes", mig.routes(t, x.devOther), "--state", mig.state(t, p.name, x.devOther, "cutover")}
		}},
		{name: "migrate rollback", control: true, args: func(p protectedTarget) []string {
			return []string{"migrate", "rollback", "--source", p.name, "--routes", mig.routes(t, x.devOther), "--state", mig.state(t, p.name, x.devOther, "rollback")}
		}},
	}
	queueCmds := []command{
		{name: "dlq move", control: true, args: func(p protectedTarget) []string {
			return []string{"dlq", "move", "--queue", p.url, "--to-queue", x.devDest}
		}},
		{name: "dlq redrive", control: true, args: func(p protectedTarget) []string {
			return []string{"dlq", "redrive", "--queue", p.url, "--to-queue", x.devDest}
		}},
	}
	functionCmds := []command{
		{name: "dlq redrive --function", control: true, args: func(p protectedTarget) []string {
			return []string{"dlq", "redrive", "--queue", x.devDLQ, "--function", p.name}
		}},
	}

	run := func(t *testing.T, c command, p protectedTarget, lambdaDenied bool) {
		inv := invocation{args: c.args(p)}
		if !c.writes {
			inv.args = append(inv.args, "--yes")
		}
		if p.denied && !lambdaDenied {
			inv.endpoint = denyTags.URL
		}
		if strings.HasPrefix(c.name, "dlq redrive") {
			ep := fns.URL
			if lambdaDenied {
				ep = fnsDenied.URL
			}
			inv.args = append(inv.args, "--lambda-endpoint-url", ep)
		}
		want := []string{p.name, "protected"}
		if strings.HasPrefix(c.name, "dr drill") {
			want = append(want, "drill refuses")
		} else {
			want = append(want, "--confirm "+p.name)
		}
		check(t, x, badCase{inv: inv, code: 2, want: want})
		if c.after != nil {
			c.after(t, p)
		}
		// A typed name that does not match is refused too (once per command).
		if p.label == mismatchRow {
			bad := inv
			bad.args = append(append([]string{}, inv.args...), "--confirm", strings.ToLower(p.name)+"-x")
			check(t, x, badCase{inv: bad, code: 2, want: []string{"does not match"}})
		}
		// Without tags a dry run cannot copy the settings either: no control.
		if c.control && !p.denied {
			ok := inv
			ok.args = append(append([]string{}, c.args(p)...), "--confirm", p.name)
			if strings.HasPrefix(c.name, "dlq redrive") {
				ok.args = append(ok.args, inv.args[len(inv.args)-2:]...)
			}
			accepted(t, x, ok)
		}
	}

	for _, c := range tableCmds {
		for _, p := range x.tables {
			t.Run(c.name+"/"+p.label, func(t *testing.T) { run(t, c, p, false) })
		}
	}
	for _, c := range queueCmds {
		for _, p := range x.queues {
			t.Run(c.name+"/"+p.label, func(t *testing.T) { run(t, c, p, false) })
		}
	}
	for _, c := range functionCmds {
		for _, p := range x.functions {
			t.Run(c.name+"/"+p.label, func(t *testing.T) { run(t, c, p, p.denied) })
		}
	}

	// The function named in the DLQ's own record goes through the guard too.
	t.Run("dlq redrive/function named in the message", func(t *testing.T) {
		check(t, x, badCase{inv: invocation{args: []string{"dlq", "redrive", "--queue", x.devFnDLQ, "--yes", "--lambda-endpoint-url", fns.URL}},
			code: 2, want: []string{"function " + x.msgFn + " is protected", "--confirm " + x.msgFn}})
		accepted(t, x, invocation{args: []string{"dlq", "redrive", "--queue", x.devFnDLQ, "--confirm", x.msgFn, "--lambda-endpoint-url", fns.URL}})
	})
	// A protected destination queue.
	for _, c := range []string{"move", "redrive"} {
		t.Run("dlq "+c+"/protected destination queue", func(t *testing.T) {
			args := []string{"dlq", c, "--queue", x.devDLQ, "--to-queue", x.prodDest, "--yes"}
			check(t, x, badCase{inv: invocation{args: args}, code: 2, want: []string{"prod-" + x.id + "-dest is protected"}})
		})
	}

	// Without --to-queue, move sends the messages back to the DLQ's source queues.
	t.Run("dlq move/protected source queue, no --to-queue", func(t *testing.T) {
		check(t, x, badCase{inv: invocation{args: []string{"dlq", "move", "--queue", x.srcDLQ, "--yes"}}, code: 2,
			want: []string{"queue " + x.prodSource + " is protected", "--confirm " + x.prodSource}})
	})

	// export import creates its table: the name and the tags it will get decide.
	t.Run("export import", func(t *testing.T) {
		imp := func(table string, extra ...string) []string {
			return append([]string{"export", "import", "--bucket", x.bucket, "--prefix", x.prefix, "--table", table, "--hash-key", "user_id:S",
				"--unverified-exports", emulatorExports}, extra...)
		}
		for _, tc := range []struct {
			label, table string
			extra        []string
			want         string
		}{
			{"prod- prefix", "prod-" + x.id + "-imported", nil, "is protected"},
			{"env tag prod on an innocuous name", "dev-" + x.id + "-imported", []string{"--tag", "env=prod"}, "tag env=prod"},
			{"env tag PROD upper case", "dev-" + x.id + "-imported", []string{"--tag", "env=PROD"}, "tag env=PROD"},
			{"unknown env tag", "dev-" + x.id + "-imported", []string{"--tag", "env=qa"}, "tag env=qa"},
			// Names outside DDB-NAME-01 are refused before the guard.
			{"PROD- upper case", "PROD-" + x.id + "-imported", nil, "DDB-NAME-01"},
			{"production-", "production-" + x.id + "-imported", nil, "DDB-NAME-01"},
			{"legacy name", "Imported" + x.id, nil, "DDB-NAME-01"},
		} {
			t.Run(tc.label, func(t *testing.T) {
				check(t, x, badCase{inv: invocation{args: append(imp(tc.table, tc.extra...), "--yes")}, code: 2, want: []string{tc.table, tc.want}})
				if tc.want != "DDB-NAME-01" {
					accepted(t, x, invocation{args: append(imp(tc.table, tc.extra...), "--confirm", tc.table)})
				}
			})
		}
	})
}

// migrations writes the routes and state files the guard table's migrate rows
// name: one routes file per destination table (every item of the source to
// it) and, for the steps that need a backfill first, a state file recording
// that migration.
type migrations struct{ dir string }

// routes is a routes file sending every item (key user_id) to dest.
func (m *migrations) routes(t *testing.T, dest string) string {
	path := filepath.Join(m.dir, "routes-"+dest+".yaml")
	require.NoError(t, os.WriteFile(path, m.routesText(dest), 0o600))
	return path
}

func (m *migrations) routesText(dest string) []byte {
	return []byte(fmt.Sprintf("version: 1\nsource_key: [user_id]\nroutes:\n  - table: %s\n    match: { user_id: \"*\" }\n", dest))
}

func (m *migrations) statePath(name, step string) string {
	return filepath.Join(m.dir, step+"-"+name+".json")
}

// state saves the state of a migration of source into dest (the routes file
// routes(dest) writes), as a backfill leaves it.
func (m *migrations) state(t *testing.T, source, dest, step string) string {
	path := m.statePath(source+"-"+dest, step)
	st := migrate.NewState(path, source, migrate.RoutesSum(m.routesText(dest)))
	require.NoError(t, st.Save())
	return path
}
