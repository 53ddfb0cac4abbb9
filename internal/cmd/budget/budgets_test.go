package budget_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/testctx"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// provisioned creates a provisioned table on the emulator (fixture.Create
// makes on-demand ones), deleted with the emulator.
func provisioned(t *testing.T, db *dynamodb.Client, rcu, wcu int64) string {
	t.Helper()
	name := "dev-" + harness.UniqueID() + "-budget"
	_, err := db.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:             aws.String(name),
		AttributeDefinitions:  []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:             []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		BillingMode:           types.BillingModeProvisioned,
		ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(rcu), WriteCapacityUnits: aws.Int64(wcu)},
	})
	require.NoError(t, err)
	return name
}

func newFactory(t *testing.T, output string) (*factory.Factory, *strings.Builder) {
	t.Helper()
	ios, _, _, errOut := iostreams.Test()
	f := factory.New(ios)
	f.Flags.Output = output
	f.Audit = audit.NewRecorder(filepath.Join(t.TempDir(), "audit.jsonl"), nil)
	var b strings.Builder
	t.Cleanup(func() { b.WriteString(errOut.String()) })
	ios.ErrOut = &b
	return f, &b
}

// TestSplitSharesEachBudget: the shards of one run each hold 1/n of a budget,
// whether it came from the flag or from the provisioned default (DescribeTable
// on the emulator); a run that is not split holds the whole; an on-demand
// table without the flag has no budget, split or not.
func TestSplitSharesEachBudget(t *testing.T) {
	ctx := testctx.Bounded(t)
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	prov := provisioned(t, db, 40, 20)
	onDemand := "dev-" + harness.UniqueID() + "-budget"
	fixture.Create(t, db, fixture.Table{Name: onDemand, HashKey: "pk"})

	whole := &budget.Budgets{MaxWriteUnits: 100}
	for _, c := range []struct {
		name  string
		b     *budget.Budgets
		kind  capacity.Kind
		table string
		want  float64
		from  string
	}{
		{"flag, whole", whole, capacity.Write, prov, 100, "--max-write-units"},
		{"flag, a quarter", whole.Split(4), capacity.Write, prov, 25, "--max-write-units, split evenly across 4 shards"},
		{"default, whole", whole, capacity.Read, prov, 10, "default: 25 % of the table's 40 provisioned read units"},
		{"default, a quarter", whole.Split(4), capacity.Read, prov, 2.5, "split evenly across 4 shards"},
		{"split of a split", whole.Split(2).Split(2), capacity.Write, prov, 25, "split evenly across 4 shards"},
		{"on-demand, no flag", whole.Split(4), capacity.Read, onDemand, 0, "on-demand table"},
		{"split by 1 is the whole", whole.Split(1), capacity.Write, onDemand, 100, "--max-write-units"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bu, err := c.b.Resolve(ctx, db, c.kind, c.table)
			require.NoError(t, err)
			assert.Equal(t, c.want, bu.UnitsPerSecond)
			assert.Equal(t, c.want, bu.Bucket.Limit(), "the limiter holds the share")
			assert.Contains(t, bu.Source, c.from)
		})
	}
	assert.Equal(t, 100.0, whole.MaxWriteUnits, "Split leaves the whole unchanged")
}

// TestTablesSaysHoldsAndRecords: Tables says each budget on stderr before
// the run and hands out each table's bucket; without the flag, a missing
// table (DescribeTable: not found) has none, the run's own check refusing it;
// Status, Record (the audit's capacity-budget
// actions) and Uses report what was charged; -o json keeps stderr quiet.
func TestTablesSaysHoldsAndRecords(t *testing.T) {
	ctx := testctx.Bounded(t)
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	table := "dev-" + harness.UniqueID() + "-budget"
	fixture.Create(t, db, fixture.Table{Name: table, HashKey: "pk"})
	missing := "dev-" + harness.UniqueID() + "-missing"

	f, errOut := newFactory(t, factory.OutputTable)
	b := &budget.Budgets{MaxReadUnits: 50}
	buckets, err := b.Tables(ctx, f, db, capacity.Read, []string{table})
	require.NoError(t, err)
	require.Contains(t, buckets, table)
	none, err := (&budget.Budgets{}).Tables(ctx, f, db, capacity.Read, []string{missing})
	require.NoError(t, err, "a missing table is left to the run's own check")
	assert.Empty(t, none, "a missing table has no budget")
	assert.Contains(t, errOut.String(), "read budget on "+table+": 50 units/s (--max-read-units)", "said before the run")

	buckets[table].Charge(10)
	assert.Contains(t, b.Status(), ", "+table+" ")
	assert.Contains(t, b.Status(), "RCU/s of 50.0")
	b.Record(f)
	assert.Contains(t, errOut.String(), "read capacity on "+table+": 10.0 units used")
	acts := f.Audit.Actions()
	require.Len(t, acts, 1)
	assert.Equal(t, audit.ActCapacityBudget, acts[0].What)
	assert.Equal(t, table, acts[0].Target)
	uses := b.Uses()
	require.Len(t, uses, 1)
	require.NotNil(t, uses[0].Used)
	assert.Equal(t, 10.0, uses[0].Used.Used)

	quiet, quietErr := newFactory(t, factory.OutputJSON)
	qb := &budget.Budgets{MaxReadUnits: 50}
	_, err = qb.Tables(ctx, quiet, db, capacity.Read, []string{table})
	require.NoError(t, err)
	qb.Record(quiet)
	assert.Empty(t, quietErr.String(), "-o json: nothing on stderr")
	assert.Len(t, quiet.Audit.Actions(), 1, "-o json: still audited")
}
