package export

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/test/helpers/faults"
	fx "github.com/dynops/dynops/test/helpers/fixture"
)

// windowed puts u-1 and u-2 as a bad window left them (role admin) and
// uploads the window's export, whose old images have role user; with
// versioned, every image carries ver (1 before, 2 after the window).
func windowed(t *testing.T, fxt fixture, prefix string, versioned bool) {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var recs []exporttest.Record
	for i, id := range []string{"u-1", "u-2"} {
		before := map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: id}, "role": &types.AttributeValueMemberS{Value: "user"}}
		if versioned {
			before["ver"] = &types.AttributeValueMemberN{Value: "1"}
		}
		after := with(before, "role", "admin")
		if versioned {
			after["ver"] = &types.AttributeValueMemberN{Value: "2"}
		}
		fx.Put(t, fxt.db, fxt.table, []map[string]types.AttributeValue{after})
		recs = append(recs, exporttest.Record{Keys: exporttest.Image(t, map[string]types.AttributeValue{"user_id": before["user_id"]}),
			Old: exporttest.Image(t, before), New: exporttest.Image(t, after), Micros: t0.UnixMicro() + int64(i) + 1})
	}
	root := t.TempDir()
	_, err := exporttest.Write(root, fxt.spec(exporttest.Spec{Prefix: prefix, ExportID: "01772326800000-c0000001", Incremental: true,
		From: t0, To: t0.Add(time.Hour), Records: [][]exporttest.Record{recs}}))
	require.NoError(t, err)
	upload(t, fxt, root)
}

// otherWriterVia is a proxy in front of the emulator whose first PutItem is
// preceded by another writer's update (set, over :x and :one) of u-1.
func otherWriterVia(t *testing.T, fxt fixture, set string, values map[string]types.AttributeValue) string {
	t.Helper()
	if !target.OnEmulator() {
		t.Skip("emulator only: the other writer acts from a proxy in front of the emulator")
	}
	p, err := faults.Interleave(target.Emulator.URL, "PutItem", func() {
		if _, err := fxt.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: &fxt.table, UpdateExpression: aws.String(set),
			Key: map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "u-1"}}, ExpressionAttributeValues: values}); err != nil {
			t.Errorf("the other writer: %v", err)
		}
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p.URL
}

func userItem(t *testing.T, fxt fixture, id string) map[string]types.AttributeValue {
	t.Helper()
	return fx.Get(t, fxt.db, fxt.table, map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: id}})
}

// TestRevertOverAnAttributeAddedSinceTheRead (issue 44): the revert's
// condition names only the attributes it read, so an attribute the
// application adds between the revert's read and its put is not covered.
// The put asks for the item it replaced, and the key is listed as a
// conflict naming the attribute: exit 1, in the JSON and the audit.
func TestRevertOverAnAttributeAddedSinceTheRead(t *testing.T) {
	fxt := newFixture(t, 0)
	windowed(t, fxt, "incident/INC-30", false)
	via := otherWriterVia(t, fxt, "SET x = :x", map[string]types.AttributeValue{":x": &types.AttributeValueMemberS{Value: "added by the app"}})
	args := append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", "incident/INC-30", "--table", fxt.table, "--workers", "1", "--yes", "-o", "json"}, unverified...)
	out, errOut, code := target.DynopsVia(t, via, fxt.audit, args...)
	require.Equal(t, 1, code, "a write over a change since the read is a conflict: exit 1\n%s", errOut)
	var rep struct { // the JSON document's fields
		Restores         int64 `json:"restores"`
		ChangedSinceRead int64 `json:"changed_since_read"`
		ConflictKeys     []struct {
			Key              json.RawMessage `json:"key"`
			ChangedSinceRead []string        `json:"changed_since_read"`
		} `json:"conflict_keys"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, int64(2), rep.Restores, "both keys were reverted")
	assert.Equal(t, int64(1), rep.ChangedSinceRead)
	require.Len(t, rep.ConflictKeys, 1)
	assert.Contains(t, string(rep.ConflictKeys[0].Key), "u-1")
	assert.Equal(t, []string{"x"}, rep.ConflictKeys[0].ChangedSinceRead, "the attribute the put replaced is named")
	assert.Equal(t, int64(1), lastRecord(t, fxt.audit).Counts["changed_since_read"], "and audited")
}

// TestRevertWithAVersionAttribute (issue 44): with --version-attribute the
// revert's write is conditional on the version the application increments:
// a write in between makes u-1 a conflict, left alone with the
// application's change; u-2 is reverted with the next version, and a re-run
// finds it reverted (the version left out) and writes nothing.
func TestRevertWithAVersionAttribute(t *testing.T) {
	fxt := newFixture(t, 0)
	windowed(t, fxt, "incident/INC-31", true)
	via := otherWriterVia(t, fxt, "SET x = :x, ver = ver + :one", map[string]types.AttributeValue{
		":x": &types.AttributeValueMemberS{Value: "added by the app"}, ":one": &types.AttributeValueMemberN{Value: "1"}})
	args := append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", "incident/INC-31", "--table", fxt.table,
		"--version-attribute", "ver", "--workers", "1", "--yes", "-o", "json"}, unverified...)
	out, errOut, code := target.DynopsVia(t, via, fxt.audit, args...)
	require.Equal(t, 1, code, errOut)
	var rep export.RevertReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, int64(1), rep.Conflicts, "u-1 changed while reverting: left alone")
	assert.Equal(t, int64(1), rep.Restores, "u-2 reverted")
	u1, u2 := userItem(t, fxt, "u-1"), userItem(t, fxt, "u-2")
	assert.Equal(t, &types.AttributeValueMemberS{Value: "added by the app"}, u1["x"], "the application's write is kept")
	assert.Equal(t, &types.AttributeValueMemberN{Value: "3"}, u1["ver"])
	assert.Equal(t, &types.AttributeValueMemberS{Value: "user"}, u2["role"], "reverted")
	assert.Equal(t, &types.AttributeValueMemberN{Value: "3"}, u2["ver"], "with the next version")

	out, errOut, code = fxt.dynops(t, args...)
	assert.Equal(t, 1, code, "u-1 is still a conflict\n%s", errOut)
	var again export.RevertReport
	require.NoError(t, json.Unmarshal([]byte(out), &again), out)
	assert.Equal(t, int64(1), again.AlreadyReverted, "u-2 is found reverted")
	assert.Zero(t, again.Restores+again.Deletes, "and nothing is written")
	assert.Equal(t, u2, userItem(t, fxt, "u-2"))
}
