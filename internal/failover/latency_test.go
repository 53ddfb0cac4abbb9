package failover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeMetrics answers GetMetricData with the given pages of ReplicationLatency
// values (milliseconds, as CloudWatch has them): the decision logic of the
// latency check without AWS (moto has no replication metrics at all).
type fakeMetrics struct {
	pages [][]cwtypes.MetricDataResult
	err   error
	in    []*cloudwatch.GetMetricDataInput
}

func (f *fakeMetrics) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	f.in = append(f.in, in)
	if f.err != nil {
		return nil, f.err
	}
	i := len(f.in) - 1
	out := &cloudwatch.GetMetricDataOutput{MetricDataResults: f.pages[i]}
	if i+1 < len(f.pages) {
		out.NextToken = aws.String("page")
	}
	return out, nil
}

func series(id string, values ...float64) cwtypes.MetricDataResult {
	return cwtypes.MetricDataResult{Id: aws.String(id), Values: values}
}

// TestReplicationLatency: Max is the largest "maximum" datapoint, Avg the
// mean of the "average" ones (both milliseconds into a Duration), across
// every page; the window ends a minute after now and starts window before
// it; an error is reported, not a zero latency.
func TestReplicationLatency(t *testing.T) {
	now := time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		pages [][]cwtypes.MetricDataResult
		want  Latency
	}{
		{"no datapoints", [][]cwtypes.MetricDataResult{{series("maximum"), series("average")}},
			Latency{Receiving: "eu-central-1"}},
		{"one page", [][]cwtypes.MetricDataResult{{series("maximum", 900, 1500.5, 20), series("average", 400, 100, 250)}},
			Latency{Receiving: "eu-central-1", Max: 1500500 * time.Microsecond, Avg: 250 * time.Millisecond, Datapoints: 3}},
		{"two pages", [][]cwtypes.MetricDataResult{{series("maximum", 30000), series("average", 10)}, {series("maximum", 45000, 2), series("average", 20, 60)}},
			Latency{Receiving: "eu-central-1", Max: 45 * time.Second, Avg: 30 * time.Millisecond, Datapoints: 3}},
		{"an unknown series is ignored", [][]cwtypes.MetricDataResult{{series("other", 99999), series("average", 5)}},
			Latency{Receiving: "eu-central-1", Avg: 5 * time.Millisecond, Datapoints: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cw := &fakeMetrics{pages: c.pages}
			got := replicationLatency(context.Background(), cw, "prod-hoge-session", "eu-central-1", 15*time.Minute, now)
			assert.Equal(t, c.want, got)
			require.Len(t, cw.in, len(c.pages))
			assert.Equal(t, now.Add(-15*time.Minute), aws.ToTime(cw.in[0].StartTime))
			assert.Equal(t, now.Add(time.Minute), aws.ToTime(cw.in[0].EndTime))
		})
	}
	t.Run("CloudWatch does not answer", func(t *testing.T) {
		cw := &fakeMetrics{err: errors.New("connection refused")}
		got := replicationLatency(context.Background(), cw, "prod-hoge-session", "eu-central-1", 15*time.Minute, now)
		assert.Equal(t, 0, got.Datapoints)
		assert.Contains(t, got.Error, "reading ReplicationLatency into eu-central-1: connection refused")
	})
}
