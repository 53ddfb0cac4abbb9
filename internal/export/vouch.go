package export

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynops/dynops/internal/exportverify"
)

// Vouch checks every export of a chain with exportverify.Vouch (the one
// check of whom dynops believes) before anything is written from them: each
// must be an export of want.TableArn that DynamoDB answers for (or is
// accepted under t.Unverified), with no data file written after its end.
// The first refusal ends it.
func Vouch(ctx context.Context, store exportverify.Store, incs []Increment, want exportverify.Expect, t exportverify.Trust) ([]exportverify.Vouched, error) {
	out := make([]exportverify.Vouched, 0, len(incs))
	for _, inc := range incs {
		v, err := exportverify.Vouch(ctx, store, exportverify.Claim{SummaryKey: inc.Dir + "/" + exportverify.SummaryName, Summary: inc.summary}, want, t)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// SourceOfApply says which table the incremental exports applied onto table
// must be of: sourceTable when given (an ARN), else the table of the full
// export it was imported from (its dynops:imported-from tag), vouched for
// like every export read (exportverify.Vouch). The full export's vouching is
// returned with it (nil for a given sourceTable).
func SourceOfApply(ctx context.Context, db ApplyDB, store exportverify.Store, bucket, table, sourceTable string, t exportverify.Trust) (string, *exportverify.Vouched, error) {
	if sourceTable != "" {
		if err := CheckTableArn(sourceTable); err != nil {
			return "", nil, fmt.Errorf("--source-table: %w", err)
		}
		return sourceTable, nil, nil
	}
	d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return "", nil, fmt.Errorf("describing %s: %w", table, err)
	}
	tags, err := tableTags(ctx, db, aws.ToString(d.Table.TableArn))
	if err != nil {
		return "", nil, err
	}
	src := tags[TagImportedFrom]
	want := "s3://" + bucket + "/"
	if !strings.HasPrefix(src, want) {
		return "", nil, fmt.Errorf("%w: %s has no %s tag naming a full export in s3://%s (it says %q): pass --source-table ARN, the table the exports are of",
			ErrNoSource, table, TagImportedFrom, bucket, src)
	}
	dir := path.Clean(strings.TrimSuffix(strings.TrimPrefix(src, want), "data/"))
	key := dir + "/" + exportverify.SummaryName
	sum, err := readSummary(ctx, store, key)
	if err != nil {
		return "", nil, fmt.Errorf("reading the full export %s names (%s): %w; pass --source-table ARN", TagImportedFrom, src, err)
	}
	v, err := exportverify.Vouch(ctx, store, exportverify.Claim{SummaryKey: key, Summary: sum}, exportverify.Expect{TableArn: sum.TableArn, Bucket: bucket}, t)
	if err != nil {
		return "", nil, fmt.Errorf("the full export %s was imported from: %w", table, err)
	}
	return sum.TableArn, &v, nil
}

// ErrNoSource: apply cannot tell which table the exports must be of.
var ErrNoSource = errors.New("no source table")

// CheckTableArn checks that s is a DynamoDB table ARN.
func CheckTableArn(s string) error {
	a, err := arn.Parse(s)
	if err != nil || a.Service != "dynamodb" || !strings.HasPrefix(a.Resource, "table/") || strings.Contains(strings.TrimPrefix(a.Resource, "table/"), "/") {
		return fmt.Errorf("%q is not a DynamoDB table ARN (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME)", s)
	}
	return nil
}
