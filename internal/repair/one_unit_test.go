package repair

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/internal/testctx"
)

// itemDB is GetItem, PutItem and DeleteItem over in-memory tables (key
// "id"), for the conditional repair's decisions; it does not evaluate
// conditions: putErr and delErr stand for what DynamoDB answers. Asked for
// ALL_OLD, a write returns the item it replaced, as DynamoDB does.
type itemDB struct {
	*modelDB
	mu             sync.Mutex
	tables         map[string]map[string]map[string]types.AttributeValue
	putErr, delErr error
}

func (d *itemDB) id(key map[string]types.AttributeValue) string {
	return key["id"].(*types.AttributeValueMemberS).Value
}

func (d *itemDB) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return &dynamodb.GetItemOutput{Item: d.tables[aws.ToString(in.TableName)][d.id(in.Key)]}, nil
}

func (d *itemDB) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if d.putErr != nil {
		return nil, d.putErr
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.tables[aws.ToString(in.TableName)]
	out := &dynamodb.PutItemOutput{}
	if in.ReturnValues == types.ReturnValueAllOld {
		out.Attributes = t[d.id(in.Item)] // the item replaced, as DynamoDB returns it
	}
	t[d.id(in.Item)] = in.Item
	return out, nil
}

func (d *itemDB) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if d.delErr != nil {
		return nil, d.delErr
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.tables[aws.ToString(in.TableName)]
	out := &dynamodb.DeleteItemOutput{}
	if in.ReturnValues == types.ReturnValueAllOld {
		out.Attributes = t[d.id(in.Key)]
	}
	delete(t, d.id(in.Key))
	return out, nil
}

// TestConditionalRunDecisions: per key, the conditional repair copies,
// deletes, counts a key gone from the source, or leaves it as a conflict
// (the source changed since the diff, or the write's condition failed);
// any other write error stops the repair.
func TestConditionalRunDecisions(t *testing.T) {
	item := func(id, v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}, "v": &types.AttributeValueMemberS{Value: v}}
	}
	rec := func(kind tablediff.Kind, id, srcSum, dstSum string) tablediff.KeyRecord {
		k, _ := tablediff.EncodeKey(item(id, ""), []string{"id"})
		return tablediff.KeyRecord{Kind: kind, Key: k, SourceSum: srcSum, TargetSum: dstSum}
	}
	sum := func(it map[string]types.AttributeValue) string { return tablediff.Checksum(it, nil) }
	keys := writeKeys(t, "from", "to", []tablediff.KeyRecord{
		rec(tablediff.OnlyInSource, "copy", sum(item("copy", "1")), ""),
		rec(tablediff.Changed, "stale", "the source's sum at the diff", sum(item("stale", "old"))),
		rec(tablediff.OnlyInSource, "gone", sum(item("gone", "1")), ""),
		rec(tablediff.OnlyInTarget, "extra", "", sum(item("extra", "x"))),
	})
	newDB := func() *itemDB {
		return &itemDB{modelDB: &modelDB{}, tables: map[string]map[string]map[string]types.AttributeValue{
			"from": {"copy": item("copy", "1"), "stale": item("stale", "changed since")},
			"to":   {"stale": item("stale", "old"), "extra": item("extra", "x")},
		}}
	}
	ctx := testctx.Bounded(t)
	run := func(db *itemDB) (*Result, error) {
		return Run(ctx, db, Options{From: "from", To: "to", KeysFile: keys, DeleteExtra: true, Workers: 1})
	}
	reasons := func(res *Result) map[string]string {
		m := map[string]string{}
		for _, c := range res.ConflictSample {
			k, err := tablediff.DecodeKey(c.Key)
			require.NoError(t, err)
			m[k["id"].(*types.AttributeValueMemberS).Value] = c.Reason
		}
		return m
	}

	db := newDB()
	res, err := run(db)
	require.NoError(t, err)
	assert.Equal(t, [5]int64{1, 1, 1, 1, 0}, [5]int64{res.Copied, res.Deleted, res.GoneFromSource, res.Conflicts, res.AlreadyEqual},
		"copied, deleted, gone, conflicts, already equal")
	assert.Equal(t, map[string]string{"stale": "changed in from since the diff"}, reasons(res))
	assert.Equal(t, item("copy", "1"), db.tables["to"]["copy"])
	assert.NotContains(t, db.tables["to"], "extra")
	assert.Equal(t, item("stale", "old"), db.tables["to"]["stale"], "a conflict is left alone")

	ccf := &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	db = newDB()
	db.putErr, db.delErr = ccf, ccf
	res, err = run(db)
	require.NoError(t, err, "a failed condition is a conflict, not an error")
	assert.Equal(t, [3]int64{0, 0, 3}, [3]int64{res.Copied, res.Deleted, res.Conflicts})
	assert.Equal(t, map[string]string{"stale": "changed in from since the diff",
		"copy": "changed in to while writing", "extra": "changed in to while deleting"}, reasons(res))

	db = newDB()
	db.putErr = errors.New("throttled")
	_, err = run(db)
	assert.ErrorContains(t, err, "writing an item to to: throttled")

	db = newDB()
	db.tables["from"] = map[string]map[string]types.AttributeValue{} // nothing to copy: only the delete writes
	db.delErr = errors.New("throttled")
	_, err = run(db)
	assert.ErrorContains(t, err, "deleting an item from to: throttled")
}
