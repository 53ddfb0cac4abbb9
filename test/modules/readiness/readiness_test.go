// Package readiness runs the readiness Lambda's real handler
// (internal/readiness, the code of cmd/readiness) behind the local Lambda
// Invoke endpoint (test/helpers/lambdaendpoint; moto cannot run functions) against
// the target, and reads back what it did: the restore time, the metrics in
// CloudWatch, and the throwaway tables gone.
package readiness

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/readiness"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/lambdaendpoint"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

const fn = "readiness"

// TestReadinessRun invokes the handler over the Lambda Invoke API: a
// leftover throwaway table from a killed run is deleted, the restore test
// restores, counts, compares and deletes its table and reports a restore
// time, and the metrics are in CloudWatch (read back with ListMetrics and
// GetMetricData).
func TestReadinessRun(t *testing.T) {
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	db := dynamodb.NewFromConfig(cfg)
	cw := cloudwatch.NewFromConfig(cfg, awsclients.CloudWatchQueryProtocol)
	env := harness.UniqueID() // not an allowed env: DDB-NAME-01 fails on every table
	source := env + "-orders"
	fixture.Create(t, db, fixture.Table{Name: source, HashKey: "user_id", RangeKey: "score", GSI: "email", PITR: true})
	fixture.Put(t, db, source, fixture.Users(30))
	// What a killed run leaves behind: tagged by its restore test.
	leftover := readiness.ThrowawayPrefix(env) + "1700000000"
	fixture.Create(t, db, fixture.Table{Name: leftover, HashKey: "id", Tags: map[string]string{readiness.ThrowawayTag: env}})
	// A table with the prefix the restore test did not make (issue 44): no
	// tag, or another env's; it is kept, whatever its name says.
	foreign := readiness.ThrowawayPrefix(env) + "1600000000"
	fixture.Create(t, db, fixture.Table{Name: foreign, HashKey: "id"})
	otherEnv := readiness.ThrowawayPrefix(env) + "1500000000"
	fixture.Create(t, db, fixture.Table{Name: otherEnv, HashKey: "id", Tags: map[string]string{readiness.ThrowawayTag: "prod"}})
	time.Sleep(20 * time.Millisecond)

	ep, err := lambdaendpoint.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ep.Close() })
	h := readiness.Handler{Clients: readiness.NewClients(awsclients.New(cfg)), LeftoverAge: 10 * time.Millisecond}
	ep.Register(fn, func() awslambda.Handler { return awslambda.NewHandler(h.Handle) })
	lm := lambda.NewFromConfig(cfg, func(o *lambda.Options) { o.BaseEndpoint = &ep.URL })
	start := time.Now()
	payload, _ := json.Marshal(readiness.Event{Env: env, RestoreTable: source})
	out, err := lm.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(fn), Payload: payload})
	require.NoError(t, err)
	require.Nil(t, out.FunctionError, "handler failed: %s", out.Payload)
	var rep readiness.Report
	require.NoError(t, json.Unmarshal(out.Payload, &rep))

	require.Equal(t, []string{leftover}, rep.LeftoversDeleted, "only the tagged leftover is deleted")
	require.Len(t, rep.LeftoversKept, 2)
	require.Contains(t, rep.LeftoversKept[0]+rep.LeftoversKept[1], otherEnv+" (no "+readiness.ThrowawayTag+"="+env+" tag")
	require.Contains(t, rep.LeftoversKept[0]+rep.LeftoversKept[1], foreign+" (no "+readiness.ThrowawayTag+"="+env+" tag")
	for _, kept := range []string{foreign, otherEnv} {
		_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(kept)})
		require.NoError(t, err, "%s is kept", kept)
	}
	require.Equal(t, []string{source}, rep.Tables, "throwaway tables are not checked")
	require.NotNil(t, rep.Restore)
	r := rep.Restore
	require.Empty(t, r.Error)
	require.True(t, strings.HasPrefix(r.Target, readiness.ThrowawayPrefix(env)))
	require.Greater(t, r.Seconds, 0.0)
	require.EqualValues(t, 30, r.SourceItems)
	require.EqualValues(t, 30, r.RestoredItems)
	require.True(t, r.Deleted)
	require.Positive(t, rep.FailingRules["DDB-NAME-01"], "env %s is not an allowed env", env)
	// The emulator has no global tables: the table lists no replicas, so
	// `dr status` skips it and says so; no DRReady metric for it.
	require.Equal(t, []string{source}, rep.NotGlobal, "a table without replicas is not global")
	require.Empty(t, rep.DR)

	// Read back: no throwaway table remains (the leftover and the test's own,
	// which was tagged before it was deleted: DeleteTable on an untagged one
	// is what the module's IAM policy refuses).
	left, err := guideline.TablesWithPrefix(ctx, db, readiness.ThrowawayPrefix(env))
	require.NoError(t, err)
	for _, n := range left {
		if n == foreign || n == otherEnv {
			continue
		}
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(n)})
		if err == nil {
			require.Equal(t, types.TableStatusDeleting, d.Table.TableStatus, "%s still there", n)
		}
	}

	// Read back the metrics.
	envDim := cwtypes.DimensionFilter{Name: aws.String(readiness.DimensionEnv), Value: aws.String(env)}
	lst, err := cw.ListMetrics(ctx, &cloudwatch.ListMetricsInput{Namespace: aws.String(readiness.MetricNamespace), Dimensions: []cwtypes.DimensionFilter{envDim}})
	require.NoError(t, err)
	names := map[string]int{}
	for _, m := range lst.Metrics {
		names[aws.ToString(m.MetricName)]++
	}
	require.Equal(t, len(guideline.Rules()), names[readiness.MetricFailingRule], "one FailingRule metric per rule")
	require.Equal(t, 1, names[readiness.MetricRestoreTime])
	require.Equal(t, 1, names[readiness.MetricRestoreFail])
	require.Equal(t, 0, names[readiness.MetricDRReady], "no DRReady for a table that is not global")
	require.Equal(t, 1, names[readiness.MetricDRNotReady])

	get := func(name string, dims ...cwtypes.Dimension) []float64 {
		return metricValues(t, cw, env, start, name, dims...)
	}
	require.InDelta(t, r.Seconds, get(readiness.MetricRestoreTime)[0], 0.001)
	require.Equal(t, []float64{0}, get(readiness.MetricRestoreFail))
	require.Equal(t, []float64{0}, get(readiness.MetricDRNotReady), "no global table, none not ready")
	require.Equal(t, []float64{float64(rep.FailingRules["DDB-NAME-01"])},
		get(readiness.MetricFailingRule, cwtypes.Dimension{Name: aws.String(readiness.DimensionRuleID), Value: aws.String("DDB-NAME-01")}))
}

