package runbook

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// terminal is the built binary running on a pseudo-terminal (stdin,
// stdout and stderr), as a person at a shell runs it.
type terminal struct {
	mu  sync.Mutex
	out bytes.Buffer
	tty io.ReadWriteCloser
}

func (tm *terminal) read() {
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
	restored := func() int {
		n := 0
		for _, name := range fixture.TableNames(t, db) {
			if strings.HasPrefix(name, table+"-restored-") {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		typed    string
		wantCode int
		restores int
	}{
		{typed: table + "x", wantCode: 1, restores: 0}, // not confirmed: nothing was changed
		{typed: table, wantCode: exitcode.Stopped, restores: 1},
	} {
		t.Run("typed "+c.typed, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			cmd := command(t, log, "runbook", "run", "pitr-restore", "--incident", "INC-"+harness.UniqueID(),
				"--param", "table="+table, "--param", "restore_point=--latest", "--yes", "--until", "restore")
			tty, err := pty.Start(cmd)
			require.NoError(t, err)
			tm := &terminal{tty: tty}
			go tm.read()
			tm.waitFor(t, "Type its name to continue: ")
			assert.Contains(t, tm.text(), "is PROTECTED")
			_, err = tty.Write([]byte(c.typed + "\n"))
			require.NoError(t, err)
			_ = cmd.Wait()
			_ = tty.Close()
			require.Equal(t, c.wantCode, cmd.ProcessState.ExitCode(), tm.text())
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
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := command(t, log, "runbook", "run", "dlq-redrive", "--incident", "INC-"+harness.UniqueID(),
		"--param", "queue="+dlq, "--param", "function="+fn, "--yes")
	tty, err := pty.Start(cmd)
	require.NoError(t, err)
	tm := &terminal{tty: tty}
	go tm.read()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	typed := map[string]int{}
	for prompts := 0; ; {
		select {
		case <-exited:
		case <-time.After(50 * time.Millisecond):
			text := tm.text()
			if n := strings.Count(text, "Type its name to continue: "); n > prompts {
				// The name is the one the last prompt declares PROTECTED.
				last := text[:strings.LastIndex(text, " is PROTECTED")]
				name := last[strings.LastIndex(last, " ")+1:]
				require.Contains(t, []string{queue, fn}, name, "only the runbook's targets are asked for:\n%s", text)
				typed[name]++
				_, err := tty.Write([]byte(name + "\n"))
				require.NoError(t, err)
				prompts = n
			}
			continue
		}
		break
	}
	_ = tty.Close()
	require.Equal(t, 0, cmd.ProcessState.ExitCode(), tm.text())
	assert.Contains(t, tm.text(), "Runbook dlq-redrive complete")
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
		"--param", "table="+table, "--param", "restore_point=--latest", "--yes", "--confirm", table)
	tty, err := pty.Start(cmd)
	require.NoError(t, err)
	tm := &terminal{tty: tty}
	go tm.read()
	tm.waitFor(t, "Decision path: choose repair/cutover [repair]: ")
	assert.Contains(t, tm.text(), "result: ", "the diff's counts are shown before the question")
	_, err = tty.Write([]byte("cutover\n"))
	require.NoError(t, err)
	_ = cmd.Wait()
	_ = tty.Close()
	require.Equal(t, 0, cmd.ProcessState.ExitCode(), tm.text())
	assert.Contains(t, tm.text(), "path: decided cutover (typed)")
	assert.Contains(t, tm.text(), "repair: not on this path (path=cutover), skipped")
}
