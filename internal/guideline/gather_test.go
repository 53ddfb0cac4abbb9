package guideline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	ltypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDB answers the reads of Gather for one table (unit tests of what
// Gather keeps and how it fails; `dynops check` runs it against the
// emulator in internal/cmd/check).
type fakeDB struct {
	table     *types.TableDescription
	pitr      *types.PointInTimeRecoveryDescription
	tagPages  [][]types.Tag
	tables    [][]string // ListTables pages
	fail      string     // the operation that fails
	tagTokens []string   // the NextToken of each ListTagsOfResource call
}

var errRefused = errors.New("refused")

func (f *fakeDB) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	if f.fail == "DescribeTable" {
		return nil, errRefused
	}
	return &dynamodb.DescribeTableOutput{Table: f.table}, nil
}

func (f *fakeDB) DescribeContinuousBackups(context.Context, *dynamodb.DescribeContinuousBackupsInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeContinuousBackupsOutput, error) {
	if f.fail == "DescribeContinuousBackups" {
		return nil, errRefused
	}
	if f.pitr == nil {
		return &dynamodb.DescribeContinuousBackupsOutput{}, nil
	}
	return &dynamodb.DescribeContinuousBackupsOutput{ContinuousBackupsDescription: &types.ContinuousBackupsDescription{PointInTimeRecoveryDescription: f.pitr}}, nil
}

func (f *fakeDB) DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	if f.fail == "DescribeTimeToLive" {
		return nil, errRefused
	}
	return &dynamodb.DescribeTimeToLiveOutput{TimeToLiveDescription: &types.TimeToLiveDescription{TimeToLiveStatus: types.TimeToLiveStatusEnabled, AttributeName: aws.String("ttl")}}, nil
}

func (f *fakeDB) ListTagsOfResource(_ context.Context, in *dynamodb.ListTagsOfResourceInput, _ ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error) {
	if f.fail == "ListTagsOfResource" {
		return nil, errRefused
	}
	f.tagTokens = append(f.tagTokens, aws.ToString(in.NextToken))
	i := 0
	if in.NextToken != nil {
		fmt.Sscanf(*in.NextToken, "page-%d", &i)
	}
	out := &dynamodb.ListTagsOfResourceOutput{}
	if i < len(f.tagPages) {
		out.Tags = f.tagPages[i]
	}
	if i+1 < len(f.tagPages) {
		out.NextToken = aws.String(fmt.Sprintf("page-%d", i+1))
	}
	return out, nil
}

func (f *fakeDB) ListTables(_ context.Context, in *dynamodb.ListTablesInput, _ ...func(*dynamodb.Options)) (*dynamodb.ListTablesOutput, error) {
	if f.fail == "ListTables" {
		return nil, errRefused
	}
	i := 0
	if in.ExclusiveStartTableName != nil {
		for j, p := range f.tables {
			if len(p) > 0 && p[len(p)-1] == *in.ExclusiveStartTableName {
				i = j + 1
			}
		}
	}
	out := &dynamodb.ListTablesOutput{TableNames: f.tables[i]}
	if i+1 < len(f.tables) {
		out.LastEvaluatedTableName = aws.String(f.tables[i][len(f.tables[i])-1])
	}
	return out, nil
}

func tag(k, v string) types.Tag { return types.Tag{Key: aws.String(k), Value: aws.String(v)} }

func TestGatherReadsEveryTagPage(t *testing.T) {
	db := &fakeDB{
		table: &types.TableDescription{TableName: aws.String("prod-hoge-user"), TableArn: aws.String("arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user")},
		pitr:  pitr(35),
		tagPages: [][]types.Tag{
			{tag("env", "prod")},
			{tag(ExceptionTagPrefix+Cap01, "steady load")},
			{tag("owner", "team-a")},
		},
	}
	s, err := Gather(context.Background(), db, "prod-hoge-user")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"env": "prod", ExceptionTagPrefix + Cap01: "steady load", "owner": "team-a"}, s.Tags, "the tags of every page")
	assert.Equal(t, []string{"", "page-1", "page-2"}, db.tagTokens)
	assert.Equal(t, int32(35), *s.PITR.RecoveryPeriodInDays)
	assert.Equal(t, "ttl", *s.TTL.AttributeName)
	assert.Equal(t, "prod-hoge-user", *s.Table.TableName)
	assert.Equal(t, map[string]string{Cap01: "steady load"}, s.Exceptions(), "an exception on the last page counts")

	db.pitr = nil // DescribeContinuousBackups without a description: PITR unknown, so off
	s, err = Gather(context.Background(), db, "prod-hoge-user")
	require.NoError(t, err)
	assert.Nil(t, s.PITR)
}

