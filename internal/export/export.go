// Package export starts, describes, lists and waits for DynamoDB exports to
// S3 (DDB-EXP-01), runs the gap-free incremental series from a checkpoint
// (decisions in internal/exportwindow), and imports an export into a new
// table, possibly in another region (DDB-DR-01 backup & restore).
package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/exportwindow"
	"github.com/dynops/dynops/internal/poll"
)

// DynamoDB is the part of the API this package uses.
type DynamoDB interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	DescribeContinuousBackups(context.Context, *dynamodb.DescribeContinuousBackupsInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeContinuousBackupsOutput, error)
	ExportTableToPointInTime(context.Context, *dynamodb.ExportTableToPointInTimeInput, ...func(*dynamodb.Options)) (*dynamodb.ExportTableToPointInTimeOutput, error)
	DescribeExport(context.Context, *dynamodb.DescribeExportInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeExportOutput, error)
	ListExports(context.Context, *dynamodb.ListExportsInput, ...func(*dynamodb.Options)) (*dynamodb.ListExportsOutput, error)
}

// Export is what dynops shows of an export.
type Export struct {
	Arn        string    `json:"export_arn"`
	Status     string    `json:"status"`
	Type       string    `json:"type"`
	TableArn   string    `json:"table_arn,omitempty"`
	Bucket     string    `json:"bucket,omitempty"`
	Prefix     string    `json:"prefix,omitempty"`
	ExportTime time.Time `json:"export_time,omitzero"`
	From       time.Time `json:"from,omitzero"`
	To         time.Time `json:"to,omitzero"`
	StartTime  time.Time `json:"start_time,omitzero"`
	EndTime    time.Time `json:"end_time,omitzero"`
	Items      *int64    `json:"items,omitempty"` // nil when unknown (ListExports does not say)
	Bytes      int64     `json:"billed_bytes,omitempty"`
	Manifest   string    `json:"manifest,omitempty"`
	Failure    string    `json:"failure,omitempty"`
}

func fromDescription(d *types.ExportDescription) Export {
	e := Export{
		Arn: aws.ToString(d.ExportArn), Status: string(d.ExportStatus), Type: string(d.ExportType),
		TableArn: aws.ToString(d.TableArn), Bucket: aws.ToString(d.S3Bucket), Prefix: aws.ToString(d.S3Prefix),
		ExportTime: aws.ToTime(d.ExportTime), StartTime: aws.ToTime(d.StartTime), EndTime: aws.ToTime(d.EndTime),
		Items: d.ItemCount, Bytes: aws.ToInt64(d.BilledSizeBytes), Manifest: aws.ToString(d.ExportManifest),
	}
	if spec := d.IncrementalExportSpecification; spec != nil {
		e.From, e.To = aws.ToTime(spec.ExportFromTime), aws.ToTime(spec.ExportToTime)
	}
	if d.FailureCode != nil || d.FailureMessage != nil {
		e.Failure = strings.TrimSpace(aws.ToString(d.FailureCode) + " " + aws.ToString(d.FailureMessage))
	}
	return e
}

// Table is a table's ARN and the range it can be exported from.
type Table struct {
	Name string
	Arn  string
	PITR exportwindow.PITR
}

// ErrNoPITR: exports read from PITR, which is off.
var ErrNoPITR = errors.New("point-in-time recovery is off")

// TableArn returns the table's ARN.
func TableArn(ctx context.Context, db DynamoDB, table string) (string, error) {
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return "", fmt.Errorf("describing %s: %w", table, err)
	}
	return aws.ToString(dt.Table.TableArn), nil
}

// DescribeTable returns the table's ARN and PITR window; exports need PITR
// (DDB-EXP-01, DDB-PITR-01).
func DescribeTable(ctx context.Context, db DynamoDB, table string) (Table, error) {
	t := Table{Name: table}
	arn, err := TableArn(ctx, db, table)
	if err != nil {
		return t, err
	}
	t.Arn = arn
	cb, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: &table})
	if err != nil {
		return t, fmt.Errorf("describing continuous backups of %s: %w", table, err)
	}
	d := cb.ContinuousBackupsDescription
	if d == nil || d.PointInTimeRecoveryDescription == nil || d.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusEnabled {
		return t, fmt.Errorf("%s: %w; exports need it (DDB-EXP-01): enable PITR with the table module's defaults (DDB-PITR-01)", table, ErrNoPITR)
	}
	p := d.PointInTimeRecoveryDescription
	t.PITR = exportwindow.PITR{Earliest: aws.ToTime(p.EarliestRestorableDateTime), Latest: aws.ToTime(p.LatestRestorableDateTime)}
	return t, nil
}

// Target is where an export goes.
type Target struct {
	Bucket string
	Prefix string
	// BucketOwner is the account owning the bucket, when it is not the caller's.
	BucketOwner string
}

// Token returns a ClientToken for an export request: the same request gets
// the same token, so a retried request does not start a second export.
func Token(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "|")))
	return hex.EncodeToString(h[:16])
}

