package runbook

import (
	"bytes"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/test/helpers/drpair"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/migrationexample"
)

// terminal is the built binary running on a pseudo-terminal (stdin,
// stdout and stderr), as a person at a shell runs it.
type terminal struct {
	mu   sync.Mutex
	out  bytes.Buffer
	tty  io.ReadWriteCloser
	done chan struct{} // closed when the reader has read to the end
}

// startTerminal starts cmd on a pseudo-terminal and reads everything it
// prints; the caller closes tm.tty once cmd has ended.
func startTerminal(t *testing.T, p *harness.Proc) *terminal {
	t.Helper()
	tty, err := pty.Start(p.Cmd)
	require.NoError(t, err)
	tm := &terminal{tty: tty, done: make(chan struct{})}
	go tm.read()
	return tm
}

// answer types line and Enter on the terminal.
func (tm *terminal) answer(t *testing.T, line string) {
	t.Helper()
	_, err := tm.tty.Write([]byte(line + "\n"))
	require.NoError(t, err)
}

func (tm *terminal) read() {
	defer close(tm.done)
	buf := make([]byte, 4096)
	for {
		n, err := tm.tty.Read(buf)
		tm.mu.Lock()
		tm.out.Write(buf[:n])
		tm.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// finish waits for the process and then for the terminal's last output
// (the process's final lines can still be in the terminal when it has
// exited: the reader ends once it has read them), bounded, and closes the
// terminal.
func (tm *terminal) finish(p *harness.Proc) {
	_ = p.Cmd.Wait()
	select {
	case <-tm.done:
	case <-time.After(10 * time.Second):
	}
	_ = tm.tty.Close()
}

func (tm *terminal) text() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// waitFor waits until the terminal shows s.
func (tm *terminal) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(tm.text(), s) {
		require.True(t, time.Now().Before(deadline), "the terminal never showed %q:\n%s", s, tm.text())
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRunbookTypedNameOnATerminal_DDB_PROT_01: on a terminal, without
// --confirm, the restore step of pitr-restore on a prod-named,
// env=prod-tagged table asks for the table's name; the right name lets it
// run, a wrong one is refused with nothing restored.
func TestRunbookTypedNameOnATerminal_DDB_PROT_01(t *testing.T) {
	db, table := prodTable(t)
	restored := func() int { return len(restoredTables(t, db, table)) }
	for _, c := range []struct {
		typed    string
		wantCode int
		restores int
	}{
		{typed: table + "x", wantCode: 2, restores: 0}, // mistyped: refused like any bad input (exit 2), nothing was changed
		{typed: table, wantCode: exitcode.Stopped, restores: 1},
	} {
		t.Run("typed "+c.typed, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			cmd := command(t, log, "runbook", "run", "pitr-restore", "--incident", "INC-"+harness.UniqueID(),
				"--param", "table="+table, "--param", "restore_point=--latest", "--param", "damage=", "--yes", "--through", "restore")
			tm := startTerminal(t, cmd)
			tm.waitFor(t, "Type its name to continue: ")
			assert.Contains(t, tm.text(), "is PROTECTED")
			tm.answer(t, c.typed)
			tm.finish(cmd)
			require.Equal(t, c.wantCode, cmd.Cmd.ProcessState.ExitCode(), tm.text())
			assert.Equal(t, c.restores, restored(), "restored tables (read back)")
		})
	}
}

// TestRunbookDLQRedriveTypedNamesOnATerminal_DDB_PROT_01: on a terminal,
// without --confirm, the dlq-redrive runbook on a prod DLQ and a prod
// consumer asks for each protected target's name as its steps reach it (the
// queue and the function), and with both typed it runs to the end: every
// record processed (read back).
func TestRunbookDLQRedriveTypedNamesOnATerminal_DDB_PROT_01(t *testing.T) {
	db, dlq, fn, processed := dlqFixture(t)
	queue := dlq[strings.LastIndex(dlq, "/")+1:]
	typed := runOnTerminal(t, filepath.Join(t.TempDir(), "audit.jsonl"), "dlq-redrive", map[string]string{"queue": dlq, "function": fn})
	for name := range typed {
		assert.Contains(t, []string{queue, fn}, name, "only the runbook's targets are asked for")
	}
	assert.Positive(t, typed[queue], "the queue's name was asked for and typed")
	assert.Positive(t, typed[fn], "the function's name was asked for and typed")
	assert.Equal(t, 4, count(t, db, processed), "the consumer processed every record (read back)")
}

// TestRunbookDecisionAskedOnATerminal_DDB_PITR_02: on a terminal, even with
// --yes, pitr-restore stops after the diff to ask repair or cut over; the
// answer "cutover" ends the run there with nothing repaired.
func TestRunbookDecisionAskedOnATerminal_DDB_PITR_02(t *testing.T) {
	_, table := prodTable(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := command(t, log, "runbook", "run", "pitr-restore", "--incident", "INC-"+harness.UniqueID(),
		"--param", "table="+table, "--param", "restore_point=--latest", "--param", "damage=", "--yes", "--confirm", table)
	tm := startTerminal(t, cmd)
	tm.waitFor(t, "Decision path: choose repair/cutover [repair]: ")
	assert.Contains(t, tm.text(), "result: ", "the diff's counts are shown before the question")
	tm.answer(t, "cutover")
	tm.finish(cmd)
	require.Equal(t, 0, cmd.Cmd.ProcessState.ExitCode(), tm.text())
	assert.Contains(t, tm.text(), "path: decided cutover (typed)")
	assert.Contains(t, tm.text(), "repair: not on this path (path=cutover), skipped")
}

// promptRe finds the questions a runbook run asks on a terminal: a
// protected target's name, a decision, a parameter left out (with its
// default in brackets).
var promptRe = regexp.MustCompile(`Type its name to continue: |(?m)^Decision [^\n]*\]: |(?m)^[a-z_]+ \([^\n]*\) \[[^\n]*\]: `)

// runOnTerminal runs a runbook on a pseudo-terminal with --yes and no
// --confirm, as a person at a shell: every protected target's name is typed
// when asked (the name the prompt declares PROTECTED), every prompt with a
// default (a parameter left out, a decision) is answered with it. It
// requires the run to finish and returns the names typed.
func runOnTerminal(t *testing.T, log, name string, params map[string]string) map[string]int {
	t.Helper()
	return runOnTerminalAs(t, nil, log, name, params)
}

// runOnTerminalAs is runOnTerminal as key's principal (nil: the emulator's
// default credentials).
func runOnTerminalAs(t *testing.T, key *accessKey, log, name string, params map[string]string) map[string]int {
	t.Helper()
	args := []string{"runbook", "run", name, "--incident", "INC-" + harness.UniqueID(), "--yes"}
	for k, v := range params {
		args = append(args, "--param", k+"="+v)
	}
	var as []harness.CommandOption
	if key != nil {
		as = append(as, harness.Env(key.env()...))
	}
	cmd := commandWith(t, log, args, as...)
	tm := startTerminal(t, cmd)
	exited := make(chan struct{})
	go func() { _ = cmd.Cmd.Wait(); close(exited) }()
	typed := map[string]int{}
	pos := 0 // the terminal's text up to pos is answered
	deadline := time.After(3 * time.Minute)
	for done := false; !done; {
		select {
		case <-exited:
			done = true
		case <-deadline:
			_ = cmd.Cmd.Process.Kill()
			t.Fatalf("runbook %s did not finish on the terminal:\n%s", name, tm.text())
		case <-time.After(50 * time.Millisecond):
			text := tm.text()
			m := promptRe.FindStringIndex(text[pos:])
			if m == nil {
				continue
			}
			prompt := text[pos+m[0] : pos+m[1]]
			answer := ""
			if strings.HasPrefix(prompt, "Type its name") {
				last := text[:strings.LastIndex(text[:pos+m[0]], " is PROTECTED")]
				answer = last[strings.LastIndex(last, " ")+1:]
				typed[answer]++
			}
			tm.answer(t, answer)
			pos += m[1]
		}
	}
	require.Equal(t, 0, cmd.Cmd.ProcessState.ExitCode(), tm.text())
	// The process has ended; its last lines may still be on their way
	// through the terminal.
	for end := time.Now().Add(10 * time.Second); !strings.Contains(tm.text(), "Runbook "+name+" complete") && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	_ = tm.tty.Close()
	require.Contains(t, tm.text(), "Runbook "+name+" complete", tm.text())
	return typed
}

// TestEveryRunbookOnATerminal_DDB_PROT_01: the runbooks that change
// protected targets run to the end on a terminal, their targets' names
// typed when asked (pitr-restore and dlq-redrive have tests of their own).
func TestEveryRunbookOnATerminal_DDB_PROT_01(t *testing.T) {
	t.Run("dr-failover", func(t *testing.T) {
		p := drpair.New(t, target, drpair.Options{Prod: true})
		p.PublishLatency(t, drpair.Home, drpair.Away, 250, 750)
		typed := runOnTerminal(t, filepath.Join(t.TempDir(), "audit.jsonl"), "dr-failover", map[string]string{"table": p.Table, "to": drpair.Away,
			"dr_flags": "--regions " + drpair.Home + "," + drpair.Away + " --allow-unreplicated"})
		assert.Positive(t, typed[p.Table], "the table's name was typed")
		assert.Equal(t, drpair.Away, p.Pointer(t, drpair.Home), "the pointer moved (read back)")
	})
	t.Run("export-and-cross-region-restore", func(t *testing.T) {
		table, bucket, db := exportFixture(t, 10)
		dr := drDB(t)
		t.Cleanup(func() { dropTable(dr, table) })
		who, trust := exportTrust(t)
		typed := runOnTerminalAs(t, who, filepath.Join(t.TempDir(), "audit.jsonl"), "export-and-cross-region-restore", map[string]string{"table": table, "bucket": bucket,
			"prefix": "exports/" + table, "source_region": target.Region, "dr_region": drRegion, "schema": "--schema-from " + table,
			"verify_flags": "--data-only", "trust": trust, "accepted_failing_errors": "99"})
		assert.Positive(t, typed[table], "the table's name was typed")
		assert.Equal(t, count(t, db, table), count(t, dr, table), "the DR table holds every item (read back)")
	})
	t.Run("dr-restore-in-region", func(t *testing.T) {
		table, bucket, db := exportFixture(t, 10)
		dr := drDB(t)
		t.Cleanup(func() { dropTable(dr, table) })
		log := filepath.Join(t.TempDir(), "audit.jsonl")
		prefix := "exports/" + table + "/nightly"
		_, errOut, code := target.Dynops(t, log, "export", "full", "--table", table, "--bucket", bucket, "--prefix", prefix, "--wait")
		require.Equal(t, 0, code, errOut)
		who, trust := exportTrust(t)
		typed := runOnTerminalAs(t, who, log, "dr-restore-in-region", map[string]string{"table": table, "bucket": bucket, "prefix": prefix,
			"source_region": target.Region, "region": drRegion, "schema": "--hash-key user_id:S", "tags": "--tag env=prod --tag product=t",
			"trust": trust, "accepted_failing_errors": "99"})
		assert.Positive(t, typed[table], "the table's name was typed")
		assert.Equal(t, count(t, db, table), count(t, dr, table), "the restored table holds every item (read back)")
	})
}

// TestMigrationRunbookOnATerminal_DDB_PROT_01: the migration runbook on a
// terminal asks each protected destination's name as the backfill reaches
// it and the source's at the cutover, and runs to the end.
func TestMigrationRunbookOnATerminal_DDB_PROT_01(t *testing.T) {
	_, src, dests := migrationFixture(t)
	typed := runOnTerminal(t, filepath.Join(t.TempDir(), "audit.jsonl"), "single-to-multi-table-migration", map[string]string{
		"source": src, "routes": migrationexample.RoutesFile(), "destinations": strings.Join(dests, ","), "unmatched": "--allow-unmatched"})
	assert.Positive(t, typed[src], "the source's name was typed (cutover)")
	for _, d := range dests {
		assert.Positive(t, typed[d], "%s's name was typed", d)
	}
}
