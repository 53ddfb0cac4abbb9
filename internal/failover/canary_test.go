package failover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// canaryDB is a table of one item, for the canary's decision logic.
type canaryDB struct {
	DynamoDB
	item          map[string]types.AttributeValue // what the table holds
	putErr        error                           // what PutItem answers (after storing, when land)
	land          bool                            // the put lands before putErr is answered
	getErr        error
	getConsistent bool
}

func (d *canaryDB) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if d.land {
		d.item = in.Item
	}
	return &dynamodb.PutItemOutput{}, d.putErr
}

func (d *canaryDB) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	d.getConsistent = aws.ToBool(in.ConsistentRead)
	return &dynamodb.GetItemOutput{Item: d.item}, d.getErr
}

// A canary put whose first attempt landed and whose retry failed its own
// condition took; any other refusal is an error.
func TestCanaryWriteConditionalRetry(t *testing.T) {
	ccf := &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	other := map[string]types.AttributeValue{"dynops_canary": &types.AttributeValueMemberS{Value: "another-run"}}
	cases := []struct {
		name    string
		db      *canaryDB
		wantErr string
	}{
		{"put answered", &canaryDB{land: true}, ""},
		{"first attempt landed, the retry failed its condition", &canaryDB{land: true, putErr: ccf}, ""},
		{"the item is another run's", &canaryDB{item: other, putErr: ccf}, "ConditionalCheckFailedException"},
		{"condition failed, nothing there (read back)", &canaryDB{putErr: ccf}, "ConditionalCheckFailedException"},
		{"condition failed and the read back failed", &canaryDB{land: true, putErr: ccf, getErr: errors.New("throttled")}, "reading it back: reading the canary item: throttled"},
		{"another error is not read back", &canaryDB{land: true, putErr: errors.New("AccessDenied")}, "AccessDenied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cn, err := newCanary(KeyAttr{Name: "id", Type: "S"}, nil, "run-1")
			require.NoError(t, err)
			err = cn.write(context.Background(), c.db, "dev-hoge-session", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
			if c.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.wantErr)
			if errors.As(c.db.putErr, new(*types.ConditionalCheckFailedException)) {
				assert.True(t, c.db.getConsistent, "read back strongly consistent")
			}
		})
	}
}
