package guideline

import (
	"context"
	"fmt"
	"github.com/dynops/dynops/internal/ddbtags"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// DynamoDB is the part of the DynamoDB API the checks read.
type DynamoDB interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	DescribeContinuousBackups(context.Context, *dynamodb.DescribeContinuousBackupsInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeContinuousBackupsOutput, error)
	DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
	ListTagsOfResource(context.Context, *dynamodb.ListTagsOfResourceInput, ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error)
	ListTables(context.Context, *dynamodb.ListTablesInput, ...func(*dynamodb.Options)) (*dynamodb.ListTablesOutput, error)
}

// Gather reads what Evaluate needs about table.
func Gather(ctx context.Context, db DynamoDB, table string) (TableState, error) {
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return TableState{}, fmt.Errorf("describing table %s: %w", table, err)
	}
	s := TableState{Table: *dt.Table}
	cb, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: &table})
	if err != nil {
		return TableState{}, fmt.Errorf("describing continuous backups of %s: %w", table, err)
	}
	if cb.ContinuousBackupsDescription != nil {
		s.PITR = cb.ContinuousBackupsDescription.PointInTimeRecoveryDescription
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: &table})
	if err != nil {
		return TableState{}, fmt.Errorf("describing TTL of %s: %w", table, err)
	}
	s.TTL = ttl.TimeToLiveDescription
	tags, err := ddbtags.List(ctx, db, deref(dt.Table.TableArn))
	if err != nil {
		return TableState{}, fmt.Errorf("listing tags of %s: %w", table, err)
	}
	s.Tags = tags
	return s, nil
}

// GatherReplicas reads, in its own region, every replica of the global table
// in s (DescribeTable's Replicas other than home): deletion protection and
// PITR. client returns a DynamoDB client for a region. A replica that cannot
// be read is kept with its error, so the checks fail closed.
func GatherReplicas(ctx context.Context, client func(region string) DynamoDB, home string, s *TableState) {
	table := deref(s.Table.TableName)
	for _, r := range s.Table.Replicas {
		region := deref(r.RegionName)
		if region == "" || region == home {
			continue
		}
		rs := ReplicaState{Region: region}
		db := client(region)
		dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
		if err != nil {
			rs.Err = fmt.Errorf("describing %s in %s: %w", table, region, err)
			s.Replicas = append(s.Replicas, rs)
			continue
		}
		rs.DeletionProtection = dt.Table.DeletionProtectionEnabled
		cb, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: &table})
		if err != nil {
			rs.Err = fmt.Errorf("describing continuous backups of %s in %s: %w", table, region, err)
		} else if cb.ContinuousBackupsDescription != nil {
			rs.PITR = cb.ContinuousBackupsDescription.PointInTimeRecoveryDescription
		}
		s.Replicas = append(s.Replicas, rs)
	}
}

// TablesWithPrefix lists the tables whose names start with prefix, following every page.
func TablesWithPrefix(ctx context.Context, db DynamoDB, prefix string) ([]string, error) {
	var out []string
	p := dynamodb.NewListTablesPaginator(db, &dynamodb.ListTablesInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing tables: %w", err)
		}
		for _, n := range page.TableNames {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// CloudWatch is the part of the CloudWatch API the monitoring checks read.
type CloudWatch interface {
	DescribeAlarms(context.Context, *cloudwatch.DescribeAlarmsInput, ...func(*cloudwatch.Options)) (*cloudwatch.DescribeAlarmsOutput, error)
}

// Lambda is the part of the Lambda API the stream consumer checks read.
type Lambda interface {
	ListEventSourceMappings(context.Context, *lambda.ListEventSourceMappingsInput, ...func(*lambda.Options)) (*lambda.ListEventSourceMappingsOutput, error)
}

// ListAlarms reads every metric alarm of the account and region once, with
// the metrics each watches (single metric or metric math).
func ListAlarms(ctx context.Context, cw CloudWatch) ([]Alarm, error) {
	var out []Alarm
	p := cloudwatch.NewDescribeAlarmsPaginator(cw, &cloudwatch.DescribeAlarmsInput{AlarmTypes: []cwtypes.AlarmType{cwtypes.AlarmTypeMetricAlarm}})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing CloudWatch alarms: %w", err)
		}
		for _, a := range page.MetricAlarms {
			al := Alarm{Name: deref(a.AlarmName), Actions: len(a.AlarmActions)}
			if a.MetricName != nil {
				al.Metrics = append(al.Metrics, Metric{Namespace: deref(a.Namespace), Name: deref(a.MetricName), Dimensions: dims(a.Dimensions)})
			}
			for _, q := range a.Metrics {
				if q.MetricStat != nil && q.MetricStat.Metric != nil {
					m := q.MetricStat.Metric
					al.Metrics = append(al.Metrics, Metric{Namespace: deref(m.Namespace), Name: deref(m.MetricName), Dimensions: dims(m.Dimensions)})
				}
			}
			out = append(out, al)
		}
	}
	return out, nil
}

func dims(ds []cwtypes.Dimension) map[string]string {
	out := make(map[string]string, len(ds))
	for _, d := range ds {
		out[deref(d.Name)] = deref(d.Value)
	}
	return out
}

// GatherMonitoring returns the monitoring around the table in s: the given
// alarms (from ListAlarms) and the Lambda event source mappings on its stream.
func GatherMonitoring(ctx context.Context, lm Lambda, alarms []Alarm, s TableState) (*Monitoring, error) {
	m := &Monitoring{Alarms: alarms}
	stream := deref(s.Table.LatestStreamArn)
	if ss := s.Table.StreamSpecification; ss == nil || !isTrue(ss.StreamEnabled) || stream == "" {
		return m, nil
	}
	p := lambda.NewListEventSourceMappingsPaginator(lm, &lambda.ListEventSourceMappingsInput{EventSourceArn: &stream})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing event source mappings of %s: %w", stream, err)
		}
		for _, e := range page.EventSourceMappings {
			c := Consumer{
				UUID: deref(e.UUID), FunctionArn: deref(e.FunctionArn), State: deref(e.State),
				Bisect: isTrue(e.BisectBatchOnFunctionError), MaxRetries: e.MaximumRetryAttempts, MaxRecordAge: e.MaximumRecordAgeInSeconds,
			}
			if d := e.DestinationConfig; d != nil && d.OnFailure != nil {
				c.OnFailureArn = deref(d.OnFailure.Destination)
			}
			m.Consumers = append(m.Consumers, c)
		}
	}
	return m, nil
}