func TestGatherNamesTheReadThatFailed(t *testing.T) {
	for op, want := range map[string]string{
		"DescribeTable":             "describing table prod-hoge-user: refused",
		"DescribeContinuousBackups": "describing continuous backups of prod-hoge-user: refused",
		"DescribeTimeToLive":        "describing TTL of prod-hoge-user: refused",
		"ListTagsOfResource":        "listing tags of prod-hoge-user: refused",
	} {
		t.Run(op, func(t *testing.T) {
			db := &fakeDB{table: &types.TableDescription{TableName: aws.String("prod-hoge-user")}, fail: op}
			s, err := Gather(context.Background(), db, "prod-hoge-user")
			require.Error(t, err)
			assert.ErrorIs(t, err, errRefused)
			assert.Equal(t, want, err.Error())
			assert.Nil(t, s.Table.TableName, "no partial state on an error")
		})
	}
}

// TestGatherReplicas: every replica but the home region is read in its own
// region; one that cannot be read is kept with its error (fail closed).
func TestGatherReplicas(t *testing.T) {
	good := &fakeDB{table: &types.TableDescription{DeletionProtectionEnabled: aws.Bool(true)}, pitr: pitr(35)}
	unprotected := &fakeDB{table: &types.TableDescription{DeletionProtectionEnabled: aws.Bool(false)}}
	down := &fakeDB{fail: "DescribeTable"}
	noBackups := &fakeDB{table: &types.TableDescription{DeletionProtectionEnabled: aws.Bool(true)}, fail: "DescribeContinuousBackups"}
	clients := map[string]DynamoDB{"eu-west-1": nil, "us-west-2": good, "eu-central-1": unprotected, "ap-northeast-1": down, "sa-east-1": noBackups}
	var asked []string
	client := func(region string) DynamoDB {
		asked = append(asked, region)
		return clients[region]
	}
	var replicas []types.ReplicaDescription
	for _, r := range []string{"eu-west-1", "us-west-2", "", "eu-central-1", "ap-northeast-1", "sa-east-1"} {
		replicas = append(replicas, types.ReplicaDescription{RegionName: aws.String(r)})
	}
	s := TableState{Table: types.TableDescription{TableName: aws.String("prod-hoge-user"), Replicas: replicas}}
	GatherReplicas(context.Background(), client, "eu-west-1", &s)

	assert.Equal(t, []string{"us-west-2", "eu-central-1", "ap-northeast-1", "sa-east-1"}, asked, "every replica but home (and no nameless one), in order")
	require.Len(t, s.Replicas, 4)
	byRegion := map[string]ReplicaState{}
	for _, r := range s.Replicas {
		byRegion[r.Region] = r
	}
	assert.NoError(t, byRegion["us-west-2"].Err)
	assert.True(t, *byRegion["us-west-2"].DeletionProtection)
	assert.Equal(t, int32(35), *byRegion["us-west-2"].PITR.RecoveryPeriodInDays)
	assert.False(t, *byRegion["eu-central-1"].DeletionProtection)
	assert.Nil(t, byRegion["eu-central-1"].PITR)
	assert.EqualError(t, byRegion["ap-northeast-1"].Err, "describing prod-hoge-user in ap-northeast-1: refused")
	assert.EqualError(t, byRegion["sa-east-1"].Err, "describing continuous backups of prod-hoge-user in sa-east-1: refused")

	// And the checks fail both rules on the unreadable replicas.
	for _, region := range []string{"ap-northeast-1", "sa-east-1"} {
		for _, rule := range []string{Prot01, Pitr01} {
			got, f := statusOf(Evaluate(s), rule, "prod-hoge-user@"+region)
			assert.Equal(t, Fail, got, "%s on %s: %s", rule, region, f.Message)
		}
	}
}

