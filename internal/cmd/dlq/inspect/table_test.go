package inspect

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/redrive"
)

// TestPrintTable: each message's row says how long its records have left
// (or how long ago they left the stream), the function's response and the
// state, critical ones in capitals; a malformed message gets its problem in
// place of the batch, and its body is never printed as a record's; the last
// line counts the states and says nothing was consumed (DDB-STREAM-05: the
// on-call engineer sees what a redrive can still save).
func TestPrintTable(t *testing.T) {
	dur := func(d time.Duration) *time.Duration { return &d }
	last := time.Date(2026, 11, 22, 10, 30, 0, 0, time.FixedZone("CET", 3600))
	batch := func(left time.Duration) redrive.Batch {
		return redrive.Batch{Table: "dev-hoge-user", Shard: "shardId-1", Start: "100", End: "200", BatchSize: 7,
			Condition: "RetryAttemptsExhausted", Function: "dev-hoge-consumer", RequestID: "req-1", InvokeCount: 3,
			StatusCode: 200, ExecutedVersion: "$LATEST", Version: "1.0", TimeLeft: dur(left), LastArrival: &last}
	}
	withError := batch(20 * time.Hour)
	withError.FunctionError = "Unhandled"
	rep := Report{Queue: "Q", Counts: map[string]int{redrive.StateOK: 2, redrive.StateCritical: 1, redrive.StateLost: 1, redrive.StateMalformed: 1},
		Messages: []redrive.Entry{
			{MessageID: "m-ok", State: redrive.StateOK, Batch: batch(20*time.Hour + 10*time.Minute), Body: "{ok body}"},
			{MessageID: "m-err", State: redrive.StateOK, Batch: withError},
			{MessageID: "m-crit", State: redrive.StateCritical, Batch: batch(50 * time.Minute)},
			{MessageID: "m-lost", State: redrive.StateLost, Batch: batch(-5 * time.Hour)},
			{MessageID: "m-bad", State: redrive.StateMalformed, Problem: "not an on-failure record", Body: "garbage"},
		}}
	ios, _, out, _ := iostreams.Test()
	require.NoError(t, printTable(ios, rep))
	rows := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}
	for id, want := range map[string][]string{
		"m-ok":   {"dev-hoge-user", "shardId-1", "100..200", " 7 ", "RetryAttemptsExhausted", "dev-hoge-consumer", "req-1", " 3 ", "200 $LATEST ", "1.0", "2026-11-22T09:30:00Z / 20h10m0s", " ok"},
		"m-err":  {"200 $LATEST Unhandled", "/ 20h0m0s", " ok"},
		"m-crit": {"/ 50m0s", "CRITICAL"},
		"m-lost": {"/ gone 5h0m0s ago", " lost"},
		"m-bad":  {"malformed: not an on-failure record"},
	} {
		require.Contains(t, rows, id, "a row for %s:\n%s", id, out.String())
		for _, w := range want {
			assert.Contains(t, rows[id], w, "row of %s", id)
		}
	}
	assert.NotContains(t, rows["m-bad"], "dev-hoge", "a malformed message has no batch")
	assert.Contains(t, out.String(), "\nbodies:\n  m-ok: {ok body}\n", "bodies of readable messages are listed")
	assert.NotContains(t, out.String(), "m-bad: garbage", "a malformed body is its problem, not a record's body")
	assert.True(t, strings.HasSuffix(out.String(), "\n5 message(s) in Q: 2 ok, 1 critical, 1 lost, 1 malformed; nothing was consumed\n"), out.String())
}

// TestPrintTableWithoutBodies: no bodies section when no message has one,
// a batch without its last arrival shows "-", and one with no time left
// at all is gone.
func TestPrintTableWithoutBodies(t *testing.T) {
	left, none := 3*time.Hour, time.Duration(0)
	ios, _, out, _ := iostreams.Test()
	require.NoError(t, printTable(ios, Report{Queue: "Q", Counts: map[string]int{redrive.StateOK: 1, redrive.StateLost: 1},
		Messages: []redrive.Entry{
			{MessageID: "m1", State: redrive.StateOK, Batch: redrive.Batch{TimeLeft: &left}},
			{MessageID: "m2", State: redrive.StateLost, Batch: redrive.Batch{TimeLeft: &none}},
		}}))
	assert.NotContains(t, out.String(), "bodies:")
	assert.Contains(t, out.String(), "- / 3h0m0s")
	assert.Contains(t, out.String(), "- / gone 0s ago", "no time left is gone, not 0s left")
}

// TestShowBothForms: one report in both forms, the table with its header and
// the JSON document with the queue, each message and the counts.
func TestShowBothForms(t *testing.T) {
	left := 3 * time.Hour
	rep := Report{Queue: "Q", Counts: map[string]int{redrive.StateOK: 1},
		Messages: []redrive.Entry{{MessageID: "m1", State: redrive.StateOK, Batch: redrive.Batch{Table: "dev-hoge-user", TimeLeft: &left}}}}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error { return show(f, rep) })
	assert.Contains(t, human, "MESSAGE")
	assert.Contains(t, human, "1 message(s) in Q")
	msgs, _ := doc["messages"].([]any)
	require.Len(t, msgs, 1, "JSON: %v", doc)
	assert.Equal(t, "m1", msgs[0].(map[string]any)["message_id"], "JSON: %v", doc)
	assert.Equal(t, "Q", doc["queue"])
	assert.Equal(t, map[string]any{"ok": 1.0}, doc["counts"])
}
