// Package readiness is the continuous readiness run behind the readiness
// Lambda (cmd/readiness): for one environment it runs the guideline check
// (internal/guideline, the code of `dynops check --env`), a restore test of
// one table's latest restorable point in time into a throwaway table,
// `dynops dr status` of the env's global tables (internal/failover), and
// publishes the results as CloudWatch metrics the module alarms on.
package readiness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/restore"
	"github.com/dynops/dynops/internal/tablesettings"
)

// Metrics; modules alarm on them. Every run publishes every metric, so a
// stopped schedule shows as missing data.
const (
	MetricNamespace    = "dynops/Readiness"
	MetricFailingRule  = "FailingRule"        // per RuleID: failing error-level findings
	MetricRestoreTime  = "RestoreTimeSeconds" // restore request to ACTIVE and verified
	MetricRestoreFail  = "RestoreTestFailed"  // 1 when the restore test failed
	MetricDRReady      = "DRReady"            // per global table: 1 when `dr status` finds a region ready, 0 not
	MetricDRNotReady   = "DRNotReady"         // per env: global tables no region is ready for (0 when none)
	DimensionEnv       = "Env"
	DimensionRuleID    = "RuleID"
	DimensionTable     = "Table"
	throwawayInfix     = "-dynops-restoretest-"
	DefaultLeftoverAge = 30 * time.Minute
)

// ThrowawayPrefix is the name prefix of the env's restore-test tables. It
// is reserved: modules/dynamodb-table refuses a table whose name starts
// with it, in any env.
func ThrowawayPrefix(env string) string { return env + throwawayInfix }

// ThrowawayTag is the tag the restore test sets on its table once it is
// ACTIVE (value: the env). A leftover is deleted only when it carries it, and
// the module's IAM policy allows DeleteTable only on tables that do.
const ThrowawayTag = "dynops:restore-test"

// Config is one run.
type Config struct {
	Env          string
	RestoreTable string        // the table whose latest restorable point is restored; "" skips the restore test
	LeftoverAge  time.Duration // throwaway tables older than this are deleted first
	AllowedEnvs  []string
	Now          func() time.Time
}

// RestoreResult is the restore test's outcome, read back from the service.
type RestoreResult struct {
	Source         string  `json:"source"`
	Target         string  `json:"target"`
	Seconds        float64 `json:"seconds"`
	SourceItems    int64   `json:"source_items"`
	RestoredItems  int64   `json:"restored_items"`
	SettingsDiffer string  `json:"settings_differ,omitempty"`
	Deleted        bool    `json:"deleted"`
	Error          string  `json:"error,omitempty"`
}

// Report is what a run found.
type Report struct {
	Env              string         `json:"env"`
	Tables           []string       `json:"tables"`
	FailingRules     map[string]int `json:"failing_rules"`
	LeftoversDeleted []string       `json:"leftovers_deleted"`
	// LeftoversKept are tables with the throwaway prefix the run did not
	// delete: not tagged ThrowawayTag=<env> by a restore test (a table of
	// someone else's, or a test killed before it tagged its table).
	LeftoversKept []string       `json:"leftovers_kept,omitempty"`
	Restore       *RestoreResult `json:"restore,omitempty"`
	// DR is `dynops dr status` of each global table (tables with replicas).
	DR []DRResult `json:"dr"`
	// NotGlobal are the tables without replicas: no DR status, no DRReady metric.
	NotGlobal []string `json:"not_global"`
}

// Clients are the APIs a run calls.
type Clients struct {
	DB     *dynamodb.Client
	CW     *cloudwatch.Client
	Lambda *lambda.Client
	Region string
	// Regional returns a DynamoDB client for a replica region.
	Regional func(region string) *dynamodb.Client
	// DR returns the clients `dynops dr status` reads in a region.
	DR failover.Regional
}

// NewClients builds the clients from one set.
func NewClients(s awsclients.Set) Clients {
	return Clients{
		DB: s.DynamoDB(), CW: s.CloudWatch(), Lambda: s.Lambda(nil), Region: s.Region(),
		Regional: func(region string) *dynamodb.Client { return s.In(region).DynamoDB() },
		DR:       failover.RegionalFrom(s),
	}
}

