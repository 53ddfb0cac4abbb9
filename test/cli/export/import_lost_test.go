package export

import (
	"context"
	"path"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/test/helpers/harness"
)

// lostImportAnswer is the service with ImportTable's answer lost: the
// request lands (an import starts), its caller sees a server error.
type lostImportAnswer struct {
	*dynamodb.Client
	started []string
}

func (l *lostImportAnswer) ImportTable(ctx context.Context, in *dynamodb.ImportTableInput, o ...func(*dynamodb.Options)) (*dynamodb.ImportTableOutput, error) {
	out, err := l.Client.ImportTable(ctx, in, o...)
	if err != nil {
		return nil, err
	}
	l.started = append(l.started, aws.ToString(out.ImportTableDescription.ImportArn))
	return nil, &smithy.GenericAPIError{Code: "InternalServerError", Message: "the answer was lost", Fault: smithy.FaultServer}
}

// TestStartImportTakesItsOwnImportWhoseAnswerWasLost: an ImportTable that
// landed and lost its answer is found with ListImports and taken as the
// run's own; no second import starts, and the one found completes.
func TestStartImportTakesItsOwnImportWhoseAnswerWasLost(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	if target.OnEmulator() {
		// Measured each run: the day moto answers ListImports, this fails
		// and export import can join test/robustness/chaos's fault matrix.
		_, err := db.ListImports(ctx, &dynamodb.ListImportsInput{}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		require.Error(t, err, "the emulator answers ListImports now: drop this skip and put export import into test/robustness/chaos's fault matrix")
		t.Skip("moto has no ListImports (5.2.1: HTTP 500, NotImplementedError \"The list_imports action has not been implemented\"), so the import a lost answer started cannot be found there; runs on AWS (DYNOPS_TEST_TARGET=aws); the decision logic: internal/export TestStartImportTakesTheImportItStarted")
	}
	fx := newFixture(t, 0)
	root := t.TempDir()
	w, err := exporttest.Write(root, exporttest.Spec{Prefix: "lost/full", ExportID: "01772323200000-cccc0003", FileItems: []int{5, 4}})
	require.NoError(t, err)
	upload(t, fx, root)
	src := export.Source{Bucket: fx.bucket, DataPrefix: path.Dir(w.DataKeys[0]) + "/", Items: 9}
	table := "dev-" + harness.UniqueID() + "-user"
	t.Cleanup(func() { deleteProtected(db, table) })
	hash, err := export.ParseKey("user_id:S")
	require.NoError(t, err)

	l := &lostImportAnswer{Client: db}
	imp, adopted, err := export.StartImport(ctx, l, src, table, export.KeySchema(hash, nil), export.Token(src.Bucket, src.DataPrefix, table))
	require.NoError(t, err)
	assert.True(t, adopted, "the import the lost answer started is taken")
	require.Len(t, l.started, 1, "no second ImportTable")
	assert.Equal(t, l.started[0], imp.Arn)
	done, err := export.WaitImport(ctx, db, imp.Arn, nil)
	require.NoError(t, err)
	assert.Equal(t, string(types.ImportStatusCompleted), done.Status)
	n, err := export.CountTableItems(ctx, db, table)
	require.NoError(t, err)
	assert.Equal(t, int64(9), n)
}
