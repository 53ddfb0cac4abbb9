package export

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportwindow"
	"github.com/dynops/dynops/internal/testctx"
)

var errKilled = errors.New("killed")

// crashyAWS is DynamoDB at the SDK interface for the series: exports are
// idempotent by ClientToken (as AWS documents for 8 hours), complete on the
// first DescribeExport after the step that started them, and the checkpoint
// item honours the conditions of CheckpointStore.Save. Call number crashAt
// takes effect and then "kills" the process (its answer is lost), or, with
// before, kills it before it takes effect.
type crashyAWS struct {
	now       time.Time
	start     time.Time
	byToken   map[string]*types.ExportDescription
	requested []string // windows of distinct tokens, in order
	item      map[string]types.AttributeValue
	calls     int
	crashAt   int
	before    bool
	step      int
	created   map[string]int // arn -> step
}

func newCrashy(crashAt int, before bool) *crashyAWS {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	return &crashyAWS{now: start, start: start.Add(-2 * time.Hour), byToken: map[string]*types.ExportDescription{},
		crashAt: crashAt, before: before, created: map[string]int{}}
}

// call counts a call; it reports whether to crash before and after the effect.
func (c *crashyAWS) call() (crashBefore, crashAfter bool) {
	c.calls++
	if c.calls != c.crashAt {
		return false, false
	}
	return c.before, !c.before
}

func (c *crashyAWS) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	if b, a := c.call(); b || a {
		return nil, errKilled
	}
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableArn: aws.String("arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user")}}, nil
}

func (c *crashyAWS) DescribeContinuousBackups(context.Context, *dynamodb.DescribeContinuousBackupsInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeContinuousBackupsOutput, error) {
	if b, a := c.call(); b || a {
		return nil, errKilled
	}
	return &dynamodb.DescribeContinuousBackupsOutput{ContinuousBackupsDescription: &types.ContinuousBackupsDescription{
		PointInTimeRecoveryDescription: &types.PointInTimeRecoveryDescription{PointInTimeRecoveryStatus: types.PointInTimeRecoveryStatusEnabled,
			EarliestRestorableDateTime: aws.Time(c.start), LatestRestorableDateTime: aws.Time(c.now.Add(-5 * time.Minute))}}}, nil
}

func (c *crashyAWS) ExportTableToPointInTime(_ context.Context, in *dynamodb.ExportTableToPointInTimeInput, _ ...func(*dynamodb.Options)) (*dynamodb.ExportTableToPointInTimeOutput, error) {
	b, a := c.call()
	if b {
		return nil, errKilled
	}
	tok := aws.ToString(in.ClientToken)
	d, ok := c.byToken[tok]
	if !ok {
		arn := fmt.Sprintf("arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user/export/%02d", len(c.byToken))
		d = &types.ExportDescription{ExportArn: &arn, ExportStatus: types.ExportStatusInProgress, ExportType: in.ExportType,
			ExportTime: in.ExportTime, IncrementalExportSpecification: in.IncrementalExportSpecification}
		c.byToken[tok] = d
		c.created[arn] = c.step
		w := "full@" + aws.ToTime(in.ExportTime).Format(time.RFC3339)
		if s := in.IncrementalExportSpecification; s != nil {
			w = aws.ToTime(s.ExportFromTime).Format(time.RFC3339) + ".." + aws.ToTime(s.ExportToTime).Format(time.RFC3339)
		}
		c.requested = append(c.requested, w)
	}
	if a {
		return nil, errKilled
	}
	return &dynamodb.ExportTableToPointInTimeOutput{ExportDescription: d}, nil
}

func (c *crashyAWS) DescribeExport(_ context.Context, in *dynamodb.DescribeExportInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeExportOutput, error) {
	if b, a := c.call(); b || a {
		return nil, errKilled
	}
	for _, d := range c.byToken {
		if aws.ToString(d.ExportArn) == aws.ToString(in.ExportArn) {
			if c.created[aws.ToString(d.ExportArn)] < c.step {
				d.ExportStatus = types.ExportStatusCompleted
			}
			cp := *d
			return &dynamodb.DescribeExportOutput{ExportDescription: &cp}, nil
		}
	}
	return nil, &types.ExportNotFoundException{Message: aws.String("no such export")}
}

func (c *crashyAWS) ListExports(context.Context, *dynamodb.ListExportsInput, ...func(*dynamodb.Options)) (*dynamodb.ListExportsOutput, error) {
	return &dynamodb.ListExportsOutput{}, nil
}

func (c *crashyAWS) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if b, a := c.call(); b || a {
		return nil, errKilled
	}
	return &dynamodb.GetItemOutput{Item: c.item}, nil
}

func (c *crashyAWS) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	b, a := c.call()
	if b {
		return nil, errKilled
	}
	cond := aws.ToString(in.ConditionExpression)
	switch {
	case strings.HasPrefix(cond, "attribute_not_exists") && c.item != nil:
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("exists")}
	case strings.HasPrefix(cond, "#v") && (c.item == nil || c.item[attrVersion].(*types.AttributeValueMemberN).Value != in.ExpressionAttributeValues[":v"].(*types.AttributeValueMemberN).Value):
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("version")}
	}
	c.item = in.Item
	if a {
		return nil, errKilled
	}
	return &dynamodb.PutItemOutput{}, nil
}

