package pitr

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// TestRepairWriteBudget runs pitr repair through the binary with
// --max-write-units: the plan says the budget, the JSON and the audit
// record it and what the writes used (moto reports 1 unit a call, so the
// units here prove the wiring, not DynamoDB's item sizing).
func TestRepairWriteBudget(t *testing.T) {
	src, dst, log, keys := diffedUsers(t, "budget", 20, 12)
	unrelated := []string{"--allow-unrelated-source", "test: two fixture tables"}

	out, errOut, code := target.Dynops(t, log, append([]string{"pitr", "repair", "--from", src, "--to", dst, "--keys", keys}, unrelated...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "write budget on "+dst+": none (on-demand table", "no flag on an on-demand table: no budget, said in the plan")

	out, errOut, code = target.Dynops(t, log, append([]string{"pitr", "repair", "--from", src, "--to", dst, "--keys", keys, "--max-write-units", "4"}, unrelated...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "write budget on "+dst+": 4 units/s (--max-write-units)")
	assert.Contains(t, fmt.Sprint(lastRecord(t, log).Actions), "write_budget", "the dry run's audit records the budget")

	out, errOut, code = target.Dynops(t, log, append([]string{"pitr", "repair", "--from", src, "--to", dst, "--keys", keys, "--max-write-units", "4", "--workers", "1", "--unscoped", "test", "--yes", "-o", "json"}, unrelated...)...)
	require.Equal(t, 0, code, errOut)
	var doc struct {
		Result      repair.Result   `json:"result"`
		WriteBudget capacity.Budget `json:"write_budget"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	assert.Equal(t, int64(8), doc.Result.Copied)
	assert.Equal(t, 4.0, doc.WriteBudget.UnitsPerSecond)
	require.NotNil(t, doc.Result.WriteCapacity, "the result says what the writes used")
	c := doc.Result.WriteCapacity
	assert.Equal(t, 4.0, c.Budget)
	assert.GreaterOrEqual(t, c.Used, 8.0, "every one of the 8 conditional puts is charged what the emulator reported")
	// One worker, 8+ units at 4/s: the first second's burst (4) and the
	// request in flight (1) are free, the rest waits its turn.
	assert.GreaterOrEqual(t, c.ElapsedSecs, (c.Used-4-1)/4, "the run was held to the budget")
	rec := lastRecord(t, log)
	assert.Contains(t, fmt.Sprint(rec.Actions), "units_used", "the audit records what the writes used")
}

// TestDiffReadBudget runs table diff through the binary: an on-demand
// table has no read budget unless --max-read-units is given, the plan says
// so, and with a budget the JSON and the audit record what the Scans used
// (as the emulator reported it; moto reports a unit a page).
func TestDiffReadBudget(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	src := "dev-" + harness.UniqueID() + "-rbudget-src"
	dst := "dev-" + harness.UniqueID() + "-rbudget-dst"
	fixture.Create(t, db, fixture.Table{Name: src, HashKey: "user_id"})
	fixture.Create(t, db, fixture.Table{Name: dst, HashKey: "user_id"})
	fixture.Put(t, db, src, fixture.Users(30))
	fixture.Put(t, db, dst, fixture.Users(25))
	log := filepath.Join(t.TempDir(), "audit.jsonl")

	_, errOut, code := target.Dynops(t, log, "table", "diff", "--source", src, "--target", dst)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "read budget on "+src+": none (on-demand table", "the plan says there is no budget, and why")
	assert.Contains(t, errOut, "estimate on "+src+": ", "the plan estimates the units before the scan")
	assert.Contains(t, errOut, "no price: the built-in list has us-east-1 only; give --price-file for "+target.Region, "no price for a region the built-in list lacks, and the fix")

	prices := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(prices, []byte(`{"source":"test list","date":"2026-11-01","regions":{"`+target.Region+`":{"read_request_unit":0.00000025,"write_request_unit":0.00000125}}}`), 0o644))
	_, errOut, code = target.Dynops(t, log, "table", "diff", "--source", src, "--target", dst, "--price-file", prices)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "on demand (test list (2026-11-01), "+target.Region+")", "the price names its source, date and region")
	_, errOut, code = target.Dynops(t, log, "table", "diff", "--source", src, "--target", dst, "--price-file", filepath.Join(t.TempDir(), "none.json"))
	assert.Equal(t, 2, code, "a missing price file is bad input")
	assert.Contains(t, errOut, "--price-file")

	out, errOut, code := target.Dynops(t, log, "table", "diff", "--source", src, "--target", dst, "--max-read-units", "3", "--segments", "2", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var doc struct {
		OnlyInSource int64 `json:"only_in_source"`
		ReadBudgets  []struct {
			capacity.Budget
			Used *capacity.Usage `json:"used"`
		} `json:"read_budgets"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	assert.Equal(t, int64(5), doc.OnlyInSource, "the budget changes how fast, not what")
	require.Len(t, doc.ReadBudgets, 2, "a budget per scanned table")
	for _, b := range doc.ReadBudgets {
		assert.Equal(t, 3.0, b.UnitsPerSecond, b.Table)
		assert.Equal(t, "--max-read-units", b.Source, b.Table)
		require.NotNil(t, b.Used, "%s: the report says what the Scans used", b.Table)
		assert.Greater(t, b.Used.Used, 0.0, "%s: the Scans were charged what DynamoDB reported", b.Table)
	}
	rec := lastRecord(t, log)
	assert.Contains(t, fmt.Sprint(rec.Counts), "read_units_"+src, "the audit records the units used per table")

	_, errOut, code = target.Dynops(t, log, "table", "diff", "--source", src, "--target", dst, "--max-read-units", "-1")
	assert.Equal(t, 2, code, "a negative budget is bad input")
	assert.Contains(t, errOut, "--max-read-units")
}

// TestRepairEstimateMatchesWhatTheRunUsed: on a table of a few thousand
// items, the dry run's write estimate is within 10 % of the units the
// repair then consumed, as the responses reported them (ConsumedCapacity
// TOTAL). Every item here is under 1 KB, so DynamoDB charges one write unit
// a put (the developer guide's sizing) and moto reports one a call: the two
// agree by the sizing, not by the emulator's shortcut alone.
func TestRepairEstimateMatchesWhatTheRunUsed(t *testing.T) {
	src, dst, log, keys := diffedUsers(t, "est", 2000, 1000)
	args := []string{"pitr", "repair", "--from", src, "--to", dst, "--keys", keys, "--allow-unrelated-source", "test: two fixture tables",
		"--unscoped", "test: every difference is damage", "--max-write-units", "100000", "-o", "json"}

	type report struct {
		Result        repair.Result      `json:"result"`
		WriteEstimate *capacity.Estimate `json:"write_estimate"`
	}
	out, errOut, code := target.Dynops(t, log, args...)
	require.Equal(t, 0, code, errOut)
	var dry report
	require.NoError(t, json.Unmarshal([]byte(out), &dry), out)
	require.NotNil(t, dry.WriteEstimate, "the dry run estimates the writes")
	assert.Equal(t, int64(1000), dry.WriteEstimate.Items, "1,000 keys to copy")

	out, errOut, code = target.Dynops(t, log, append(args, "--yes")...)
	require.Equal(t, 0, code, errOut)
	var run report
	require.NoError(t, json.Unmarshal([]byte(out), &run), out)
	assert.Equal(t, int64(1000), run.Result.Copied)
	require.NotNil(t, run.Result.WriteCapacity, "the run says what its writes used")
	used, est := run.Result.WriteCapacity.Used, dry.WriteEstimate.Units
	t.Logf("estimated %.0f write units, the run used %.0f", est, used)
	assert.InEpsilon(t, used, est, 0.10, "the dry run's estimate is within 10 %% of what the run used")
}

// diffedUsers makes two user tables, n users in the source and the first
// m of them in the target, and writes the keys to copy with table diff
// --keys-out. It returns the tables, the audit log and the keys file.
func diffedUsers(t *testing.T, name string, n, m int) (src, dst, log, keys string) {
	t.Helper()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	src = "dev-" + harness.UniqueID() + "-" + name + "-src"
	dst = "dev-" + harness.UniqueID() + "-" + name + "-dst"
	fixture.Create(t, db, fixture.Table{Name: src, HashKey: "user_id"})
	fixture.Create(t, db, fixture.Table{Name: dst, HashKey: "user_id"})
	users := fixture.Users(n)
	fixture.Put(t, db, src, users)
	fixture.Put(t, db, dst, users[:m])
	log = filepath.Join(t.TempDir(), "audit.jsonl")
	keys = filepath.Join(t.TempDir(), "keys.jsonl")
	_, errOut, code := target.Dynops(t, log, "table", "diff", "--source", src, "--target", dst, "--keys-out", keys)
	require.Equal(t, 0, code, errOut)
	return src, dst, log, keys
}

// TestDiffDescribesEachTableOnce: the key check, the read budgets, the
// estimate and the diff all need the tables' descriptions; the binary asks
// DynamoDB once per table (it asked four times per table before), counted
// by a proxy in front of the emulator that injects no fault.
func TestDiffDescribesEachTableOnce(t *testing.T) {
	src, dst, log, _ := diffedUsers(t, "once", 30, 25)
	var mu sync.Mutex
	ops := map[string]int{}
	p, err := faults.Start(target.Emulator.URL, faults.Config{Observe: func(_ int, op string) {
		mu.Lock()
		ops[op]++
		mu.Unlock()
	}})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })

	out, errOut, code := target.DynopsVia(t, p.URL, log, "table", "diff", "--source", src, "--target", dst, "--segments", "2", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var rep struct {
		OnlyInSource int64 `json:"only_in_source"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, int64(5), rep.OnlyInSource)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, ops["DescribeTable"], "one DescribeTable per table for the key check, budgets, estimate and diff: %v", ops)
	assert.GreaterOrEqual(t, ops["Scan"], 4, "2 segments x 2 tables: %v", ops)
}
