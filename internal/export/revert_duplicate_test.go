package export

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/testctx"
)

// duplicateDB is a key still as the window left it when read, whose
// conditional put fails because another run of the same revert put the old
// image back in between: the interleaving two shard runs at once reach on
// the emulator only now and then (TestRevertFourShardsKilledOrDuplicated),
// so it is pinned here with a fake.
type duplicateDB struct {
	item  map[string]types.AttributeValue
	reads atomic.Int32
	old   map[string]types.AttributeValue
}

func (d *duplicateDB) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return nil, nil
}

func (d *duplicateDB) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	d.reads.Add(1)
	return &dynamodb.GetItemOutput{Item: d.item}, nil
}

func (d *duplicateDB) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	d.item = d.old // the other run's put landed first
	return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
}

func (d *duplicateDB) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return nil, nil
}

// TestRevertWrittenByADuplicateIsNoConflict: a failed condition on a key
// that reads back as at the window's start counts as already reverted; one
// that reads back otherwise is still a conflict.
func TestRevertWrittenByADuplicateIsNoConflict(t *testing.T) {
	ctx := testctx.Bounded(t)
	key := map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "u1"}}
	before := map[string]types.AttributeValue{"user_id": key["user_id"], "status": &types.AttributeValueMemberS{Value: "ok"}}
	after := map[string]types.AttributeValue{"user_id": key["user_id"], "status": &types.AttributeValueMemberS{Value: "bad"}}
	other := map[string]types.AttributeValue{"user_id": key["user_id"], "status": &types.AttributeValueMemberS{Value: "later"}}
	for _, c := range []struct {
		name      string
		landed    map[string]types.AttributeValue
		already   int64
		conflicts int
	}{
		{"a duplicate put it back", before, 1, 0},
		{"another writer changed it", other, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := &duplicateDB{item: after, old: c.landed}
			var tally revertTally
			err := revertOne(ctx, db, RevertOptions{Table: "t", Apply: true}, repair.Lock{KeyNames: []string{"user_id"}},
				&windowChange{keys: key, before: before, after: after}, &tally)
			require.NoError(t, err)
			assert.Equal(t, c.already, tally.already.Load())
			assert.Len(t, tally.keys, c.conflicts)
			assert.Zero(t, tally.restores.Load())
			assert.Equal(t, int32(2), db.reads.Load(), "read again after the failed condition")
		})
	}
}
