// Package drpair builds, for DR tests on the local emulator, what moto cannot:
// a "global table" as a same-name table in two regions (standing in for
// replicas), the active-region pointer in both, and the ReplicationLatency
// metric CloudWatch would publish.
package drpair

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/test/helpers/harness"
)

// The pair's regions: Home holds the writes at the start. Third is the
// third replica of a three-region setup (Options.Third).
const (
	Home  = "eu-west-1"
	Away  = "eu-central-1"
	Third = "eu-north-1"
)

// Pair is a same-name table in Home and Away with its pointer.
type Pair struct {
	Table   string
	Target  failover.Target
	Clients failover.Regional
	Config  aws.Config
}

// Options shape a pair.
type Options struct {
	MissingAway bool // create the table in Home only
	NoPointer   bool // leave the pointer to Terraform (modules/dr)
	Third       bool // a third same-name table and pointer in Third
	Prod        bool // a prod-* table tagged env=prod (protected: needs --confirm)
}

// New creates a dev-* (Options.Prod: prod-*) table in both regions and sets the pointer to Home in
// both. It skips t off the emulator: on AWS, test/modules/dr drills a real global
// table instead.
func New(t *testing.T, tg *harness.Target, o Options) Pair {
	t.Helper()
	if !tg.OnEmulator() {
		t.Skip("stand-in tables in two regions: emulator only; on AWS test/modules/dr drills a real global table")
	}
	ctx := context.Background()
	cfg := tg.AWSConfig(t)
	env := "dev"
	if o.Prod {
		env = "prod"
	}
	p := Pair{Table: env + "-" + harness.UniqueID() + "-session", Config: cfg, Clients: Clients(cfg)}
	regions := []string{Home, Away}
	if o.Third {
		regions = append(regions, Third)
	}
	p.Target = failover.Target{Table: p.Table, Regions: regions, Pointer: failover.DefaultPointer(p.Table)}
	for _, r := range regions {
		if r == Away && o.MissingAway {
			continue
		}
		_, err := p.DynamoDB(r).CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:            &p.Table,
			BillingMode:          types.BillingModePayPerRequest,
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("session_id"), KeyType: types.KeyTypeHash}},
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("session_id"), AttributeType: types.ScalarAttributeTypeS}},
			Tags:                 []types.Tag{{Key: aws.String("env"), Value: aws.String(env)}},
		})
		require.NoError(t, err)
	}
	for _, r := range regions {
		if o.NoPointer {
			break
		}
		_, err := ssm.NewFromConfig(awsclients.ForRegion(cfg, r)).PutParameter(ctx, &ssm.PutParameterInput{
			Name: &p.Target.Pointer, Value: aws.String(Home), Type: ssmtypes.ParameterTypeString, Overwrite: aws.Bool(true),
		})
		require.NoError(t, err)
	}
	return p
}

// Clients returns the per-region clients dynops builds, from cfg.
func Clients(cfg aws.Config) failover.Regional {
	return failover.RegionalFrom(awsclients.New(cfg))
}

// DynamoDB is a full DynamoDB client in region.
func (p Pair) DynamoDB(region string) *dynamodb.Client {
	return awsclients.New(p.Config).In(region).DynamoDB()
}

// PublishLatency puts ReplicationLatency datapoints (milliseconds) as source
// would publish them for receiving.
func (p Pair) PublishLatency(t *testing.T, source, receiving string, ms ...float64) {
	t.Helper()
	var data []cwtypes.MetricDatum
	for _, v := range ms {
		data = append(data, cwtypes.MetricDatum{
			MetricName: aws.String("ReplicationLatency"), Value: aws.Float64(v), Unit: cwtypes.StandardUnitMilliseconds,
			Dimensions: []cwtypes.Dimension{{Name: aws.String("TableName"), Value: &p.Table}, {Name: aws.String("ReceivingRegion"), Value: aws.String(receiving)}},
		})
	}
	_, err := awsclients.New(p.Config).In(source).CloudWatch().PutMetricData(context.Background(),
		&cloudwatch.PutMetricDataInput{Namespace: aws.String("AWS/DynamoDB"), MetricData: data})
	require.NoError(t, err)
}

// Pointer reads the pointer in region.
func (p Pair) Pointer(t *testing.T, region string) string {
	t.Helper()
	out, err := p.Clients(region).SSM.GetParameter(context.Background(), &ssm.GetParameterInput{Name: &p.Target.Pointer})
	require.NoError(t, err)
	return aws.ToString(out.Parameter.Value)
}

// Fenced reads the table's resource policy back in region and looks for the
// fence; a table that does not exist there is not fenced.
func (p Pair) Fenced(t *testing.T, region string) bool {
	t.Helper()
	db := p.Clients(region).DynamoDB
	dt, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &p.Table})
	var missing *types.ResourceNotFoundException
	if errors.As(err, &missing) {
		return false
	}
	require.NoError(t, err)
	doc, _, err := failover.ResourcePolicy(context.Background(), db, aws.ToString(dt.Table.TableArn))
	require.NoError(t, err)
	return failover.HasFence(doc)
}

// AssertUnchanged checks that the pair is as New left it: pointer Home in
// every region, no fence in any.
func (p Pair) AssertUnchanged(t *testing.T) {
	t.Helper()
	for _, r := range p.Target.Regions {
		require.Equal(t, Home, p.Pointer(t, r), "pointer in %s", r)
		require.False(t, p.Fenced(t, r), "%s must not be fenced", r)
	}
}
