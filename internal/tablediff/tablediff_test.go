package tablediff_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

func order(tenant string, n int, status string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"tenant_key": &types.AttributeValueMemberS{Value: "TENANT#" + tenant},
		"order_key":  &types.AttributeValueMemberN{Value: fmt.Sprint(n)},
		"status":     &types.AttributeValueMemberS{Value: status},
		"note":       &types.AttributeValueMemberS{Value: "n"},
		"lines":      &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: fmt.Sprint(n % 5)}}},
	}
}

func orderKey(tenant string, n int) string {
	return fmt.Sprintf(`{"order_key":{"N":"%d"},"tenant_key":{"S":"TENANT#%s"}}`, n, tenant)
}

// Two tables made to differ on purpose: 5 items deleted from the target, 7
// changed, 4 added. The diff must find exactly those, across several
// segments, buckets and Scan pages.
func TestDiffFindsEveryDifference(t *testing.T) {
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	src, dst := "dev-"+id+"-order-restored", "dev-"+id+"-order"
	for _, n := range []string{src, dst} {
		fixture.Create(t, db, fixture.Table{Name: n, HashKey: "tenant_key", RangeKey: "order_key"})
	}
	var items []map[string]types.AttributeValue
	for i := 0; i < 300; i++ {
		items = append(items, order(fmt.Sprintf("t%d", i%7), i, "paid"))
	}
	fixture.Put(t, db, src, items)
	fixture.Put(t, db, dst, items)

	want := map[tablediff.Kind][]string{}
	for i := 0; i < 5; i++ { // deleted from the original since the restore point
		n := 10 + i
		_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &dst, Key: map[string]types.AttributeValue{
			"tenant_key": items[n]["tenant_key"], "order_key": items[n]["order_key"]}})
		require.NoError(t, err)
		want[tablediff.OnlyInSource] = append(want[tablediff.OnlyInSource], orderKey(fmt.Sprintf("t%d", n%7), n))
	}
	var changed []map[string]types.AttributeValue
	for i := 0; i < 7; i++ { // overwritten
		n := 100 + i*3
		changed = append(changed, order(fmt.Sprintf("t%d", n%7), n, "refunded"))
		want[tablediff.Changed] = append(want[tablediff.Changed], orderKey(fmt.Sprintf("t%d", n%7), n))
	}
	for i := 0; i < 4; i++ { // written after the restore point
		n := 1000 + i
		changed = append(changed, order("t9", n, "new"))
		want[tablediff.OnlyInTarget] = append(want[tablediff.OnlyInTarget], orderKey("t9", n))
	}
	fixture.Put(t, db, dst, changed)

	keysOut := filepath.Join(t.TempDir(), "keys.jsonl")
	var progressed bool
	rep, err := tablediff.Diff(ctx, db, tablediff.Options{Source: src, Target: dst, Segments: 3, Buckets: 4,
		PageLimit: 17, KeysOut: keysOut, SampleSize: 2, Progress: func(a, b int64) { progressed = true }})
	require.NoError(t, err)
	assert.Equal(t, int64(300), rep.SourceItems, "every page followed (LastEvaluatedKey, DDB-API-03)")
	assert.Equal(t, int64(299), rep.TargetItems)
	assert.Equal(t, int64(5), rep.OnlyInSource)
	assert.Equal(t, int64(4), rep.OnlyInTarget)
	assert.Equal(t, int64(7), rep.Changed)
	assert.Equal(t, int64(300-5-7), rep.Same)
	assert.Equal(t, int64(16), rep.Differences())
	assert.Equal(t, []string{"tenant_key", "order_key"}, rep.KeyNames)
	assert.Len(t, rep.Sample.Changed, 2, "the sample is capped")
	assert.True(t, progressed)

	got := map[tablediff.Kind][]string{}
	h, err := tablediff.ReadKeys(keysOut, func(r tablediff.KeyRecord) error {
		got[r.Kind] = append(got[r.Kind], string(r.Key))
		switch r.Kind {
		case tablediff.OnlyInSource:
			assert.True(t, r.SourceSum != "" && r.TargetSum == "", "only the source side has a checksum")
		case tablediff.OnlyInTarget:
			assert.True(t, r.SourceSum == "" && r.TargetSum != "")
		case tablediff.Changed:
			assert.True(t, r.SourceSum != "" && r.TargetSum != "" && r.SourceSum != r.TargetSum)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, tablediff.Header{Source: src, Target: dst, KeyNames: []string{"tenant_key", "order_key"}, Time: h.Time}, h)
	assert.WithinDuration(t, time.Now(), h.Time, time.Minute)
	for _, k := range []tablediff.Kind{tablediff.OnlyInSource, tablediff.OnlyInTarget, tablediff.Changed} {
		sort.Strings(want[k])
		sort.Strings(got[k])
		assert.Equal(t, want[k], got[k], "keys of kind %s", k)
	}

	t.Run("same result with one segment and one bucket", func(t *testing.T) {
		one, err := tablediff.Diff(ctx, db, tablediff.Options{Source: src, Target: dst, Segments: 1, Buckets: 1})
		require.NoError(t, err)
		assert.Equal(t, [4]int64{rep.Same, rep.OnlyInSource, rep.OnlyInTarget, rep.Changed},
			[4]int64{one.Same, one.OnlyInSource, one.OnlyInTarget, one.Changed})
	})

	t.Run("--attributes compares only those (ProjectionExpression)", func(t *testing.T) {
		// Change only `note` on one more item: invisible when comparing status.
		n := 200
		it := order(fmt.Sprintf("t%d", n%7), n, "paid")
		it["note"] = &types.AttributeValueMemberS{Value: "edited"}
		fixture.Put(t, db, dst, []map[string]types.AttributeValue{it})
		whole, err := tablediff.Diff(ctx, db, tablediff.Options{Source: src, Target: dst})
		require.NoError(t, err)
		assert.Equal(t, int64(8), whole.Changed)
		byStatus, err := tablediff.Diff(ctx, db, tablediff.Options{Source: src, Target: dst, Attributes: []string{"status"}})
		require.NoError(t, err)
		assert.Equal(t, int64(7), byStatus.Changed)
		assert.Equal(t, int64(5), byStatus.OnlyInSource)
	})
}

func TestDiffRefusesTablesWithDifferentKeys(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	a, b := "dev-"+id+"-user", "dev-"+id+"-order"
	fixture.Create(t, db, fixture.Table{Name: a, HashKey: "user_id"})
	fixture.Create(t, db, fixture.Table{Name: b, HashKey: "tenant_key", RangeKey: "order_key"})
	_, err := tablediff.Diff(context.Background(), db, tablediff.Options{Source: a, Target: b})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "only tables with the same primary key can be compared")

	_, err = tablediff.Diff(context.Background(), db, tablediff.Options{Source: a, Target: "dev-" + id + "-missing"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "describing dev-"+id+"-missing")
}
