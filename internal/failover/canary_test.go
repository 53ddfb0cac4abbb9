package failover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/dynops/dynops/internal/testctx"
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

// TestCanaryStepWritesAndReadsBack_DDB_DR_01: the canary step of a switch
// writes the canary in the new region and says so only after a strongly
// consistent read shows it; a write the read back does not show, a refused
// write, a failed read and a table whose partition key is not a string each
// fail the step, and only a write that was answered leaves an undo.
func TestCanaryStepWritesAndReadsBack_DDB_DR_01(t *testing.T) {
	for _, c := range []struct {
		name       string
		db         *canaryDB
		hashType   string
		wantErr    string
		wantUndo   bool
		wantStored bool
	}{
		{name: "written and read back", db: &canaryDB{land: true}, hashType: "S", wantUndo: true, wantStored: true},
		{name: "answered but not read back", db: &canaryDB{}, hashType: "S", wantErr: "written in eu-central-1 but not read back", wantUndo: true},
		{name: "write refused", db: &canaryDB{putErr: errors.New("AccessDeniedException")}, hashType: "S", wantErr: "AccessDeniedException"},
		{name: "read back fails", db: &canaryDB{land: true, getErr: errors.New("ThrottlingException")}, hashType: "S",
			wantErr: "reading the canary item: ThrottlingException", wantUndo: true, wantStored: true},
		{name: "numeric partition key: nothing written", db: &canaryDB{land: true}, hashType: "N", wantErr: "needs a string partition key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := globalState()
			for i := range s.Regions {
				s.Regions[i].HashKey.Type = c.hashType
			}
			req := Request{Target: s.Target, Rules: rules(), Execute: true}
			var regions []string
			r := &Runner{Now: time.Now, Clients: func(region string) Clients { regions = append(regions, region); return Clients{DynamoDB: c.db} }}
			var step *stepDef
			for _, d := range r.steps(req, s, nil) {
				if d.name == "canary" {
					step = &d
				}
			}
			require.NotNil(t, step)
			var st Step
			err := step.run(testctx.Bounded(t), &st)
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				assert.Empty(t, st.Detail, "nothing claimed")
			} else {
				require.NoError(t, err)
				assert.Regexp(t, `^canary session_id=`+CanaryPrefix+`\S+ written in eu-central-1 and read back$`, st.Detail)
				assert.True(t, c.db.getConsistent, "read back strongly consistent")
			}
			if c.wantUndo {
				require.Len(t, st.Undo, 1)
				assert.Contains(t, st.Undo[0], "aws dynamodb delete-item --region eu-central-1 --table-name prod-hoge-session --key ")
			} else {
				assert.Empty(t, st.Undo)
			}
			assert.Equal(t, c.wantStored, c.db.item != nil, "the canary item in the table")
			if c.db.item != nil {
				assert.Equal(t, []string{"eu-central-1"}, regions, "written in the new region only")
			}
		})
	}
}
