package readiness

// The emulator has no global tables (moto lists no replicas and replicates
// nothing), so the DR decision of the readiness run is tested here against
// fakes of the DynamoDB, SSM and CloudWatch APIs, one set per region; the
// path without replicas runs on the emulator in test/modules/readiness.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/smithy-go"

	"github.com/dynops/dynops/internal/failover"
)

// fakeRegion is one region of a fake global table.
type fakeRegion struct {
	down       bool              // DynamoDB and SSM do not answer
	replicas   map[string]string // region -> ReplicaStatus (nil: not a global table)
	status     types.TableStatus // "" : ACTIVE
	pointer    string            // "" : parameter not found
	latencyMs  []float64         // ReplicationLatency datapoints out of this region
	policy     string            // resource policy ("" : none)
	missing    bool              // the table does not exist here
	describeEr error
}

type fakeDynamoDB struct {
	failover.DynamoDB // only the read methods below are called
	region            string
	r                 *fakeRegion
}

func (f fakeDynamoDB) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	switch {
	case f.r.describeEr != nil:
		return nil, f.r.describeEr
	case f.r.down:
		return nil, errors.New("dial tcp: i/o timeout")
	case f.r.missing:
		return nil, &smithy.GenericAPIError{Code: "ResourceNotFoundException", Message: "not found"}
	}
	st := f.r.status
	if st == "" {
		st = types.TableStatusActive
	}
	t := &types.TableDescription{TableName: in.TableName, TableStatus: st, DeletionProtectionEnabled: aws.Bool(true),
		TableArn:             aws.String("arn:aws:dynamodb:" + f.region + ":111122223333:table/" + aws.ToString(in.TableName)),
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}}}
	for reg, s := range f.r.replicas {
		t.Replicas = append(t.Replicas, types.ReplicaDescription{RegionName: aws.String(reg), ReplicaStatus: types.ReplicaStatus(s)})
	}
	return &dynamodb.DescribeTableOutput{Table: t}, nil
}

func (f fakeDynamoDB) GetResourcePolicy(context.Context, *dynamodb.GetResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.GetResourcePolicyOutput, error) {
	if f.r.policy == "" {
		return nil, &smithy.GenericAPIError{Code: "PolicyNotFoundException", Message: "no policy"}
	}
	return &dynamodb.GetResourcePolicyOutput{Policy: aws.String(f.r.policy), RevisionId: aws.String("1")}, nil
}

type fakeSSM struct {
	failover.SSM
	r *fakeRegion
}

func (f fakeSSM) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	switch {
	case f.r.down:
		return nil, errors.New("dial tcp: i/o timeout")
	case f.r.pointer == "":
		return nil, &smithy.GenericAPIError{Code: "ParameterNotFound", Message: "not found"}
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Name: in.Name, Value: aws.String(f.r.pointer)}}, nil
}

type fakeCloudWatch struct{ r *fakeRegion }

func (f fakeCloudWatch) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	out := &cloudwatch.GetMetricDataOutput{}
	for _, q := range in.MetricDataQueries {
		out.MetricDataResults = append(out.MetricDataResults, cwtypes.MetricDataResult{Id: q.Id, Values: f.r.latencyMs})
	}
	return out, nil
}

func fakeAWS(regions map[string]*fakeRegion) failover.Regional {
	return func(region string) failover.Clients {
		r, ok := regions[region]
		if !ok {
			r = &fakeRegion{down: true}
		}
		return failover.Clients{DynamoDB: fakeDynamoDB{region: region, r: r}, SSM: fakeSSM{r: r}, CloudWatch: fakeCloudWatch{r: r}}
	}
}