// run steps the series hourly for a day and returns the windows requested
// and the final checkpoint.
func (c *crashyAWS) run(t *testing.T) ([]string, time.Time) {
	s := Series{DB: c, Checkpoints: CheckpointStore{DB: c, Table: "dev-hoge-export-checkpoint"}, Table: "dev-hoge-user",
		Target: Target{Bucket: "b", Prefix: "p"}, Now: func() time.Time { return c.now }}
	for c.step = 1; c.step <= 24; c.step++ {
		c.now = c.now.Add(time.Hour)
		if _, err := s.Step(testctx.Bounded(t)); err != nil && !errors.Is(err, errKilled) && !errors.Is(err, ErrConflict) {
			t.Fatalf("step %d: %v", c.step, err)
		}
	}
	c.crashAt = -1 // reading the result does not crash
	st, err := s.Checkpoints.Load(testctx.Bounded(t), s.Table)
	require.NoError(t, err)
	return c.requested, st.Checkpoint
}

// chained checks the windows requested: one full export, then windows that
// start where the previous one ended (no gap) and never repeat or overlap
// (no duplicate window).
func chained(t *testing.T, windows []string, what string) {
	t.Helper()
	require.NotEmpty(t, windows, what)
	require.True(t, strings.HasPrefix(windows[0], "full@"), "%s: the series starts with a full export: %v", what, windows)
	prevEnd := strings.TrimPrefix(windows[0], "full@")
	seen := map[string]bool{}
	for _, w := range windows[1:] {
		require.False(t, strings.HasPrefix(w, "full@"), "%s: a second full export %s: %v", what, w, windows)
		from, to, _ := strings.Cut(w, "..")
		require.Equal(t, prevEnd, from, "%s: window %s does not start where the previous ended (gap or overlap): %v", what, w, windows)
		require.False(t, seen[w], "%s: window %s requested twice", what, w)
		seen[w] = true
		prevEnd = to
	}
}

// TestSeriesSurvivesACrashAtEveryCall: the series killed at any call (before
// or after the call took effect: between requesting an export and recording
// it, between COMPLETED and advancing the checkpoint, ...) and stepped on
// keeps one unbroken chain of windows, none requested twice under different
// tokens, and ends at most one step behind the run without a crash.
func TestSeriesSurvivesACrashAtEveryCall(t *testing.T) {
	clean := newCrashy(0, false)
	wantWindows, wantCheckpoint := clean.run(t)
	require.Greater(t, len(wantWindows), 5)
	chained(t, wantWindows, "no crash")
	points := 0
	for k := 1; k <= clean.calls; k++ {
		for _, before := range []bool{true, false} {
			c := newCrashy(k, before)
			windows, checkpoint := c.run(t)
			what := fmt.Sprintf("crash at call %d (before the effect: %v)", k, before)
			chained(t, windows, what)
			require.False(t, checkpoint.Before(wantCheckpoint.Add(-time.Hour)), "%s: checkpoint %s, want %s or one step behind", what, checkpoint, wantCheckpoint)
			require.Len(t, c.byToken, len(windows), "%s: one export per token", what)
			points++
		}
	}
	t.Logf("%d crash points (every call of a 24-step series, before and after its effect); %d windows without a crash", points, len(wantWindows))
}

// TestStepOutcomeIsTheStoredState: every step's outcome carries the state
// it left in the checkpoint table (read back) and its lag; the CLI's --wait
// loop and its "checkpoint ...; lag ..." line read them. Before the named
// results, every outcome said "no checkpoint, nothing in flight".
func TestStepOutcomeIsTheStoredState(t *testing.T) {
	c := newCrashy(0, false)
	s := Series{DB: c, Checkpoints: CheckpointStore{DB: c, Table: "dev-hoge-export-checkpoint"}, Table: "dev-hoge-user",
		Target: Target{Bucket: "b", Prefix: "p"}, Now: func() time.Time { return c.now }}
	inFlight, advanced := 0, 0
	for c.step = 1; c.step <= 12; c.step++ {
		c.now = c.now.Add(time.Hour)
		out, err := s.Step(testctx.Bounded(t))
		require.NoError(t, err, "step %d", c.step)
		stored, err := s.Checkpoints.Load(testctx.Bounded(t), s.Table)
		require.NoError(t, err)
		require.Equal(t, stored.Checkpoint, out.State.Checkpoint, "step %d: the outcome's checkpoint is the stored one", c.step)
		require.Equal(t, stored.InFlight != nil, out.State.InFlight != nil, "step %d: the outcome's in-flight export is the stored one", c.step)
		if stored.InFlight != nil {
			require.Equal(t, stored.InFlight.ExportArn, out.State.InFlight.ExportArn, "step %d", c.step)
			inFlight++
		}
		if !stored.Checkpoint.IsZero() {
			advanced++
			require.Equal(t, exportwindow.Lag(stored, c.now), out.Lag, "step %d: the lag of the stored checkpoint", c.step)
		}
	}
	require.Positive(t, inFlight, "some steps left an export in flight")
	require.Positive(t, advanced, "the checkpoint advanced")
}
