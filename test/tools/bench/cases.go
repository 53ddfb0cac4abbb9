package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/exportverify/exporttest"
)

// diffCase: `dynops table diff` of two on-demand tables of e.items items
// (1% changed) beside a raw segmented Scan of both, same segments per table.
func diffCase() *benchCase { return diffCaseOn("table diff", 0, 0.95) }

// provisionedDiffCase: the same on provisioned tables with read capacity
// to spare (4,000 units: the default budget, a quarter of it, is far above
// what the emulator's 1 unit a page reaches, and above 10,000 items' reads
// on AWS): table diff runs with its budget wrapper in the path (every Scan
// asks for ReturnConsumedCapacity and is charged to the bucket), the raw
// Scan has none. What the wrapper costs, not what a budget holds back (the
// scan path section measures that).
func provisionedDiffCase() *benchCase {
	return diffCaseOn("table diff, provisioned", 4000, 0.90)
}

// diffCaseOn is the diff case on tables of rcu provisioned read units (0:
// on-demand).
func diffCaseOn(name string, rcu int64, goal float64) *benchCase {
	var a, b string
	var changed int64
	c := &benchCase{name: name, unit: "items/s", goal: goal}
	c.setup = func(e *env) error {
		c.raw = fmt.Sprintf("Scan, %d segments x 2 tables", e.segments)
		if rcu > 0 {
			c.raw += ", no budget"
		}
		if e.baseline != "" {
			// The same diff by another build, in the same rounds: its ratio
			// is this build's rate over that one's.
			c.ref, c.refNote = "table diff by -baseline "+filepath.Base(e.baseline), "(this build / baseline)"
			c.refRound = func(e *env) (measure, error) {
				bin := e.dynops
				e.dynops = e.baseline
				defer func() { e.dynops = bin }()
				_, m, err := e.diff(a, b)
				return m, err
			}
		}
		var err error
		if a, b, changed, err = e.diffTablesWith(strings.ReplaceAll(strings.ReplaceAll(name, " ", ""), ",", "-"), e.items, rcu); err != nil {
			return err
		}
		return nil
	}
	rounds := 0
	c.round = func(e *env) (measure, measure, error) {
		// Alternate which goes first: moto answers the first Scans after a
		// pause more slowly, and a load that comes and goes favours neither.
		rounds++
		var rep diffReport
		var dyn, raw measure
		var n int64
		steps := []func() error{
			func() error {
				start := time.Now()
				var err error
				n, err = e.rawScan(e.segments, a, b)
				raw = measure{work: float64(n), seconds: time.Since(start).Seconds()}
				return err
			},
			func() error {
				var err error
				rep, dyn, err = e.diff(a, b)
				return err
			},
		}
		if rounds%2 == 0 {
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return dyn, raw, err
			}
		}
		if rep.Changed != changed || rep.SourceItems+rep.TargetItems != n {
			return dyn, raw, fmt.Errorf("diff found %d changed of %d items, want %d of %d", rep.Changed, rep.SourceItems+rep.TargetItems, changed, n)
		}
		return dyn, raw, nil
	}
	return c
}

// diffTables makes two tables of n items; the second has every 100th item changed.
func (e *env) diffTables(suffix string, n int) (string, string, int64, error) {
	return e.diffTablesWith(suffix, n, 0)
}

// diffTablesWith is diffTables on tables of rcu provisioned read units (0:
// on-demand).
func (e *env) diffTablesWith(suffix string, n int, rcu int64) (string, string, int64, error) {
	a, err := e.createTableWith(suffix+"-restored", rcu)
	if err != nil {
		return "", "", 0, err
	}
	b, err := e.createTableWith(suffix, rcu)
	if err != nil {
		return "", "", 0, err
	}
	items := users(n)
	if err := e.batchWrite(a, puts(items)); err != nil {
		return "", "", 0, err
	}
	var changed int64
	for i := 0; i < n; i += 100 {
		it := map[string]types.AttributeValue{}
		for k, v := range items[i] {
			it[k] = v
		}
		it["status"] = &types.AttributeValueMemberS{Value: "corrupted"}
		items[i] = it
		changed++
	}
	return a, b, changed, e.batchWrite(b, puts(items))
}

// diffReport is the part of `table diff -o json` the bench checks.
type diffReport struct {
	SourceItems int64 `json:"source_items"`
	TargetItems int64 `json:"target_items"`
	Changed     int64 `json:"changed"`
}

