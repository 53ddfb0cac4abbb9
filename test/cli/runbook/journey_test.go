package runbook

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// writer keeps writing new good items to a table (writer_00000, ...) until
// stopped, at most max of them: the application that goes on through the
// restore, the repair and the verify.
type writer struct {
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	mu       sync.Mutex
	keys     []string
	at       []time.Time // when each key's put was acknowledged
	errs     int
}

func startWriter(t *testing.T, db *dynamodb.Client, table string, max int) *writer {
	return startWriterKeyed(t, db, table, "user_id", max)
}

// startWriterKeyed is startWriter for a table whose hash key is key.
func startWriterKeyed(t *testing.T, db *dynamodb.Client, table, key string, max int) *writer {
	return startWriterItems(t, db, table, max, nil, func(id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{
			key:      &types.AttributeValueMemberS{Value: id},
			"status": &types.AttributeValueMemberS{Value: "signed-up"},
		}
	})
}

// startWriterItems is startWriter with the items item builds from each id;
// refused, when set, is asked before each put and a true answer counts the
// put as refused without sending it (a fence the emulator stores but does
// not enforce, enforced as AWS does). The writer stops when the test ends,
// if halt has not stopped it before.
func startWriterItems(t *testing.T, db *dynamodb.Client, table string, max int, refused func() bool, item func(id string) map[string]types.AttributeValue) *writer {
	return runWriter(t, max, func(id string) error {
		if refused != nil && refused() {
			return errRefused
		}
		_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &table, Item: item(id)})
		return err
	})
}

// errRefused is a put a writer did not send: AWS would refuse it (a fence
// the emulator stores but does not enforce).
var errRefused = errors.New("refused: the table is fenced")