// Run checks the env, runs the restore test and publishes the metrics. It
// returns an error when a step could not run; failing rules and a failed
// restore test are in the report and the metrics, not errors.
func Run(ctx context.Context, c Clients, cfg Config) (Report, error) {
	if cfg.Env == "" {
		return Report{}, errors.New(`readiness needs an env (event "env" or READINESS_ENV)`)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.LeftoverAge <= 0 {
		cfg.LeftoverAge = DefaultLeftoverAge
	}
	if len(cfg.AllowedEnvs) == 0 {
		cfg.AllowedEnvs = guideline.DefaultEnvs()
	}
	rep := Report{Env: cfg.Env, FailingRules: map[string]int{}}
	var err error
	rep.LeftoversDeleted, rep.LeftoversKept, err = DeleteLeftovers(ctx, c.DB, cfg.Env, cfg.LeftoverAge, cfg.Now())
	if err != nil {
		return rep, err
	}
	all, err := guideline.TablesWithPrefix(ctx, c.DB, cfg.Env+"-")
	if err != nil {
		return rep, err
	}
	for _, t := range all {
		if !strings.HasPrefix(t, ThrowawayPrefix(cfg.Env)) {
			rep.Tables = append(rep.Tables, t)
		}
	}
	sort.Strings(rep.Tables)
	findings, err := guideline.CheckTables(ctx, guideline.Clients{
		DB: c.DB, Home: c.Region, CW: c.CW, Lambda: c.Lambda,
		Regional: func(region string) guideline.DynamoDB { return c.Regional(region) },
		// The built-in protection rule (no operator settings in a Lambda).
		Protected: protect.NewPolicy().TableProtected,
	}, rep.Tables, cfg.AllowedEnvs, nil)
	if err != nil {
		return rep, fmt.Errorf("guideline check of env %s: %w", cfg.Env, err)
	}
	for _, f := range findings {
		if f.Failing() {
			rep.FailingRules[f.Rule]++
		}
	}
	if rep.DR, rep.NotGlobal, err = DRStatus(ctx, c.DR, c.Region, rep.Tables, cfg.Now()); err != nil {
		return rep, err
	}
	if cfg.RestoreTable != "" {
		r := RestoreTest(ctx, c.DB, cfg.Env, cfg.RestoreTable, cfg.Now())
		rep.Restore = &r
	}
	return rep, Publish(ctx, c.CW, rep, cfg.Now())
}

// DeleteLeftovers deletes the env's throwaway tables created more than
// maxAge before now (a restore test killed before its own cleanup). The
// creation time is the table's, read back with DescribeTable. A table is
// deleted only when it has the throwaway prefix and the tag a restore test
// sets (ThrowawayTag=env): a prefixed table without it is kept and returned
// in kept, with why.
func DeleteLeftovers(ctx context.Context, db *dynamodb.Client, env string, maxAge time.Duration, now time.Time) (deleted, kept []string, err error) {
	names, err := guideline.TablesWithPrefix(ctx, db, ThrowawayPrefix(env))
	if err != nil {
		return nil, nil, err
	}
	for _, n := range names {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(n)})
		if err != nil {
			return deleted, kept, fmt.Errorf("reading leftover restore-test table %s: %w", n, err)
		}
		created := aws.ToTime(out.Table.CreationDateTime)
		if created.IsZero() || now.Sub(created) < maxAge || out.Table.TableStatus == types.TableStatusDeleting {
			continue // possibly a run in progress
		}
		ours, err := taggedThrowaway(ctx, db, out.Table.TableArn, env)
		if err != nil {
			return deleted, kept, fmt.Errorf("reading the tags of leftover restore-test table %s: %w", n, err)
		}
		if !ours {
			kept = append(kept, fmt.Sprintf("%s (no %s=%s tag: not made by a restore test, or one killed before it tagged it; delete it by hand if it is a leftover)", n, ThrowawayTag, env))
			continue
		}
		if _, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(n)}); err != nil {
			return deleted, kept, fmt.Errorf("deleting leftover restore-test table %s (created %s): %w", n, created.Format(time.RFC3339), err)
		}
		deleted = append(deleted, n)
	}
	return deleted, kept, nil
}

