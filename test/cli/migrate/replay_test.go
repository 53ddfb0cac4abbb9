package migrate_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/migrate"
)

// A change never overwrites a newer one: a catch-up replayed from an older
// checkpoint (its state restored from before two passes) skips every change
// the destinations already hold, and the key changed twice keeps its last value.
func TestCatchUpReplayNeverOverwritesNewer(t *testing.T) {
	ctx := context.Background()
	d := setup(t, true)
	state, auditLog := migrateSmall(t, d, 120)
	catchUp := func() migrate.PassResult {
		out, _, code := target.Dynops(t, auditLog, "migrate", "catch-up", "--source", source, "--routes", routesFile(), "--state", state, "--allow-unmatched", "-o", "json")
		require.Equal(t, 0, code, out)
		var p migrate.PassResult
		require.NoError(t, json.Unmarshal([]byte(out), &p))
		return p
	}
	p := catchUp() // nothing yet: the load was written before the stream was enabled
	assert.Zero(t, p.Put)
	before := readState(t, state)
	recs, err := audit.Read(auditLog)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	// The backfill's run: its `finished` record holds the actions (its
	// `started` record holds the plan).
	var acts []audit.Action
	for _, r := range recs {
		if r.Event == audit.EventFinished && len(r.Actions) > 0 {
			acts = r.Actions
			break
		}
	}
	require.NotEmpty(t, acts, "the backfill's finished record lists its actions")
	// The protection decisions of the destinations come first (before any
	// write); then the position, recorded before the first read.
	for len(acts) > 0 && acts[0].What == "protection" {
		acts = acts[1:]
	}
	require.NotEmpty(t, acts, "the backfill acted after its protection decisions")
	assert.Equal(t, "record-stream-position", acts[0].What, "the position is recorded (and audited) before the first read")

	key := map[string]types.AttributeValue{"PK": s("TENANT#t7"), "SK": s("TASK#k7")}
	update := func(v string) {
		_, err := d.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(source), Key: key,
			UpdateExpression: aws.String("SET title = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": s(v)}})
		require.NoError(t, err)
	}
	update("first")
	p = catchUp()
	assert.EqualValues(t, 1, p.Put)
	update("second")
	p = catchUp()
	assert.EqualValues(t, 1, p.Put)

	// Replay from the older checkpoint: both records again.
	before.CatchUp.Applied = 0
	require.NoError(t, migrate.NewState(state, before.Source, before.RoutesSum).Update(func(st *migrate.State) {
		st.Position, st.Backfill, st.CatchUp = before.Position, before.Backfill, before.CatchUp
	}))
	p = catchUp()
	assert.EqualValues(t, 0, p.Put, "nothing older is written over newer")
	assert.EqualValues(t, 1, p.Stale)
	got, err := d.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("dev-aiagent-tasks"), Key: key})
	require.NoError(t, err)
	assert.Equal(t, "second", got.Item["title"].(*types.AttributeValueMemberS).Value)

	out, _, code := target.Dynops(t, auditLog, "migrate", "verify", "--source", source, "--routes", routesFile(), "--state", state)
	assert.Equal(t, 0, code, out)

	// A destination holding a newer change than the stream's next record (as
	// a second, faster catch-up process would leave it) keeps it.
	_, err = d.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("dev-aiagent-tasks"), Key: key,
		UpdateExpression:          aws.String("SET title = :v, #s = :s"),
		ExpressionAttributeNames:  map[string]string{"#s": "dynops_migrate_seq"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("newer"), ":s": s("9999999999999999999999999999999999999999")}})
	require.NoError(t, err)
	update("third")
	p = catchUp()
	assert.EqualValues(t, 0, p.Put)
	assert.EqualValues(t, 1, p.Stale)
	got, err = d.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("dev-aiagent-tasks"), Key: key})
	require.NoError(t, err)
	assert.Equal(t, "newer", got.Item["title"].(*types.AttributeValueMemberS).Value)
	out, _, code = target.Dynops(t, auditLog, "migrate", "verify", "--source", source, "--routes", routesFile(), "--state", state)
	assert.Equal(t, 1, code, "verify sees the destination differs from the source: %s", out)
}