func TestTablesWithPrefixFollowsEveryPage(t *testing.T) {
	db := &fakeDB{tables: [][]string{{"dev-a-user", "prod-a-user"}, {"prod-b-order", "prodx-c"}, {"stg-a-user", "prod-z-log"}}}
	got, err := TablesWithPrefix(context.Background(), db, "prod-")
	require.NoError(t, err)
	assert.Equal(t, []string{"prod-a-user", "prod-b-order", "prod-z-log"}, got)

	db.fail = "ListTables"
	_, err = TablesWithPrefix(context.Background(), db, "prod-")
	assert.EqualError(t, err, "listing tables: refused")
}

type fakeCW struct {
	pages [][]cwtypes.MetricAlarm
	fail  bool
}

func (f *fakeCW) DescribeAlarms(_ context.Context, in *cloudwatch.DescribeAlarmsInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.DescribeAlarmsOutput, error) {
	if f.fail {
		return nil, errRefused
	}
	if !slices.Equal(in.AlarmTypes, []cwtypes.AlarmType{cwtypes.AlarmTypeMetricAlarm}) {
		return nil, fmt.Errorf("alarm types %v", in.AlarmTypes)
	}
	i := 0
	if in.NextToken != nil {
		fmt.Sscanf(*in.NextToken, "page-%d", &i)
	}
	out := &cloudwatch.DescribeAlarmsOutput{MetricAlarms: f.pages[i]}
	if i+1 < len(f.pages) {
		out.NextToken = aws.String(fmt.Sprintf("page-%d", i+1))
	}
	return out, nil
}

func dim(k, v string) cwtypes.Dimension {
	return cwtypes.Dimension{Name: aws.String(k), Value: aws.String(v)}
}

func TestListAlarmsReadsSingleMetricAndMetricMath(t *testing.T) {
	cw := &fakeCW{pages: [][]cwtypes.MetricAlarm{
		{{AlarmName: aws.String("t-gsi1-read"), AlarmActions: []string{"arn:sns:a", "arn:sns:b"}, Namespace: aws.String("AWS/DynamoDB"), MetricName: aws.String("ReadThrottleEvents"),
			Dimensions: []cwtypes.Dimension{dim("TableName", "t"), dim("GlobalSecondaryIndexName", "gsi1")}}},
		{{AlarmName: aws.String("t-throttled"), Metrics: []cwtypes.MetricDataQuery{
			{Id: aws.String("e1"), Expression: aws.String("m1+m2")}, // the expression has no metric
			{Id: aws.String("m1"), MetricStat: &cwtypes.MetricStat{Metric: &cwtypes.Metric{Namespace: aws.String("AWS/DynamoDB"), MetricName: aws.String("ThrottledRequests"), Dimensions: []cwtypes.Dimension{dim("TableName", "t"), dim("Operation", "GetItem")}}}},
			{Id: aws.String("m2"), MetricStat: &cwtypes.MetricStat{Metric: &cwtypes.Metric{Namespace: aws.String("AWS/DynamoDB"), MetricName: aws.String("ThrottledRequests"), Dimensions: []cwtypes.Dimension{dim("TableName", "t"), dim("Operation", "PutItem")}}}},
			{Id: aws.String("m3"), MetricStat: &cwtypes.MetricStat{}}, // no metric: skipped
		}}},
	}}
	got, err := ListAlarms(context.Background(), cw)
	require.NoError(t, err)
	want := []Alarm{
		{Name: "t-gsi1-read", Actions: 2, Metrics: []Metric{{Namespace: "AWS/DynamoDB", Name: "ReadThrottleEvents", Dimensions: map[string]string{"TableName": "t", "GlobalSecondaryIndexName": "gsi1"}}}},
		{Name: "t-throttled", Actions: 0, Metrics: []Metric{
			{Namespace: "AWS/DynamoDB", Name: "ThrottledRequests", Dimensions: map[string]string{"TableName": "t", "Operation": "GetItem"}},
			{Namespace: "AWS/DynamoDB", Name: "ThrottledRequests", Dimensions: map[string]string{"TableName": "t", "Operation": "PutItem"}},
		}},
	}
	assert.Equal(t, want, got)

	cw.fail = true
	_, err = ListAlarms(context.Background(), cw)
	assert.EqualError(t, err, "describing CloudWatch alarms: refused")
}