// taggedThrowaway tells whether the table carries ThrowawayTag=env.
func taggedThrowaway(ctx context.Context, db *dynamodb.Client, arn *string, env string) (bool, error) {
	in := &dynamodb.ListTagsOfResourceInput{ResourceArn: arn}
	for {
		out, err := db.ListTagsOfResource(ctx, in)
		if err != nil {
			return false, err
		}
		for _, t := range out.Tags {
			if aws.ToString(t.Key) == ThrowawayTag {
				return aws.ToString(t.Value) == env, nil
			}
		}
		if out.NextToken == nil {
			return false, nil
		}
		in.NextToken = out.NextToken
	}
}

// RestoreTest restores (the restore plan of internal/restore) source's latest restorable point in time to
// <env>-dynops-restoretest-<unix>, waits until it is ACTIVE, compares its
// item count and settings (key schema, indexes, billing) with source, and
// deletes it whatever happened.
func RestoreTest(ctx context.Context, db *dynamodb.Client, env, source string, now time.Time) (r RestoreResult) {
	r.Source, r.Target = source, ThrowawayPrefix(env)+strconv.FormatInt(now.Unix(), 10)
	start := time.Now()
	fail := func(err error) RestoreResult { r.Error = err.Error(); return r }
	// The restore input of `dynops restore --latest` (source's billing
	// mode, indexes, encryption), without its settings step: the throwaway
	// table must stay deletable.
	plan, err := restore.Prepare(ctx, db, restore.Request{Source: source, Target: r.Target, Latest: true, Now: now})
	if err != nil {
		return fail(fmt.Errorf("planning the restore test of %s: %w", source, err))
	}
	if _, err := db.RestoreTableToPointInTime(ctx, plan.Input); err != nil {
		return fail(fmt.Errorf("restoring %s to %s: %w", source, r.Target, err))
	}
	defer func() {
		// A fresh context: the cleanup runs even when ctx ended the test.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if _, err := db.DeleteTable(dctx, &dynamodb.DeleteTableInput{TableName: aws.String(r.Target)}); err != nil {
			r.Error = strings.TrimPrefix(r.Error+"; ", "; ") + fmt.Sprintf("deleting %s: %v (the next run deletes it)", r.Target, err)
			return
		}
		r.Deleted = true
	}()
	if err := tablesettings.WaitActive(ctx, db, r.Target, nil); err != nil {
		return fail(err)
	}
	r.Seconds = time.Since(start).Seconds()
	// The tag that makes it deletable (IAM and DeleteLeftovers check it).
	if err := tagThrowaway(ctx, db, env, r.Target); err != nil {
		return fail(err)
	}
	if r.SourceItems, err = count(ctx, db, source); err != nil {
		return fail(err)
	}
	if r.RestoredItems, err = count(ctx, db, r.Target); err != nil {
		return fail(err)
	}
	if r.SettingsDiffer, err = compare(ctx, db, source, r.Target); err != nil {
		return fail(err)
	}
	switch {
	case r.SourceItems != r.RestoredItems:
		r.Error = fmt.Sprintf("restored %s has %d items, %s has %d", r.Target, r.RestoredItems, source, r.SourceItems)
	case r.SettingsDiffer != "":
		r.Error = fmt.Sprintf("restored %s differs from %s: %s", r.Target, source, r.SettingsDiffer)
	}
	return r
}

// tagThrowaway tags the restore test's table ThrowawayTag=env.
func tagThrowaway(ctx context.Context, db *dynamodb.Client, env, table string) error {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return fmt.Errorf("reading %s to tag it: %w", table, err)
	}
	if _, err := db.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: out.Table.TableArn,
		Tags: []types.Tag{{Key: aws.String(ThrowawayTag), Value: aws.String(env)}}}); err != nil {
		return fmt.Errorf("tagging %s %s=%s (without it the table cannot be deleted: delete it by hand): %w", table, ThrowawayTag, env, err)
	}
	return nil
}

func count(ctx context.Context, db *dynamodb.Client, table string) (int64, error) {
	var n int64
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), Select: types.SelectCount})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("counting items of %s: %w", table, err)
		}
		n += int64(out.Count)
	}
	return n, nil
}