// runWriter puts writer_00000, ... with put every 50 ms until stopped, at
// most max of them, and records each acknowledged key (put returned nil)
// and when; any error counts in errs. It stops when the test ends, if halt
// has not stopped it before.
func runWriter(t *testing.T, max int, put func(id string) error) *writer {
	w := &writer{stop: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() { w.halt() })
	go func() {
		defer close(w.done)
		for i := 0; i < max; i++ {
			select {
			case <-w.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			id := fmt.Sprintf("writer_%05d", i)
			err := put(id)
			w.mu.Lock()
			if err != nil {
				w.errs++
			} else {
				w.keys = append(w.keys, id)
				w.at = append(w.at, time.Now())
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *writer) halt() []string {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.keys...)
}

// ackedBefore are the keys whose put was acknowledged before t.
func (w *writer) ackedBefore(t time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for i, at := range w.at {
		if at.Before(t) {
			out = append(out, w.keys[i])
		}
	}
	return out
}

// killWhen starts cmd (the built binary) and SIGKILLs it once ready says
// so (asked every 5 ms); the test fails when the command ends first or
// nothing is ready within 2 minutes (what names what was awaited).
func killWhen(t *testing.T, p *harness.Proc, what string, ready func() bool) {
	t.Helper()
	p.Start()
	deadline := time.Now().Add(2 * time.Minute)
	for !ready() {
		select {
		case <-p.Done():
			t.Fatalf("the command ended (%v) before %s:\n%s", p.Cmd.ProcessState, what, p.Stderr())
		case <-time.After(5 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "not %s after 2 minutes", what)
	}
	require.NoError(t, p.Signal(syscall.SIGKILL))
	<-p.Done()
}

// nextSecond sleeps into the next whole second and a little more: stream
// record times are rounded down to the second, so the phases of the
// journey land in seconds of their own.
func nextSecond() time.Time {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(1100 * time.Millisecond).Sub(now))
	return time.Now().UTC()
}

func setStatus(t *testing.T, db *dynamodb.Client, table string, i int, status string) map[string]types.AttributeValue {
	t.Helper()
	it := fixture.Users(i + 1)[i]
	it["status"] = &types.AttributeValueMemberS{Value: status}
	fixture.Put(t, db, table, []map[string]types.AttributeValue{it})
	return it
}

// TestRunbookPitrRestoreKeepsGoodWrites_DDB_PITR_02 is the on-call journey
// on a table that keeps taking good writes (issue 43, finding 1): a writer
// writes new items through the restore, the repair and the verify; in the
// damage window 5 items are corrupted and 3 deleted; after it the
// application adds 4 items, updates 2 items the damage never touched, and
// writes one damaged item again. The runbook, scoped to the damage window
// by the table's stream, exits 0: the damaged and deleted items are back,
// the 2 updates, the 4 new items and every writer item are kept, the
// damaged item written again after the window is left alone and listed as
// a conflict, and the timeline shows every step.
func TestRunbookPitrRestoreKeepsGoodWrites_DDB_PITR_02(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := "prod-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "user_id", PITR: true, Stream: true, Tags: map[string]string{"env": "prod"}})
	const users = 30
	orig := fixture.Users(users)
	fixture.Put(t, db, table, orig)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	dropRestoredWhenDone(t, db, table)
	w := startWriter(t, db, table, 4000)
	base := []string{"runbook", "run", "pitr-restore", "--incident", incident, "--param", "table=" + table, "--yes", "--confirm", table}

	// 1. Up to the restore (the emulator restores the current items).
	_, errOut, code := target.Dynops(t, log, append(base, "--through", "restore")...)
	require.Equal(t, exitcode.Stopped, code, errOut)

	// 2. The damage window: users 1-5 corrupted, 6-8 deleted.
	since := nextSecond()
	for i := 1; i <= 5; i++ {
		setStatus(t, db, table, i, "corrupted")
	}
	fixture.Delete(t, db, table, []map[string]types.AttributeValue{fixture.UserKey(6), fixture.UserKey(7), fixture.UserKey(8)})
	until := nextSecond()

	// 3. After it: 4 new items, 2 legitimate updates of untouched items
	// (users 9 and 10), and the application writes damaged user 1 again.
	nextSecond()
	var fresh []map[string]types.AttributeValue
	for i := range 4 {
		fresh = append(fresh, map[string]types.AttributeValue{
			"user_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("new_%05d", i)},
			"status":  &types.AttributeValueMemberS{Value: "active"},
		})
	}
	fixture.Put(t, db, table, fresh)
	upgraded := []map[string]types.AttributeValue{setStatus(t, db, table, 9, "upgraded"), setStatus(t, db, table, 10, "upgraded")}
	rewritten := setStatus(t, db, table, 1, "fixed-by-hand")

	// 4. The rest of the runbook, scoped to the window by the stream.
	damage := fmt.Sprintf("damage=--damage-since %s --damage-until %s --damage-stream", since.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano))
	_, errOut, code = target.Dynops(t, log, append(base, "--param", damage, "--decide", "path=repair")...)
	t.Log(errOut)
	require.Equal(t, 0, code, "the runbook finishes in its usual case:\n"+errOut)
	written := w.halt()
	require.NotEmpty(t, written, "the writer wrote through the journey")

	// The damage is undone.
	for i := 2; i <= 8; i++ {
		assert.Equal(t, orig[i], fixture.Get(t, db, table, fixture.UserKey(i)), "user %d is as before the damage", i)
	}
	// The good writes are kept.
	assert.Equal(t, rewritten, fixture.Get(t, db, table, fixture.UserKey(1)), "user 1, written again after the window, is left alone")
	assert.Equal(t, upgraded[0], fixture.Get(t, db, table, fixture.UserKey(9)), "the legitimate update of user 9 is kept")
	assert.Equal(t, upgraded[1], fixture.Get(t, db, table, fixture.UserKey(10)), "the legitimate update of user 10 is kept")
	for _, it := range fresh {
		assert.Equal(t, it, fixture.Get(t, db, table, map[string]types.AttributeValue{"user_id": it["user_id"]}), "the new item is kept")
	}
	for _, id := range written {
		assert.NotNil(t, fixture.Get(t, db, table, map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: id}}), "writer item %s is kept", id)
	}
	for i := 11; i < users; i++ {
		assert.Equal(t, orig[i], fixture.Get(t, db, table, fixture.UserKey(i)), "untouched user %d", i)
	}

	// The plan said it plainly, and the conflict is listed in the record.
	assert.Regexp(t, `scope \(5\. Compare\)\n.*\n.*\n\s+result: dry_run=true, copy_back=7, may_be_good_writes=0, left_alone=3, conflicts=1[,\n]`, errOut, "the scoped plan's counts are shown before the decision")
	m := regexp.MustCompile(`output record = (\S+)`).FindStringSubmatch(errOut)
	require.NotNil(t, m, "the repair step hands its record on")
	outcomes := readOutcomes(t, m[1])
	assert.Equal(t, "conflict", outcomes[`{"user_id":{"S":"user_00001"}}`], "user 1 is a conflict")
	assert.Equal(t, "out_of_scope", outcomes[`{"user_id":{"S":"user_00009"}}`])
	assert.Equal(t, "out_of_scope", outcomes[`{"user_id":{"S":"user_00010"}}`])
	for i := 2; i <= 8; i++ {
		assert.Equal(t, "copied", outcomes[fmt.Sprintf(`{"user_id":{"S":"user_%05d"}}`, i)], "user %d", i)
	}
	assert.Equal(t, "kept_extra", outcomes[`{"user_id":{"S":"new_00000"}}`])
	assert.Contains(t, errOut, "check .promise_holds == true: ok")

	// The timeline: every step once; the plan a dry run, the repair's
	// conflict a finding, the verify ok.
	md, _, code := target.Dynops(t, log, "audit", "timeline", "--incident", incident, "--format", "markdown")
	require.Equal(t, 0, code)
	assert.Equal(t, []string{
		"- pitr-restore / status: ok",
		"- pitr-restore / restore: ok",
		"- pitr-restore / diff: ok",
		"- pitr-restore / scope: dry-run",
		"- pitr-restore / repair: findings",
		"- pitr-restore / verify: ok",
	}, stepsSection(md), md)
	assert.Regexp(t, `pitr-restore / repair\].*conflicts 1, copied 7, .*left_out_of_scope 2`, md, "the repair's counts are in the timeline")
	assert.Regexp(t, `pitr-restore / verify\].*broken 0`, md)
}

// readOutcomes reads a repair record: each key's outcome.
func readOutcomes(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Key     json.RawMessage `json:"key"`
			Outcome string          `json:"outcome"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		if l.Key != nil {
			out[string(l.Key)] = l.Outcome
		}
	}
	require.NoError(t, sc.Err())
	return out
}