type fakeLambda struct {
	pages  [][]ltypes.EventSourceMappingConfiguration
	fail   bool
	called []string
}

func (f *fakeLambda) ListEventSourceMappings(_ context.Context, in *lambda.ListEventSourceMappingsInput, _ ...func(*lambda.Options)) (*lambda.ListEventSourceMappingsOutput, error) {
	f.called = append(f.called, aws.ToString(in.EventSourceArn))
	if f.fail {
		return nil, errRefused
	}
	i := 0
	if in.Marker != nil {
		fmt.Sscanf(*in.Marker, "page-%d", &i)
	}
	out := &lambda.ListEventSourceMappingsOutput{EventSourceMappings: f.pages[i]}
	if i+1 < len(f.pages) {
		out.NextMarker = aws.String(fmt.Sprintf("page-%d", i+1))
	}
	return out, nil
}

func TestGatherMonitoringReadsTheStreamsMappings(t *testing.T) {
	const stream = "arn:aws:dynamodb:eu-west-1:123456789012:table/t/stream/2026-11-22T00:00:00.000"
	lm := &fakeLambda{pages: [][]ltypes.EventSourceMappingConfiguration{
		{{UUID: aws.String("u1"), FunctionArn: aws.String("arn:aws:lambda:eu-west-1:123456789012:function:c"), State: aws.String("Enabled"),
			BisectBatchOnFunctionError: aws.Bool(true), MaximumRetryAttempts: aws.Int32(3), MaximumRecordAgeInSeconds: aws.Int32(3600),
			DestinationConfig: &ltypes.DestinationConfig{OnFailure: &ltypes.OnFailure{Destination: aws.String("arn:aws:sqs:eu-west-1:123456789012:c-dlq")}}}},
		{{UUID: aws.String("u2"), FunctionArn: aws.String("arn:aws:lambda:eu-west-1:123456789012:function:d"), DestinationConfig: &ltypes.DestinationConfig{}}},
	}}
	alarms := []Alarm{{Name: "a"}}
	streamOn := &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
	s := TableState{Table: types.TableDescription{TableName: aws.String("t"), StreamSpecification: streamOn, LatestStreamArn: aws.String(stream)}}
	m, err := GatherMonitoring(context.Background(), lm, alarms, s)
	require.NoError(t, err)
	assert.Equal(t, alarms, m.Alarms)
	assert.Equal(t, []Consumer{
		{UUID: "u1", FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:c", State: "Enabled", Bisect: true, MaxRetries: aws.Int32(3), MaxRecordAge: aws.Int32(3600), OnFailureArn: "arn:aws:sqs:eu-west-1:123456789012:c-dlq"},
		{UUID: "u2", FunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:d"},
	}, m.Consumers, "the mappings of every page")
	assert.Equal(t, []string{stream, stream}, lm.called, "the mappings of this table's stream")

	// No stream, a disabled one or no stream ARN: no consumers to read.
	for name, table := range map[string]types.TableDescription{
		"no stream":       {TableName: aws.String("t")},
		"stream disabled": {TableName: aws.String("t"), StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}, LatestStreamArn: aws.String(stream)},
		"no stream ARN":   {TableName: aws.String("t"), StreamSpecification: streamOn},
	} {
		lm := &fakeLambda{fail: true}
		m, err := GatherMonitoring(context.Background(), lm, alarms, TableState{Table: table})
		require.NoError(t, err, name)
		assert.Empty(t, m.Consumers, name)
		assert.Equal(t, alarms, m.Alarms, name)
		assert.Empty(t, lm.called, name)
	}

	lm = &fakeLambda{fail: true}
	_, err = GatherMonitoring(context.Background(), lm, alarms, s)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "listing event source mappings of "+stream+": "), err.Error())
}