// fence is the fence dynops's failover puts on the table in eu-central-1.
func fence(t testing.TB) string {
	doc, err := failover.WithFence("", "arn:aws:dynamodb:eu-central-1:111122223333:table/prod-hoge-session", "")
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// healthy is a two-region global table writing in eu-west-1, ready to fail
// over to eu-central-1; each case changes one thing.
func healthy() map[string]*fakeRegion {
	reps := map[string]string{"eu-west-1": "ACTIVE", "eu-central-1": "ACTIVE"}
	return map[string]*fakeRegion{
		"eu-west-1":    {replicas: reps, pointer: "eu-west-1", latencyMs: []float64{800, 1200}},
		"eu-central-1": {replicas: reps, pointer: "eu-west-1", latencyMs: []float64{900}},
	}
}

func TestDRStatusDecisionsWithFakeAWS(t *testing.T) {
	const table = "prod-hoge-session"
	now := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		change    func(map[string]*fakeRegion)
		ready     bool
		reasonHas []string
	}{
		{"healthy global table", func(map[string]*fakeRegion) {}, true, nil},
		{"no replication latency datapoints only warns", func(m map[string]*fakeRegion) { m["eu-west-1"].latencyMs = nil }, true, nil},
		{"replication latency above 30s", func(m map[string]*fakeRegion) { m["eu-west-1"].latencyMs = []float64{45000} },
			false, []string{"to eu-central-1", "replication-latency", "ReplicationLatency eu-west-1 -> eu-central-1"}},
		{"replica region does not answer", func(m map[string]*fakeRegion) { m["eu-central-1"].down = true },
			false, []string{"target-table", "does not answer"}},
		{"replica table missing", func(m map[string]*fakeRegion) { m["eu-central-1"].missing = true },
			false, []string{"target-table", "does not exist in eu-central-1"}},
		{"replica not ACTIVE", func(m map[string]*fakeRegion) {
			reps := map[string]string{"eu-west-1": "ACTIVE", "eu-central-1": "CREATING"}
			m["eu-west-1"].replicas, m["eu-central-1"].replicas = reps, reps
		}, false, []string{"target-replica", "CREATING"}},
		{"pointers disagree (a switch stopped midway)", func(m map[string]*fakeRegion) { m["eu-central-1"].pointer = "eu-central-1" },
			false, []string{"HALF-DONE", "pointer"}},
		{"pointer parameter missing everywhere", func(m map[string]*fakeRegion) { m["eu-west-1"].pointer, m["eu-central-1"].pointer = "", "" },
			false, []string{"pointer", "unreadable"}},
		{"target carries the fence of an earlier failover", func(m map[string]*fakeRegion) {
			m["eu-central-1"].policy = fence(t)
		}, false, []string{"target-fence"}},
		{"table not ACTIVE in the target", func(m map[string]*fakeRegion) { m["eu-central-1"].status = types.TableStatusUpdating },
			false, []string{"target-table", "UPDATING"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			regions := healthy()
			c.change(regions)
			res, notGlobal, err := DRStatus(context.Background(), fakeAWS(regions), "eu-west-1", []string{table}, now)
			if err != nil {
				t.Fatal(err)
			}
			if len(notGlobal) != 0 || len(res) != 1 {
				t.Fatalf("got %d results, not global %v; want one result", len(res), notGlobal)
			}
			r := res[0]
			if r.Table != table || strings.Join(r.Regions, ",") != "eu-west-1,eu-central-1" {
				t.Errorf("result for %s in %v, want %s in eu-west-1,eu-central-1", r.Table, r.Regions, table)
			}
			if r.Ready != c.ready {
				t.Fatalf("ready = %v, want %v (reason %q)", r.Ready, c.ready, r.Reason)
			}
			if c.ready && r.Reason != "" {
				t.Errorf("ready with a reason: %q", r.Reason)
			}
			if !c.ready && r.Reason == "" {
				t.Error("not ready without a reason")
			}
			for _, want := range c.reasonHas {
				if !strings.Contains(r.Reason+" "+r.HalfDone, want) {
					t.Errorf("reason %q does not say %q", r.Reason, want)
				}
			}
		})
	}
}

// The fence fixture above must be one failover.FenceHolds recognises, or
// the fenced case would pass for another reason.
func TestFakeFenceIsAFence(t *testing.T) {
	regions := healthy()
	regions["eu-central-1"].policy = fence(t)
	s := failover.Inspect(context.Background(), fakeAWS(regions), failover.Target{Table: "prod-hoge-session", Regions: []string{"eu-west-1", "eu-central-1"}, Pointer: "p"}, time.Minute, time.Now())
	if rs, _ := s.Region("eu-central-1"); !rs.Fenced {
		t.Fatalf("the fixture policy is no fence: %s", rs.FenceDetail)
	}
}

func TestDRStatusSkipsTablesWithoutReplicasWithFakeAWS(t *testing.T) {
	regions := map[string]*fakeRegion{"eu-west-1": {pointer: "eu-west-1"}}
	res, notGlobal, err := DRStatus(context.Background(), fakeAWS(regions), "eu-west-1", []string{"prod-a", "prod-b"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 0 || strings.Join(notGlobal, ",") != "prod-a,prod-b" {
		t.Fatalf("results %v, not global %v; want none and both tables", res, notGlobal)
	}
}

// A table whose replicas cannot be read in the home region is an error:
// the run cannot say it is not global (fail closed), and names the table.
func TestDRStatusUnreadableTableIsAnErrorWithFakeAWS(t *testing.T) {
	regions := map[string]*fakeRegion{"eu-west-1": {describeEr: &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "denied"}}}
	_, _, err := DRStatus(context.Background(), fakeAWS(regions), "eu-west-1", []string{"prod-a"}, time.Now())
	if err == nil || !strings.Contains(err.Error(), "prod-a") || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("err = %v, want one naming prod-a and AccessDenied", err)
	}
}