// TestReadinessRestoreOfMissingTableFails: a restore test that cannot
// restore fails the invocation and publishes RestoreTestFailed=1.
func TestReadinessRestoreOfMissingTableFails(t *testing.T) {
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	env := harness.UniqueID()
	fixture.Create(t, dynamodb.NewFromConfig(cfg), fixture.Table{Name: env + "-orders", HashKey: "id"})
	ep, err := lambdaendpoint.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ep.Close() })
	h := readiness.Handler{Clients: readiness.NewClients(awsclients.New(cfg))}
	ep.Register(fn, func() awslambda.Handler { return awslambda.NewHandler(h.Handle) })
	lm := lambda.NewFromConfig(cfg, func(o *lambda.Options) { o.BaseEndpoint = &ep.URL })
	payload, _ := json.Marshal(readiness.Event{Env: env, RestoreTable: env + "-missing"})
	out, err := lm.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(fn), Payload: payload})
	require.NoError(t, err)
	require.NotNil(t, out.FunctionError)
	require.Contains(t, string(out.Payload), env+"-missing")

	cw := cloudwatch.NewFromConfig(cfg, awsclients.CloudWatchQueryProtocol)
	lst, err := cw.ListMetrics(ctx, &cloudwatch.ListMetricsInput{Namespace: aws.String(readiness.MetricNamespace), MetricName: aws.String(readiness.MetricRestoreFail),
		Dimensions: []cwtypes.DimensionFilter{{Name: aws.String(readiness.DimensionEnv), Value: aws.String(env)}}})
	require.NoError(t, err)
	require.Len(t, lst.Metrics, 1)
}

// TestReadinessPublishesDRReady: the DR results of a run go to CloudWatch
// as DRReady per global table (1 ready, 0 not) and DRNotReady per env (how
// many are not ready), read back with GetMetricData. (The emulator has no
// global tables, so the results are given here; the decision itself is
// tested with fakes in internal/readiness.)
func TestReadinessPublishesDRReady(t *testing.T) {
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	cw := cloudwatch.NewFromConfig(cfg, awsclients.CloudWatchQueryProtocol)
	env := harness.UniqueID()
	now := time.Now()
	rep := readiness.Report{Env: env, FailingRules: map[string]int{}, DR: []readiness.DRResult{
		{Table: env + "-session", Ready: true}, {Table: env + "-cart", Ready: false, Reason: "to eu-central-1: pointer: ..."},
	}}
	require.NoError(t, readiness.Publish(ctx, cw, rep, now))
	get := func(name string, dims ...cwtypes.Dimension) []float64 {
		return metricValues(t, cw, env, now, name, dims...)
	}
	table := func(n string) cwtypes.Dimension {
		return cwtypes.Dimension{Name: aws.String(readiness.DimensionTable), Value: aws.String(n)}
	}
	require.Equal(t, []float64{1}, get(readiness.MetricDRReady, table(env+"-session")))
	require.Equal(t, []float64{0}, get(readiness.MetricDRReady, table(env+"-cart")))
	require.Equal(t, []float64{1}, get(readiness.MetricDRNotReady))
}

// metricValues reads back the Maximum of a readiness metric of env (plus
// dims) published since start.
func metricValues(t *testing.T, cw *cloudwatch.Client, env string, start time.Time, name string, dims ...cwtypes.Dimension) []float64 {
	t.Helper()
	dims = append([]cwtypes.Dimension{{Name: aws.String(readiness.DimensionEnv), Value: aws.String(env)}}, dims...)
	md, err := cw.GetMetricData(context.Background(), &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(start.Add(-time.Minute)), EndTime: aws.Time(time.Now().Add(time.Minute)),
		MetricDataQueries: []cwtypes.MetricDataQuery{{Id: aws.String("m"), MetricStat: &cwtypes.MetricStat{
			Metric: &cwtypes.Metric{Namespace: aws.String(readiness.MetricNamespace), MetricName: aws.String(name), Dimensions: dims},
			Period: aws.Int32(60), Stat: aws.String("Maximum")}}},
	})
	require.NoError(t, err)
	require.Len(t, md.MetricDataResults, 1)
	return md.MetricDataResults[0].Values
}
