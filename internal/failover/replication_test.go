package failover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deletingDB is canaryDB counting DeleteItem calls.
type deletingDB struct {
	*canaryDB
	deletes int
}

func (d *deletingDB) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	d.deletes++
	return &dynamodb.DeleteItemOutput{}, nil
}

// TestReplicationCheck_DDB_DR_01: the canary written in the new region must
// show in the old one within --replication-timeout; the step says after how
// long, fails when it never shows or cannot be read, is skipped (and says
// why) when nothing can be checked, and deletes the canary in every case
// that does not fail.
func TestReplicationCheck_DDB_DR_01(t *testing.T) {
	const from, to, table = "eu-west-1", "us-east-1", "prod-hoge-user"
	cn, err := newCanary(KeyAttr{Name: "id", Type: "S"}, nil, "failover-1")
	require.NoError(t, err)
	seen := map[string]types.AttributeValue{"dynops_canary": &types.AttributeValueMemberS{Value: cn.nonce}}
	replicated := func(fromAnswers bool) State {
		return State{Regions: []RegionState{
			{Region: from, Answers: fromAnswers, Replicas: map[string]string{to: "ACTIVE"}},
			{Region: to, Answers: true, Replicas: map[string]string{from: "ACTIVE"}},
		}}
	}
	for _, c := range []struct {
		name        string
		state       State
		fromDB      *canaryDB
		wantStatus  StepStatus
		wantDetail  []string
		wantErr     string
		wantDeletes int
	}{
		{name: "seen in the old region", state: replicated(true), fromDB: &canaryDB{item: seen},
			wantDetail: []string{"canary seen in " + from + " after ", "; canary deleted"}, wantDeletes: 1},
		{name: "never seen: fails, the canary stays until its ttl", state: replicated(true), fromDB: &canaryDB{},
			wantErr: "not seen in " + from},
		{name: "the old region cannot be read: fails", state: replicated(true), fromDB: &canaryDB{getErr: errors.New("AccessDeniedException")},
			wantErr: "reading the canary item: AccessDeniedException"},
		{name: "not replicas: skipped, says why", state: State{Regions: []RegionState{{Region: from, Answers: true}, {Region: to, Answers: true}}}, fromDB: &canaryDB{},
			wantStatus: StepSkipped, wantDetail: []string{"unverifiable: the tables in " + from + " and " + to + " are not replicas", "; canary deleted"}, wantDeletes: 1},
		{name: "the old region does not answer (--force): skipped", state: replicated(false), fromDB: &canaryDB{},
			wantStatus: StepSkipped, wantDetail: []string{"unverifiable: " + from + " does not answer (--force)", "; canary deleted"}, wantDeletes: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			toDB := &deletingDB{canaryDB: &canaryDB{}}
			fromDB := &deletingDB{canaryDB: c.fromDB}
			r := &Runner{Now: time.Now, PollInterval: time.Millisecond, Clients: func(region string) Clients {
				if region == from {
					return Clients{DynamoDB: fromDB}
				}
				return Clients{DynamoDB: toDB}
			}}
			req := Request{Target: Target{Table: table, Regions: []string{from, to}}, Rules: Rules{Mode: Failover, From: from, To: to}, ReplicationTimeout: 50 * time.Millisecond}
			var st Step
			err := r.replicationCheck(testctx.Bounded(t), &st, req, c.state, cn)
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				assert.Zero(t, toDB.deletes, "a failed check leaves the canary")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.wantStatus, st.Status)
			for _, w := range c.wantDetail {
				assert.Contains(t, st.Detail, w)
			}
			assert.Equal(t, c.wantDeletes, toDB.deletes, "canary deleted in the new region")
			assert.Zero(t, fromDB.deletes)
		})
	}
}
