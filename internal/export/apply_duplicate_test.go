package export

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/testctx"
)

// raceDB is applyDB whose first conditional put fails because another run
// of the same shard wrote the key between the read and the put: the
// interleaving two shard runs at once reach on the emulator only now and
// then (TestApplyShardKilledOrDuplicatedWritesNothingTwice), pinned here
// with a fake.
type raceDB struct {
	*applyDB
	landed string // what the other run wrote
	failed bool
}

func (d *raceDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if !d.failed {
		d.failed = true
		d.items["u1"] = d.landed
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	return d.applyDB.PutItem(ctx, in, o...)
}

// TestApplyKeyWrittenByADuplicate: a failed condition reads the key again;
// as the export leaves it (the duplicate wrote it) it is unchanged, not
// written; otherwise it is written under the new condition.
func TestApplyKeyWrittenByADuplicate(t *testing.T) {
	ctx := testctx.Bounded(t)
	c := change{keys: map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "u1"}},
		image: map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "u1"}, "v": &types.AttributeValueMemberS{Value: "new"}}}
	for _, tc := range []struct {
		name   string
		landed string
		wrote  bool
		writes int
	}{
		{"the duplicate wrote the same image", "new", false, 0},
		{"another writer wrote something else", "other", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &raceDB{applyDB: &applyDB{tags: map[string]string{}, items: map[string]string{"u1": "old"}}, landed: tc.landed}
			wrote, err := applyOne(ctx, db, db, "t", []string{"user_id"}, c)
			require.NoError(t, err)
			assert.Equal(t, tc.wrote, wrote)
			assert.Equal(t, tc.writes, db.writes)
			assert.Equal(t, "new", db.items["u1"])
		})
	}
}