func (e *env) diff(a, b string, extra ...string) (diffReport, measure, error) {
	var rep diffReport
	keys := filepath.Join(e.tmp, "keys-"+a+".jsonl")
	out, m, err := e.runDynops(append([]string{"table", "diff", "--source", a, "--target", b,
		"--segments", strconv.Itoa(e.segments), "--keys-out", keys, "--force", "--timeout", "10m"}, extra...)...)
	if err != nil {
		return rep, m, err
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return rep, m, fmt.Errorf("table diff -o json: %w: %s", err, out)
	}
	m.work = float64(rep.SourceItems + rep.TargetItems)
	return rep, m, nil
}

// repairCase: `dynops pitr repair --unconditional` copying back the half of
// the items the original lost, beside raw BatchWriteItem of the same items
// into the same table (same workers). Repair also reads each item from the
// restored table (BatchGetItem): the raw client has them in memory.
func repairCase() *benchCase {
	var from, to, keys string
	var lost []map[string]types.AttributeValue
	c := &benchCase{name: "pitr repair --unconditional", unit: "items/s", goal: 0.9}
	c.refRound = func(e *env) (measure, error) {
		keys := make([]map[string]types.AttributeValue, len(lost))
		for i, it := range lost {
			keys[i] = map[string]types.AttributeValue{"user_id": it["user_id"]}
		}
		start := time.Now()
		items, err := e.rawGet(from, keys)
		if err == nil {
			err = e.batchWrite(to, puts(items))
		}
		m := measure{work: float64(len(items)), seconds: time.Since(start).Seconds()}
		if err == nil && len(items) != len(lost) {
			err = fmt.Errorf("read %d items, want %d", len(items), len(lost))
		}
		if err != nil {
			return m, err
		}
		return m, e.batchWrite(to, deletes(lost))
	}
	c.setup = func(e *env) error {
		c.raw = fmt.Sprintf("BatchWriteItem, %d workers", e.workers)
		c.ref = fmt.Sprintf("BatchGetItem, then BatchWriteItem, %d workers", e.workers)
		var err error
		if from, err = e.createTable("repair-restored"); err != nil {
			return err
		}
		if to, err = e.createTable("repair"); err != nil {
			return err
		}
		if err := e.tagRestoredFrom(from, to); err != nil {
			return err
		}
		items := users(e.items)
		half := len(items) / 2
		lost = items[half:]
		if err := e.batchWrite(from, puts(items)); err != nil {
			return err
		}
		if err := e.batchWrite(to, puts(items[:half])); err != nil {
			return err
		}
		keys = filepath.Join(e.tmp, "keys-"+from+".jsonl")
		_, _, err = e.diff(from, to)
		return err
	}
	c.round = func(e *env) (measure, measure, error) {
		start := time.Now()
		err := e.batchWrite(to, puts(lost))
		raw := measure{work: float64(len(lost)), seconds: time.Since(start).Seconds()}
		if err == nil {
			err = e.batchWrite(to, deletes(lost))
		}
		if err != nil {
			return measure{}, raw, err
		}
		out, dyn, err := e.runDynops("pitr", "repair", "--from", from, "--to", to, "--keys", keys,
			"--unconditional", "--workers", strconv.Itoa(e.workers), "--unscoped", "bench: every difference is damage", "--yes")
		if err != nil {
			return dyn, raw, err
		}
		var rep struct {
			Result struct {
				Copied int64 `json:"copied"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			return dyn, raw, fmt.Errorf("pitr repair -o json: %w: %s", err, out)
		}
		if rep.Result.Copied != int64(len(lost)) {
			return dyn, raw, fmt.Errorf("repair copied %d items, want %d", rep.Result.Copied, len(lost))
		}
		dyn.work = float64(rep.Result.Copied)
		return dyn, raw, e.batchWrite(to, deletes(lost)) // lost again for the next round
	}
	return c
}

// repairExportCase: `dynops pitr repair --unconditional --from-export`, the
// images streamed from a full export in the target's S3 (AWS's layout)
// instead of read from a restored table, beside raw BatchWriteItem of the
// same items (same workers).
func repairExportCase() *benchCase {
	var to, keys, uri string
	var lost []map[string]types.AttributeValue
	c := &benchCase{name: "pitr repair --from-export", unit: "items/s", goal: 0.9}
	c.setup = func(e *env) error {
		c.raw = fmt.Sprintf("BatchWriteItem, %d workers", e.workers)
		var err error
		var items []map[string]types.AttributeValue
		// The export is of the table it repairs (its manifest's table ARN names it).
		if to, err = e.createTable("repair-export"); err != nil {
			return err
		}
		d, err := e.db.DescribeTable(e.ctx, &dynamodb.DescribeTableInput{TableName: &to})
		if err != nil {
			return err
		}
		if uri, items, err = e.export("repair", e.items, aws.ToString(d.Table.TableArn)); err != nil {
			return err
		}
		half := len(items) / 2
		lost = items[half:]
		if err := e.batchWrite(to, puts(items[:half])); err != nil {
			return err
		}
		keys = filepath.Join(e.tmp, "keys-export.jsonl")
		_, _, err = e.runDynops("table", "diff", "--source-export", uri, "--target", to, "--keys-out", keys, "--unverified-exports", "bench: the emulator keeps no export records")
		return err
	}
	c.round = func(e *env) (measure, measure, error) {
		start := time.Now()
		err := e.batchWrite(to, puts(lost))
		raw := measure{work: float64(len(lost)), seconds: time.Since(start).Seconds()}
		if err == nil {
			err = e.batchWrite(to, deletes(lost))
		}
		if err != nil {
			return measure{}, raw, err
		}
		out, dyn, err := e.runDynops("pitr", "repair", "--from-export", uri, "--to", to, "--keys", keys,
			"--unconditional", "--workers", strconv.Itoa(e.workers), "--unscoped", "bench: every difference is damage", "--yes", "--unverified-exports", "bench: the emulator keeps no export records")
		if err != nil {
			return dyn, raw, err
		}
		var rep struct {
			Result struct {
				Copied int64 `json:"copied"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			return dyn, raw, fmt.Errorf("pitr repair -o json: %w: %s", err, out)
		}
		if rep.Result.Copied != int64(len(lost)) {
			return dyn, raw, fmt.Errorf("repair copied %d items, want %d", rep.Result.Copied, len(lost))
		}
		dyn.work = float64(rep.Result.Copied)
		return dyn, raw, e.batchWrite(to, deletes(lost))
	}
	return c
}

// verifyCase: `dynops export verify --dir` of an export in AWS's layout
// (exporttest) beside `gzip -t` of the same data files, both with one
// process (or worker) per CPU: MB/s of compressed input.
func verifyCase() *benchCase {
	var root string
	var w exporttest.Written
	const prefix = "exports/dev-bench-user"
	c := &benchCase{name: "export verify", unit: "MB/s", goal: 0.6}
	c.setup = func(e *env) error {
		if _, err := exec.LookPath("gzip"); err != nil {
			return fmt.Errorf("gzip is not on PATH: it is this case's reference")
		}
		c.raw = fmt.Sprintf("gzip -t, %d files at once", runtime.NumCPU())
		var err error
		root = filepath.Join(e.tmp, "export")
		files := make([]int, 8)
		for i := range files {
			files[i] = max(e.items/2, 1000)
		}
		w, err = exporttest.Write(root, exporttest.Spec{Prefix: prefix, ExportID: "01700000000000-bench", FileItems: files, PadBytes: 150})
		return err
	}
	c.round = func(e *env) (measure, measure, error) {
		mb := float64(w.Bytes) / 1e6
		start := time.Now()
		err := gzipTest(root, w.DataKeys)
		raw := measure{work: mb, seconds: time.Since(start).Seconds()}
		if err != nil {
			return measure{}, raw, err
		}
		// A local copy: DynamoDB's word on it is taken as unverified.
		out, dyn, err := e.runDynops("export", "verify", "--dir", root, "--prefix", prefix, "--parallel", strconv.Itoa(runtime.NumCPU()),
			"--unverified-exports", "bench: a local copy")
		if err != nil {
			return dyn, raw, err
		}
		var rep struct {
			OK    bool  `json:"ok"`
			Items int64 `json:"items"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			return dyn, raw, fmt.Errorf("export verify -o json: %w", err)
		}
		if !rep.OK || rep.Items != w.Items {
			return dyn, raw, fmt.Errorf("export verify: ok=%v items=%d, want ok with %d items", rep.OK, rep.Items, w.Items)
		}
		dyn.work = mb
		return dyn, raw, nil
	}
	return c
}

// gzipTest runs `gzip -t` on each file, one process per CPU at a time.
func gzipTest(root string, keys []string) error {
	var g errgroup.Group
	g.SetLimit(runtime.NumCPU())
	for _, k := range keys {
		g.Go(func() error {
			p := filepath.Join(root, filepath.FromSlash(k))
			if out, err := exec.Command("gzip", "-t", p).CombinedOutput(); err != nil {
				return fmt.Errorf("gzip -t %s: %v %s", p, err, out)
			}
			return nil
		})
	}
	return g.Wait()
}
