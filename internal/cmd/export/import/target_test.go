package importcmd

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/export"
)

// targetFake answers DescribeTable and ListImports (the emulator has no
// ListImports: this decision logic is tested with a fake).
type targetFake struct {
	exists  bool
	imports []types.ImportSummary
	listErr error
}

func (f *targetFake) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	if !f.exists {
		return nil, &types.ResourceNotFoundException{Message: aws.String("not found")}
	}
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{}}, nil
}

func (f *targetFake) ListImports(context.Context, *dynamodb.ListImportsInput, ...func(*dynamodb.Options)) (*dynamodb.ListImportsOutput, error) {
	return &dynamodb.ListImportsOutput{ImportSummaryList: f.imports}, f.listErr
}

func (f *targetFake) ImportTable(context.Context, *dynamodb.ImportTableInput, ...func(*dynamodb.Options)) (*dynamodb.ImportTableOutput, error) {
	return nil, errors.New("not called")
}

func (f *targetFake) DescribeImport(context.Context, *dynamodb.DescribeImportInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeImportOutput, error) {
	return nil, errors.New("not called")
}

// TestTargetTakenOverFromAKilledImport_ListImportsMissingOnTheEmulator: a
// runbook's import step SIGKILLed after its ImportTable leaves the table
// behind; the resumed step takes over the import of the same export into
// it instead of refusing its own table (issue 43, the DR journey). Any
// other existing table is still refused (exit 2), and so is one whose
// imports cannot be listed (fail closed, naming list-imports).
func TestTargetTakenOverFromAKilledImport_ListImportsMissingOnTheEmulator(t *testing.T) {
	const table = "prod-x-user"
	src := export.Source{Bucket: "b", DataPrefix: "exports/x/AWSDynamoDB/01/data/"}
	summary := func(prefix string, status types.ImportStatus) types.ImportSummary {
		return types.ImportSummary{ImportArn: aws.String("arn:aws:dynamodb:eu-central-1:1:table/" + table + "/import/1"),
			TableArn: aws.String("arn:aws:dynamodb:eu-central-1:1:table/" + table), ImportStatus: status,
			S3BucketSource: &types.S3BucketSource{S3Bucket: aws.String("b"), S3KeyPrefix: aws.String(prefix)}}
	}
	cases := []struct {
		name string
		db   *targetFake
		want string // "" for no refusal
	}{
		{"absent", &targetFake{}, ""},
		{"created by a killed import of this export, in progress", &targetFake{exists: true, imports: []types.ImportSummary{summary(src.DataPrefix, types.ImportStatusInProgress)}}, ""},
		{"created by a killed import of this export, completed", &targetFake{exists: true, imports: []types.ImportSummary{summary(src.DataPrefix, types.ImportStatusCompleted)}}, ""},
		{"another table of that name", &targetFake{exists: true}, "already exists in eu-central-1: an import creates a NEW table; pass another --table"},
		{"imported from another export", &targetFake{exists: true, imports: []types.ImportSummary{summary("exports/y/data/", types.ImportStatusCompleted)}}, "pass another --table"},
		{"its import failed", &targetFake{exists: true, imports: []types.ImportSummary{summary(src.DataPrefix, types.ImportStatusFailed)}}, "pass another --table"},
		{"imports unreadable", &targetFake{exists: true, listErr: errors.New("NotImplementedError")}, "could not be read (listing imports: NotImplementedError): if a killed `export import` created it, follow that import with `aws dynamodb list-imports`"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := targetAbsent(context.Background(), c.db, table, "eu-central-1", src)
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, factory.IsUsageError(err), "a refusal: exit 2")
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
