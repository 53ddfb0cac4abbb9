package export

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// importsDB is a fake of ImportTable and ListImports (the decision logic
// only: the emulator has no ListImports). Each ImportTable call takes the
// next outcome: whether the request lands (an import starts) and the
// error its caller sees.
type importsDB struct {
	outcomes []outcome
	imports  []types.ImportSummary
	calls    int
	listErr  error
	pageSize int
}

type outcome struct {
	lands bool
	err   error
}

func (d *importsDB) ImportTable(_ context.Context, in *dynamodb.ImportTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.ImportTableOutput, error) {
	o := outcome{lands: true}
	if d.calls < len(d.outcomes) {
		o = d.outcomes[d.calls]
	}
	d.calls++
	arn := fmt.Sprintf("arn:aws:dynamodb:eu-west-1:111122223333:table/%s/import/%02d", aws.ToString(in.TableCreationParameters.TableName), d.calls)
	if o.lands {
		d.imports = append(d.imports, types.ImportSummary{ImportArn: aws.String(arn), ImportStatus: types.ImportStatusInProgress,
			TableArn: aws.String("arn:aws:dynamodb:eu-west-1:111122223333:table/" + aws.ToString(in.TableCreationParameters.TableName)), S3BucketSource: in.S3BucketSource})
	}
	if o.err != nil {
		return nil, o.err
	}
	return &dynamodb.ImportTableOutput{ImportTableDescription: &types.ImportTableDescription{ImportArn: aws.String(arn), ImportStatus: types.ImportStatusInProgress}}, nil
}

func (d *importsDB) DescribeImport(context.Context, *dynamodb.DescribeImportInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeImportOutput, error) {
	return nil, errors.New("not used")
}

// ListImports pages by pageSize (default 2, so paging is exercised).
func (d *importsDB) ListImports(ctx context.Context, in *dynamodb.ListImportsInput, _ ...func(*dynamodb.Options)) (*dynamodb.ListImportsOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the SDK: a call under a done context fails
	}
	if d.listErr != nil {
		return nil, d.listErr
	}
	size := d.pageSize
	if size == 0 {
		size = 2
	}
	start := 0
	if in.NextToken != nil {
		_, _ = fmt.Sscan(*in.NextToken, &start)
	}
	end := min(start+size, len(d.imports))
	out := &dynamodb.ListImportsOutput{ImportSummaryList: d.imports[start:end]}
	if end < len(d.imports) {
		out.NextToken = aws.String(fmt.Sprint(end))
	}
	return out, nil
}

func summary(table, bucket, prefix string, st types.ImportStatus, n int) types.ImportSummary {
	return types.ImportSummary{ImportArn: aws.String(fmt.Sprintf("arn:aws:dynamodb:eu-west-1:111122223333:table/%s/import/old%d", table, n)), ImportStatus: st,
		TableArn: aws.String("arn:aws:dynamodb:eu-west-1:111122223333:table/" + table), S3BucketSource: &types.S3BucketSource{S3Bucket: aws.String(bucket), S3KeyPrefix: aws.String(prefix)}}
}

