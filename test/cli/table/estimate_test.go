package table

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// diffEstimates runs table diff -o json and returns each table's estimate.
func diffEstimates(t *testing.T, src, dst string, extra ...string) map[string]*capacity.Estimate {
	t.Helper()
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	out, errOut, code := target.Dynops(t, log, append([]string{"table", "diff", "--source", src, "--target", dst, "-o", "json"}, extra...)...)
	require.Equal(t, 0, code, errOut)
	var doc struct {
		ReadBudgets []capacity.Use `json:"read_budgets"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	ests := map[string]*capacity.Estimate{}
	for _, b := range doc.ReadBudgets {
		require.NotNil(t, b.Estimate, b.Table)
		ests[b.Table] = b.Estimate
	}
	return ests
}

// TestDiffEstimateWhenDescribeTableHasNoSize: the emulator's DescribeTable
// reports the item count but 0 bytes (as DynamoDB does for a table created
// within the last ~6 hours). The estimate sizes the table from one sample
// Scan page instead of printing 0 MB / 0 units: a table that fits the
// sample is measured whole, a larger one is the sample's average times
// ItemCount (within 10 % here: every user item is about the same size).
func TestDiffEstimateWhenDescribeTableHasNoSize(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	small, big := "dev-"+id+"-est-small", "dev-"+id+"-est-big"
	fixture.Create(t, db, fixture.Table{Name: small, HashKey: "user_id"})
	fixture.Create(t, db, fixture.Table{Name: big, HashKey: "user_id"})
	users := fixture.Users(600)
	fixture.Put(t, db, small, users[:40])
	fixture.Put(t, db, big, users)
	var smallBytes, bigBytes int64
	for i, u := range users {
		if i < 40 {
			smallBytes += capacity.StoredSize(u)
		}
		bigBytes += capacity.StoredSize(u)
	}
	d, err := db.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(big)})
	require.NoError(t, err)
	require.Equal(t, int64(0), aws.ToInt64(d.Table.TableSizeBytes), "the emulator reports no bytes: the case under test")

	ests := diffEstimates(t, small, big)
	s, b := ests[small], ests[big]
	assert.Equal(t, int64(40), s.Items)
	assert.Equal(t, smallBytes, s.Bytes, "a table within one sample page is measured whole")
	assert.Contains(t, s.SizeFrom, "the whole table in one sample Scan page")
	assert.Equal(t, int64(600), b.Items)
	assert.InEpsilon(t, float64(bigBytes), float64(b.Bytes), 0.10, "sample average times ItemCount")
	assert.Contains(t, b.SizeFrom, "100 sampled items")
	assert.Greater(t, b.Units, 0.0, "units from the sampled size, not 0")
	assert.False(t, b.SizeUnknown)

	_, errOut, code := target.Dynops(t, filepath.Join(t.TempDir(), "audit.jsonl"), "table", "diff", "--source", small, "--target", big)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "estimate on "+big+": 600 items, 0.2 MB (from 100 sampled items", "the plan says where the size came from")
}

// TestDiffSaysWhenTheDefaultBudgetHoldsItBack: on a provisioned table the
// default read budget is a quarter of its read capacity (here 1 unit/s of
// 4); when that holds the diff to more than a minute the plan says so and
// names the flag, and the budget stays the default (it is the
// application's capacity the diff would take).
func TestDiffSaysWhenTheDefaultBudgetHoldsItBack(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	src, dst := "dev-"+id+"-prov-src", "dev-"+id+"-prov-dst"
	for _, name := range []string{src, dst} {
		_, err := db.CreateTable(t.Context(), &dynamodb.CreateTableInput{TableName: aws.String(name),
			AttributeDefinitions:  []types.AttributeDefinition{{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:             []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
			ProvisionedThroughput: &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(4), WriteCapacityUnits: aws.Int64(1000)}})
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = db.DeleteTable(t.Context(), &dynamodb.DeleteTableInput{TableName: aws.String(name)}) })
	}
	// ~3,000 items of ~250 bytes: ~90 read units (eventually consistent),
	// over a minute at 1 unit/s.
	users := fixture.Users(3000)
	fixture.Put(t, db, src, users[:40])
	fixture.Put(t, db, dst, users)
	_, errOut, code := target.Dynops(t, filepath.Join(t.TempDir(), "audit.jsonl"), "table", "diff", "--source", src, "--target", dst)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "read budget on "+dst+": 1 units/s (default: 25 % of the table's 4 provisioned read units")
	assert.Contains(t, errOut, "the default budget holds this diff to about ", "the plan says the default slows it")
	assert.Contains(t, errOut, "of reads on "+dst+": give --max-read-units N to go faster (up to the table's 4 provisioned read units")
	assert.NotContains(t, errOut, "of reads on "+src+":", "a small table's diff is not held back: no note")
}
