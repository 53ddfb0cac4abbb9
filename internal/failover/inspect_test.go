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

// replicasDB answers DescribeTable with the given replica regions.
type replicasDB struct {
	DynamoDB
	regions []string
	err     error
}

func (d *replicasDB) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	if d.err != nil {
		return nil, d.err
	}
	var rs []types.ReplicaDescription
	for _, r := range d.regions {
		rs = append(rs, types.ReplicaDescription{RegionName: aws.String(r)})
	}
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{Replicas: rs}}, nil
}

// TestDiscoverRegions: the home region first, then every replica region the
// table lists, each once, whether or not the list names home itself.
func TestDiscoverRegions(t *testing.T) {
	for _, c := range []struct {
		name     string
		replicas []string
		want     []string
	}{
		{"not a global table", nil, []string{"eu-west-1"}},
		{"replicas without home", []string{"us-east-1", "ap-south-1"}, []string{"eu-west-1", "us-east-1", "ap-south-1"}},
		{"replicas with home", []string{"us-east-1", "eu-west-1"}, []string{"eu-west-1", "us-east-1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := DiscoverRegions(testctx.Bounded(t), &replicasDB{regions: c.replicas}, "prod-hoge-user", "eu-west-1")
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
	_, err := DiscoverRegions(testctx.Bounded(t), &replicasDB{err: errors.New("AccessDeniedException")}, "prod-hoge-user", "eu-west-1")
	assert.ErrorContains(t, err, "describing prod-hoge-user in eu-west-1")
}

// describedDB answers DescribeTable with one table; its resource policy is
// policyDB's.
type describedDB struct {
	*policyDB
	table *types.TableDescription
}

func (d describedDB) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return &dynamodb.DescribeTableOutput{Table: d.table}, nil
}

// TestInspectRegionReadsWhatTheRegionLists_DDB_DR_01: a region's state has
// the replicas (with their status) its table lists, its pointer, and the
// ReplicationLatency into every OTHER region of the target, never its own.
func TestInspectRegionReadsWhatTheRegionLists_DDB_DR_01(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-user"
	target := Target{Table: "prod-hoge-user", Regions: []string{"us-east-1", "eu-west-1", "ap-south-1"}, Pointer: DefaultPointer("prod-hoge-user")}
	for _, c := range []struct {
		name     string
		replicas []types.ReplicaDescription
		want     map[string]string
	}{
		{"a global table", []types.ReplicaDescription{
			{RegionName: aws.String("us-east-1"), ReplicaStatus: types.ReplicaStatusActive},
			{RegionName: aws.String("ap-south-1"), ReplicaStatus: types.ReplicaStatusUpdating}},
			map[string]string{"us-east-1": "ACTIVE", "ap-south-1": "UPDATING"}},
		{"not a global table", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := describedDB{policyDB: &policyDB{}, table: &types.TableDescription{TableName: aws.String(target.Table), TableArn: aws.String(arn),
				TableStatus: types.TableStatusActive, Replicas: c.replicas,
				KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
				AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS}}}}
			cw := &fakeMetrics{err: errors.New("ThrottlingException")}
			rs := inspectRegion(testctx.Bounded(t), Clients{DynamoDB: db, SSM: &pointerSSM{value: "eu-west-1"}, CloudWatch: cw},
				target, "eu-west-1", 15*time.Minute, time.Now())
			require.True(t, rs.Answers, rs.Error)
			assert.Empty(t, rs.Error)
			assert.Empty(t, rs.PolicyError)
			assert.Empty(t, rs.PointerError)
			assert.Equal(t, "eu-west-1", rs.Pointer)
			if c.want == nil {
				assert.Empty(t, rs.Replicas, "no replicas (nil or empty: shown and decided alike)")
			} else {
				assert.Equal(t, c.want, rs.Replicas)
			}
			var into []string
			for _, l := range rs.Latency {
				into = append(into, l.Receiving)
			}
			assert.Equal(t, []string{"us-east-1", "ap-south-1"}, into, "latency into every other region")
			assert.Len(t, cw.in, 2, "one CloudWatch query per other region")
		})
	}
}

// TestInspectRecognisesMRSC_DDB_DR_01: DescribeTable's
// MultiRegionConsistency STRONG and GlobalTableWitnesses (the SDK's shape,
// read through a fake at the SDK interface: the emulator has no global
// tables) make the state MRSC, with the witness; status says a failover
// needs no drain (RPO 0) and the drain is none. EVENTUAL and an absent
// value are MREC.
func TestInspectRecognisesMRSC_DDB_DR_01(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-user"
	target := Target{Table: "prod-hoge-user", Regions: []string{"eu-west-1", "eu-central-1"}, Pointer: DefaultPointer("prod-hoge-user")}
	for _, c := range []struct {
		name        string
		consistency types.MultiRegionConsistency
		witnesses   []types.GlobalTableWitnessDescription
		mrsc        bool
		note        string
	}{
		{"MRSC with a witness", types.MultiRegionConsistencyStrong, []types.GlobalTableWitnessDescription{{RegionName: aws.String("eu-north-1"), WitnessStatus: types.WitnessStatusActive}}, true, "witness eu-north-1 (ACTIVE): RPO 0"},
		{"MRSC of three replicas", types.MultiRegionConsistencyStrong, nil, true, "no witness (three replicas): RPO 0"},
		{"MREC", types.MultiRegionConsistencyEventual, nil, false, ""},
		{"not given", "", nil, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := describedDB{policyDB: &policyDB{}, table: &types.TableDescription{TableName: aws.String(target.Table), TableArn: aws.String(arn),
				TableStatus: types.TableStatusActive, MultiRegionConsistency: c.consistency, GlobalTableWitnesses: c.witnesses,
				Replicas:             []types.ReplicaDescription{{RegionName: aws.String("eu-central-1"), ReplicaStatus: types.ReplicaStatusActive}},
				KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
				AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS}}}}
			rs := inspectRegion(testctx.Bounded(t), Clients{DynamoDB: db, SSM: &pointerSSM{value: "eu-west-1"}, CloudWatch: &fakeMetrics{err: errors.New("ThrottlingException")}},
				target, "eu-west-1", 15*time.Minute, time.Now())
			s := State{Target: target, Regions: []RegionState{rs, {Region: "eu-central-1", Answers: true, TableExists: true}}, Active: "eu-west-1"}
			assert.Equal(t, c.mrsc, s.MRSC())
			if c.note == "" {
				assert.Empty(t, s.MRSCNote())
				return
			}
			assert.Contains(t, s.MRSCNote(), c.note)
			assert.Contains(t, s.MRSCNote(), "needs no drain")
			r := rules()
			r.Drain = DefaultDrainRules()
			p, check := PlanDrain(s, r)
			assert.Equal(t, DrainMRSC, p.Rule)
			assert.Equal(t, time.Duration(0), p.Wait)
			assert.Contains(t, check.Detail, "RPO 0")
		})
	}
}