// TestStartImportTakesTheImportItStarted: after any ImportTable error,
// StartImport looks for an import already started into the same table from
// the same S3 source and takes it instead of starting another; it retries
// only when there is none and the error is retryable, and stops (starting
// nothing more) when the imports cannot be listed or several match.
func TestStartImportTakesTheImportItStarted(t *testing.T) {
	const table, bucket, prefix = "stg-hoge-user", "stg-exports", "AWSDynamoDB/01-full/data/"
	src := Source{Bucket: bucket, DataPrefix: prefix}
	throttled := &smithy.GenericAPIError{Code: "ThrottlingException", Message: "slow down"}
	reset := fmt.Errorf("connection reset: %w", &smithy.GenericAPIError{Code: "InternalServerError", Message: "503", Fault: smithy.FaultServer})
	inUse := &types.ResourceInUseException{Message: aws.String("Table already exists: " + table)}
	invalid := &smithy.GenericAPIError{Code: "ValidationException", Message: "bad key schema"}
	cases := []struct {
		name      string
		outcomes  []outcome
		before    []types.ImportSummary // imports that exist before the run
		listErr   error
		calls     int // ImportTable calls
		adopted   bool
		arnSuffix string
		errs      []string
	}{
		{name: "answered", outcomes: []outcome{{lands: true}}, calls: 1, arnSuffix: "/import/01"},
		{name: "lost answer (throttle after landing): taken", outcomes: []outcome{{true, throttled}}, calls: 1, adopted: true, arnSuffix: "/import/01"},
		{name: "lost answer (5xx after landing): taken", outcomes: []outcome{{true, reset}}, calls: 1, adopted: true, arnSuffix: "/import/01"},
		{name: "the SDK's retry found the table the first attempt created: taken", outcomes: []outcome{{true, inUse}}, calls: 1, adopted: true, arnSuffix: "/import/01"},
		{name: "throttled, not landed: retried once", outcomes: []outcome{{false, throttled}, {lands: true}}, calls: 2, arnSuffix: "/import/02"},
		{name: "throttled twice, not landed, then lost: taken", outcomes: []outcome{{false, throttled}, {false, throttled}, {true, reset}}, calls: 3, adopted: true, arnSuffix: "/import/03"},
		{name: "not retryable, nothing started: the error", outcomes: []outcome{{false, invalid}}, calls: 1, errs: []string{"ValidationException", "importing s3://stg-exports/" + prefix + " into " + table}},
		{name: "an earlier FAILED import of the same source is not taken", before: []types.ImportSummary{summary(table, bucket, prefix, types.ImportStatusFailed, 1)},
			outcomes: []outcome{{false, throttled}, {lands: true}}, calls: 2, arnSuffix: "/import/02"},
		{name: "a COMPLETED import of the same source is taken", before: []types.ImportSummary{summary(table, bucket, prefix, types.ImportStatusCompleted, 1)},
			outcomes: []outcome{{false, inUse}}, calls: 1, adopted: true, arnSuffix: "/import/old1"},
		{name: "an import into the table from another prefix is not taken", before: []types.ImportSummary{summary(table, bucket, "AWSDynamoDB/00-old/data/", types.ImportStatusInProgress, 1)},
			outcomes: []outcome{{false, inUse}}, calls: 1, errs: []string{"ResourceInUseException"}},
		{name: "an import of the same source into another table is not taken", before: []types.ImportSummary{summary(table+"-old", bucket, prefix, types.ImportStatusInProgress, 1)},
			outcomes: []outcome{{false, throttled}, {lands: true}}, calls: 2, arnSuffix: "/import/02"},
		{name: "a table whose name ends like this one is not taken", before: []types.ImportSummary{summary("x"+table, bucket, prefix, types.ImportStatusInProgress, 1)},
			outcomes: []outcome{{false, throttled}, {lands: true}}, calls: 2, arnSuffix: "/import/02"},
		{name: "two live imports of the same source: refused, naming both", before: []types.ImportSummary{summary(table, bucket, prefix, types.ImportStatusInProgress, 1)},
			outcomes: []outcome{{true, reset}}, calls: 1, errs: []string{"2 imports into " + table, "old1 (IN_PROGRESS)", "/import/01 (IN_PROGRESS)", "describe-import"}},
		{name: "imports cannot be listed: nothing more started", listErr: errors.New("AccessDeniedException: not authorized to perform dynamodb:ListImports"),
			outcomes: []outcome{{true, reset}}, calls: 1, errs: []string{"dynamodb:ListImports", "nothing more was started", "aws dynamodb list-imports"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := &importsDB{outcomes: c.outcomes, imports: append([]types.ImportSummary{}, c.before...), listErr: c.listErr}
			imp, adopted, err := StartImport(testctx.Bounded(t), db, src, table, Schema{}, "token")
			assert.Equal(t, c.calls, db.calls, "ImportTable calls")
			if c.errs != nil {
				require.Error(t, err)
				for _, e := range c.errs {
					assert.ErrorContains(t, err, e)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.adopted, adopted)
			assert.Contains(t, imp.Arn, c.arnSuffix)
			live := 0
			for _, i := range db.imports {
				if i.ImportStatus == types.ImportStatusInProgress && aws.ToString(i.S3BucketSource.S3KeyPrefix) == prefix && aws.ToString(i.TableArn) == "arn:aws:dynamodb:eu-west-1:111122223333:table/"+table {
					live++
				}
			}
			assert.LessOrEqual(t, live, 1, "never a second import of the same source into the table")
		})
	}
}

// TestStartImportGivesUpAfterTheRetryPolicysAttempts: an ImportTable that is
// throttled every time and starts nothing is tried exactly as many times as
// the one retry policy allows (awsconfig.Retryer), then the throttle is the
// error. It waits out the policy's real backoff (seconds, no CPU); a retry
// loop that never ends fails on the deadline instead of hanging.
func TestStartImportGivesUpAfterTheRetryPolicysAttempts(t *testing.T) {
	throttled := &smithy.GenericAPIError{Code: "ThrottlingException", Message: "slow down"}
	attempts := awsconfig.Retryer(0).MaxAttempts()
	require.Greater(t, attempts, 1, "the retry policy retries")
	outcomes := make([]outcome, attempts+5)
	for i := range outcomes {
		outcomes[i] = outcome{false, throttled}
	}
	db := &importsDB{outcomes: outcomes}
	ctx := testctx.Bounded(t)
	_, adopted, err := StartImport(ctx, db, Source{Bucket: "b", DataPrefix: "p/"}, "stg-hoge-user", Schema{}, "token")
	require.Error(t, err)
	require.NoError(t, ctx.Err(), "StartImport must give up on its own, not on the test's deadline")
	assert.ErrorContains(t, err, "ThrottlingException")
	assert.False(t, adopted)
	assert.Equal(t, attempts, db.calls, "ImportTable calls: the retry policy's attempts, no more, no fewer")
	assert.Empty(t, db.imports, "nothing was started")
}