// StartFull requests a full export of the table as of at (zero: now).
func StartFull(ctx context.Context, db DynamoDB, tableArn string, at time.Time, to Target, token string) (Export, error) {
	in := &dynamodb.ExportTableToPointInTimeInput{
		TableArn: &tableArn, S3Bucket: &to.Bucket, S3Prefix: optional(to.Prefix), S3BucketOwner: optional(to.BucketOwner),
		ExportFormat: types.ExportFormatDynamodbJson, ExportType: types.ExportTypeFullExport, ClientToken: optional(token),
	}
	if !at.IsZero() {
		in.ExportTime = aws.Time(at)
	}
	out, err := db.ExportTableToPointInTime(ctx, in)
	if err != nil {
		return Export{}, fmt.Errorf("starting full export of %s to s3://%s/%s: %w", tableArn, to.Bucket, to.Prefix, err)
	}
	return fromDescription(out.ExportDescription), nil
}

// StartIncremental requests an incremental export of window (NEW_AND_OLD_IMAGES).
func StartIncremental(ctx context.Context, db DynamoDB, tableArn string, w exportwindow.Window, to Target, token string) (Export, error) {
	out, err := db.ExportTableToPointInTime(ctx, &dynamodb.ExportTableToPointInTimeInput{
		TableArn: &tableArn, S3Bucket: &to.Bucket, S3Prefix: optional(to.Prefix), S3BucketOwner: optional(to.BucketOwner),
		ExportFormat: types.ExportFormatDynamodbJson, ExportType: types.ExportTypeIncrementalExport, ClientToken: optional(token),
		IncrementalExportSpecification: &types.IncrementalExportSpecification{
			ExportFromTime: aws.Time(w.From), ExportToTime: aws.Time(w.To), ExportViewType: types.ExportViewTypeNewAndOldImages,
		},
	})
	if err != nil {
		return Export{}, fmt.Errorf("starting incremental export %s of %s to s3://%s/%s: %w", w, tableArn, to.Bucket, to.Prefix, err)
	}
	return fromDescription(out.ExportDescription), nil
}

// Describe returns one export.
func Describe(ctx context.Context, db DynamoDB, arn string) (Export, error) {
	out, err := db.DescribeExport(ctx, &dynamodb.DescribeExportInput{ExportArn: &arn})
	if err != nil {
		return Export{}, fmt.Errorf("describing export %s: %w", arn, err)
	}
	return fromDescription(out.ExportDescription), nil
}

// List returns the exports of tableArn ("" for every table of the account
// and region), newest first as the API returns them.
func List(ctx context.Context, db DynamoDB, tableArn string) ([]Export, error) {
	var es []Export
	pages := dynamodb.NewListExportsPaginator(db, &dynamodb.ListExportsInput{TableArn: optional(tableArn)})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing exports: %w", err)
		}
		for _, s := range out.ExportSummaries {
			es = append(es, Export{Arn: aws.ToString(s.ExportArn), Status: string(s.ExportStatus), Type: string(s.ExportType)})
		}
	}
	return es, nil
}

// FindFull returns the full export of tableArn into to's bucket and
// prefix that is IN_PROGRESS or COMPLETED, nil when there is none: the
// export a killed run started there. at, when set, must be its export time.
func FindFull(ctx context.Context, db DynamoDB, tableArn string, to Target, at time.Time) (*Export, error) {
	es, err := List(ctx, db, tableArn)
	if err != nil {
		return nil, err
	}
	for _, s := range es {
		if s.Status == exportwindow.Failed || (s.Type != "" && s.Type != string(types.ExportTypeFullExport)) {
			continue
		}
		e, err := Describe(ctx, db, s.Arn)
		if err != nil {
			return nil, err
		}
		if e.Status == exportwindow.Failed || e.Bucket != to.Bucket || strings.TrimSuffix(e.Prefix, "/") != strings.TrimSuffix(to.Prefix, "/") ||
			(e.Type != "" && e.Type != string(types.ExportTypeFullExport)) || (!at.IsZero() && !e.ExportTime.Equal(at)) {
			continue
		}
		return &e, nil
	}
	return nil, nil
}

// ErrExportFailed: the export ended FAILED.
var ErrExportFailed = errors.New("export failed")

// Wait polls the export until it leaves IN_PROGRESS, calling progress after
// each poll. A FAILED export returns ErrExportFailed with its failure message;
// the context's --wait-timeout (internal/poll) ends the wait with poll.ErrTimeout.
func Wait(ctx context.Context, db DynamoDB, arn string, progress func(e Export, waited time.Duration)) (Export, error) {
	var e Export
	o := poll.Options{Interval: time.Second, MaxInterval: 30 * time.Second, What: "export " + arn,
		Resume: "run `dynops export wait " + arn + "` to wait again"}
	if progress != nil {
		o.Progress = func(waited time.Duration) { progress(e, waited) }
	}
	err := poll.Until(ctx, o, func(ctx context.Context) (bool, string, error) {
		var err error
		if e, err = Describe(ctx, db, arn); err != nil {
			return false, "", err
		}
		return e.Status == exportwindow.Completed || e.Status == exportwindow.Failed, e.Status, nil
	})
	if err != nil {
		return e, err
	}
	if e.Status == exportwindow.Failed {
		return e, fmt.Errorf("%s: %w: %s", arn, ErrExportFailed, e.Failure)
	}
	return e, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func decodeJSON(r io.Reader, v any) error {
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	return nil
}
