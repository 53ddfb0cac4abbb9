package export

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// Metrics of the scheduled series; modules/dynamodb-export alarms on them.
const (
	MetricNamespace = "dynops/Export"
	MetricDimension = "TableName"
	MetricLag       = "LagSeconds"    // now minus the checkpoint
	MetricFailed    = "FailedExports" // exports that ended FAILED in this step
	MetricGaps      = "Gaps"          // 1 when the checkpoint fell out of PITR
	MetricErrors    = "StepErrors"    // 1 when the step itself failed
)

// MetricsAPI is the part of CloudWatch PublishMetrics uses.
type MetricsAPI interface {
	PutMetricData(context.Context, *cloudwatch.PutMetricDataInput, ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error)
}

// PublishMetrics records one step: lag, failed exports, gaps, and whether
// the step failed (stepErr). Every step publishes every metric, so a
// stopped scheduler shows as missing data (alarmed as breaching).
func PublishMetrics(ctx context.Context, cw MetricsAPI, out Outcome, stepErr error, now time.Time) error {
	dims := []cwtypes.Dimension{{Name: aws.String(MetricDimension), Value: aws.String(out.Table)}}
	datum := func(name string, v float64, unit cwtypes.StandardUnit) cwtypes.MetricDatum {
		return cwtypes.MetricDatum{MetricName: aws.String(name), Dimensions: dims, Value: aws.Float64(v), Unit: unit, Timestamp: aws.Time(now)}
	}
	var gap, failed float64
	if out.Gap {
		gap = 1
	}
	if stepErr != nil {
		failed = 1
	}
	data := []cwtypes.MetricDatum{
		datum(MetricFailed, float64(len(out.Failed)), cwtypes.StandardUnitCount),
		datum(MetricGaps, gap, cwtypes.StandardUnitCount),
		datum(MetricErrors, failed, cwtypes.StandardUnitCount),
	}
	if stepErr == nil { // a failed step knows no reliable lag: the missing point alarms
		data = append(data, datum(MetricLag, out.Lag.Seconds(), cwtypes.StandardUnitSeconds))
	}
	if _, err := cw.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{Namespace: aws.String(MetricNamespace), MetricData: data}); err != nil {
		return fmt.Errorf("publishing export metrics of %s: %w", out.Table, err)
	}
	return nil
}
