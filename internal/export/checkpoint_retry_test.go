package export

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportwindow"
	"github.com/dynops/dynops/internal/testctx"
)

// landedDB is a checkpoint table whose next put lands and then answers
// ConditionalCheckFailed (the SDK's retry of a put whose answer was lost).
type landedDB struct {
	item        map[string]types.AttributeValue
	landThenCCF bool
}

func (d *landedDB) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return &dynamodb.GetItemOutput{Item: d.item}, nil
}

func (d *landedDB) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if d.landThenCCF {
		d.item = in.Item
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	d.item = in.Item
	return &dynamodb.PutItemOutput{}, nil
}

// A checkpoint write whose first attempt landed is the write, not a
// conflict; a real conflict (another state stored) still is one.
func TestCheckpointSaveRetriedPut(t *testing.T) {
	ctx := testctx.Bounded(t)
	db := &landedDB{}
	store := CheckpointStore{DB: db, Table: "dev-hoge-export-checkpoint"}
	cp := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	first, err := store.Save(ctx, exportwindow.State{}, exportwindow.State{Table: "dev-hoge-user", Checkpoint: cp})
	require.NoError(t, err)

	db.landThenCCF = true
	next := exportwindow.State{Table: "dev-hoge-user", Checkpoint: cp.Add(time.Hour)}
	saved, err := store.Save(ctx, first, next)
	require.NoError(t, err, "the retried put's own write is not a conflict")
	assert.Equal(t, cp.Add(time.Hour), saved.Checkpoint)
	got, err := store.Load(ctx, "dev-hoge-user")
	require.NoError(t, err)
	assert.Equal(t, saved.Version, got.Version)

	// A stale writer (the stored state is not the one it wrote) is refused.
	db.landThenCCF = false
	_, err = store.Save(ctx, saved, exportwindow.State{Table: "dev-hoge-user", Checkpoint: cp.Add(2 * time.Hour)})
	require.NoError(t, err)
	db.landThenCCF = false
	stale := CheckpointStore{DB: &conflictDB{landedDB: db}, Table: store.Table}
	_, err = stale.Save(ctx, saved, exportwindow.State{Table: "dev-hoge-user", Checkpoint: cp.Add(3 * time.Hour)})
	assert.ErrorIs(t, err, ErrConflict)
}

// conflictDB refuses every put (another writer moved the version).
type conflictDB struct{ *landedDB }

func (d *conflictDB) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
}