// shape is what a restore must carry over: key schema, indexes, billing.
func shape(t *types.TableDescription) map[string]string {
	keys := func(ks []types.KeySchemaElement) string {
		var s []string
		for _, k := range ks {
			s = append(s, aws.ToString(k.AttributeName)+":"+string(k.KeyType))
		}
		return strings.Join(s, ",")
	}
	// A table that never was on demand may have no BillingModeSummary:
	// provisioned capacity then says it is PROVISIONED (as internal/restore reads it).
	m := map[string]string{"key schema": keys(t.KeySchema), "billing": string(types.BillingModePayPerRequest)}
	switch {
	case t.BillingModeSummary != nil && t.BillingModeSummary.BillingMode != "":
		m["billing"] = string(t.BillingModeSummary.BillingMode)
	case t.ProvisionedThroughput != nil && aws.ToInt64(t.ProvisionedThroughput.ReadCapacityUnits) > 0:
		m["billing"] = string(types.BillingModeProvisioned)
	}
	for _, g := range t.GlobalSecondaryIndexes {
		m["GSI "+aws.ToString(g.IndexName)] = keys(g.KeySchema)
	}
	for _, l := range t.LocalSecondaryIndexes {
		m["LSI "+aws.ToString(l.IndexName)] = keys(l.KeySchema)
	}
	return m
}

func compare(ctx context.Context, db *dynamodb.Client, source, target string) (string, error) {
	var shapes [2]map[string]string
	for i, t := range []string{source, target} {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t)})
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", t, err)
		}
		shapes[i] = shape(out.Table)
	}
	var names []string
	for k := range shapes[0] {
		names = append(names, k)
	}
	for k := range shapes[1] {
		if _, ok := shapes[0][k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var diffs []string
	for _, k := range names {
		if shapes[0][k] != shapes[1][k] {
			diffs = append(diffs, fmt.Sprintf("%s %q vs %q", k, shapes[0][k], shapes[1][k]))
		}
	}
	return strings.Join(diffs, "; "), nil
}

// Publish records the run: FailingRule per guideline rule (0 when passing),
// DRReady per global table and DRNotReady (their count of not ready), and, with a restore test, RestoreTestFailed and (when it restored)
// RestoreTimeSeconds.
func Publish(ctx context.Context, cw *cloudwatch.Client, rep Report, now time.Time) error {
	env := cwtypes.Dimension{Name: aws.String(DimensionEnv), Value: aws.String(rep.Env)}
	datum := func(name string, v float64, unit cwtypes.StandardUnit, dims ...cwtypes.Dimension) cwtypes.MetricDatum {
		return cwtypes.MetricDatum{MetricName: aws.String(name), Dimensions: append([]cwtypes.Dimension{env}, dims...),
			Value: aws.Float64(v), Unit: unit, Timestamp: aws.Time(now)}
	}
	var data []cwtypes.MetricDatum
	for _, r := range guideline.Rules() {
		data = append(data, datum(MetricFailingRule, float64(rep.FailingRules[r.ID]), cwtypes.StandardUnitCount,
			cwtypes.Dimension{Name: aws.String(DimensionRuleID), Value: aws.String(r.ID)}))
	}
	notReady := 0.0
	for _, d := range rep.DR {
		ready := 1.0
		if !d.Ready {
			ready, notReady = 0, notReady+1
		}
		data = append(data, datum(MetricDRReady, ready, cwtypes.StandardUnitCount,
			cwtypes.Dimension{Name: aws.String(DimensionTable), Value: aws.String(d.Table)}))
	}
	data = append(data, datum(MetricDRNotReady, notReady, cwtypes.StandardUnitCount))
	if r := rep.Restore; r != nil {
		failed := 0.0
		if r.Error != "" {
			failed = 1
		}
		data = append(data, datum(MetricRestoreFail, failed, cwtypes.StandardUnitCount))
		if r.Seconds > 0 {
			data = append(data, datum(MetricRestoreTime, r.Seconds, cwtypes.StandardUnitSeconds))
		}
	}
	for batch := range slices.Chunk(data, 1000) { // PutMetricData takes up to 1,000 metrics per call
		if _, err := cw.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{Namespace: aws.String(MetricNamespace), MetricData: batch}); err != nil {
			return fmt.Errorf("publishing readiness metrics of env %s: %w", rep.Env, err)
		}
	}
	return nil
}
