package runbook

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/migrationexample"
)

// TestRunbookMigrationOnProd_DDB_PROT_01: the single-to-multi-table
// migration runbook runs to the end without a terminal on a source and
// twelve destinations that are all protected (env=prod tags, read from the
// service), with --yes and one --confirm naming them: plan, backfill,
// catch-up, verify and the cutover, whose pointer is read back. Without the
// destinations confirmed, the backfill is refused and nothing is written.
func TestRunbookMigrationOnProd_DDB_PROT_01(t *testing.T) {
	db, src, dests := migrationFixture(t)
	ctx := context.Background()
	params := map[string]string{"source": src, "routes": migrationexample.RoutesFile(), "destinations": strings.Join(dests, ","), "unmatched": "--allow-unmatched"}
	log := filepath.Join(t.TempDir(), "audit.jsonl")

	t.Run("destinations not confirmed: refused before a write", func(t *testing.T) {
		args := []string{"runbook", "run", "single-to-multi-table-migration", "--incident", "MIG-REFUSED", "--yes", "--confirm", src}
		for k, v := range params {
			args = append(args, "--param", k+"="+v)
		}
		_, errOut, code := target.Dynops(t, log, args...)
		assert.NotEqual(t, 0, code, errOut)
		assert.Contains(t, errOut, "protected", "the refusal says why")
		for _, d := range dests {
			out, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(d), Select: types.SelectCount})
			require.NoError(t, err)
			assert.Zero(t, out.Count, "%s: nothing written", d)
		}
	})

	runRunbook(t, log, "single-to-multi-table-migration", append([]string{src}, dests...), params,
		"plan", "backfill", "catch-up", "verify", "cutover")
	written := int32(0)
	for _, d := range dests {
		out, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(d), Select: types.SelectCount})
		require.NoError(t, err)
		written += out.Count
	}
	assert.Greater(t, written, int32(50), "the destinations hold the routed items")
	p, err := ssm.NewFromConfig(target.AWSConfig(t)).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/dynops/migrate/" + src + "/active")})
	require.NoError(t, err, "the cutover wrote the pointer")
	assert.Equal(t, "multi", aws.ToString(p.Parameter.Value), "the pointer reads back multi")
}

// migrationFixture is the aiagent source (60 items, its stream on) and its
// twelve destinations, every one tagged env=prod (protected, read from the
// service), with the migration's state in a folder of the test's own.
func migrationFixture(t *testing.T) (db *dynamodb.Client, src string, dests []string) {
	t.Helper()
	// The runbook keeps the migration's state at its default path: a
	// folder of this test's own, not the machine's.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx := context.Background()
	db = dynamodb.NewFromConfig(target.AWSConfig(t))
	src = migrationexample.Source
	migrationexample.CreateTable(t, db, src, migrationexample.SourceSpec(), false)
	for usage, spec := range migrationexample.Destinations(t) {
		name := "dev-" + migrationexample.Product + "-" + usage
		migrationexample.CreateTable(t, db, name, spec, false)
		dests = append(dests, name)
	}
	sort.Strings(dests)
	for _, name := range append([]string{src}, dests...) {
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		require.NoError(t, err)
		_, err = db.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: d.Table.TableArn, Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("prod")}}})
		require.NoError(t, err)
	}
	migrationexample.Populate(t, db, 60)
	return db, src, dests
}
