package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
)

// goalRow is one figure with its goal, printed in the ONE MACHINE table;
// a row that misses its goal makes the bench exit non-zero naming it.
type goalRow struct {
	name, value, baseline string
	ratio, goal           float64
	atMost                bool // the goal is a ceiling (memory), not a floor
}

func (r goalRow) met() bool {
	if r.atMost {
		return r.ratio <= r.goal
	}
	return r.ratio >= r.goal
}

func (r goalRow) goalText() string {
	if r.atMost {
		return fmt.Sprintf("<=%.2fx", r.goal)
	}
	return fmt.Sprintf(">=%.2fx", r.goal)
}

// Goals of the one-machine rows (docs/performance.md, "One machine"). They
// are ratios against work measured in the same run, never absolute rates:
// this machine is shared and its speed changes from minute to minute.
const (
	// dynops's export parser (ddbjson into AttributeValues, checked against
	// the manifests) against encoding/json decoding the same lines into
	// maps, per CPU second: the hand-written parser must not be slower.
	goalParseVsJSON = 1.0
	// The diff of two exports (parse both, reduce to key + checksum, spill,
	// compare) against parsing them alone, per CPU second: what reduce,
	// spill and compare add must stay under the parse's own cost.
	goalDiffVsParse = 0.5
	// Peak RSS at 10x the items over 1x: memory that does not grow with
	// the items (the 1.20x before the budgets landed).
	goalMemory = 1.2
)

// oneMachine measures what one process does with every core: the export
// parse and the diff in items per CPU second (items/s per core), how many
// cores each kept busy, and the diff's peak RSS at 1x and 10x the items
// (exports, and the Scan path against the in-process fake DynamoDB).
func oneMachine(e *env) ([]goalRow, error) {
	n := max(e.items, 8)
	a, err := writeExport(e, "om-a", n, 0)
	if err != nil {
		return nil, err
	}
	b, err := writeExport(e, "om-b", n, n/100)
	if err != nil {
		return nil, err
	}
	// Alternate the raw parse and dynops's, rounds as the other cases.
	var parse, raw, diff []measure
	for i := 0; i < 3; i++ {
		r, err := rawParse(a.files)
		if err != nil {
			return nil, err
		}
		p, err := e.dynopsParse(a.root)
		if err != nil {
			return nil, err
		}
		if p.work != r.work {
			return nil, fmt.Errorf("export parse read %.0f items, encoding/json %.0f", p.work, r.work)
		}
		d, err := e.exportDiff(a.root, b.root)
		if err != nil {
			return nil, err
		}
		parse, raw, diff = append(parse, p), append(raw, r), append(diff, d)
		fmt.Fprintf(os.Stderr, "bench: one machine round %d: parse %.0f items/s per core (%.2f cores), encoding/json %.0f (%.2f cores), diff %.0f items/s per core (%.2f cores, max RSS %d MB)\n",
			i+1, p.perCore(), p.cores(), r.perCore(), r.cores(), d.perCore(), d.cores(), d.rssKB/1024)
	}
	pc, rc, dc := median(perCore(parse)), median(perCore(raw)), median(perCore(diff))
	rows := []goalRow{
		{name: "export parse", value: fmt.Sprintf("%.0f items/s/core", pc), baseline: fmt.Sprintf("encoding/json into maps: %.0f items/s/core", rc),
			ratio: pc / rc, goal: goalParseVsJSON},
		{name: "table diff of two exports", value: fmt.Sprintf("%.0f items/s/core", dc), baseline: fmt.Sprintf("export parse (above): %.0f items/s/core", pc),
			ratio: dc / pc, goal: goalDiffVsParse},
	}
	fmt.Printf("\nONE MACHINE (%d CPUs; items/s/core = items per CPU second of the process; cores = CPU seconds / wall seconds, median of 3 rounds)\n", runtime.NumCPU())
	fmt.Printf("  export parse: %d items in %d files, %.2f cores busy; encoding/json %.2f cores; table diff of two exports: %.2f cores, %.0f items/s wall\n",
		n, len(a.files), median(cores(parse)), median(cores(raw)), median(cores(diff)), median(rates(diff)))

	// Memory: the same diffs at 10x the items, 1x and 10x alternating,
	// three of each (one peak RSS is a few MB of garbage-collector timing).
	a10, err := writeExport(e, "om-a10", 10*n, 0)
	if err != nil {
		return nil, err
	}
	b10, err := writeExport(e, "om-b10", 10*n, n/10)
	if err != nil {
		return nil, err
	}
	var ex1, ex10, sc1, sc10 []measure
	for i := 0; i < 3; i++ {
		for _, run := range []struct {
			into *[]measure
			f    func() (measure, error)
		}{
			{&ex1, func() (measure, error) { return e.exportDiff(a.root, b.root) }},
			{&ex10, func() (measure, error) { return e.exportDiff(a10.root, b10.root) }},
			{&sc1, func() (measure, error) { return e.fakeDiff(n) }},
			{&sc10, func() (measure, error) { return e.fakeDiff(10 * n) }},
		} {
			m, err := run.f()
			if err != nil {
				return nil, err
			}
			*run.into = append(*run.into, m)
		}
	}
	fmt.Printf("  table diff over Scan (fake service, SDK decoding included): %.0f items/s/core at 1x, %.0f at 10x (%.2f and %.2f cores)\n",
		median(perCore(sc1)), median(perCore(sc10)), median(cores(sc1)), median(cores(sc10)))
	rows = append(rows, memoryRow("memory, diff of two exports", fmt.Sprintf("%d items per side", n), ex1, ex10),
		memoryRow("memory, table diff (Scan)", fmt.Sprintf("%d items per table, fake service", n), sc1, sc10))
	return rows, nil
}

// memoryRow is the median peak RSS at 10x over the median at 1x.
func memoryRow(name, what string, at1, at10 []measure) goalRow {
	m1, m10 := median(rss(at1)), median(rss(at10))
	return goalRow{name: name, value: fmt.Sprintf("%.1f MB at 10x", m10/1024), baseline: fmt.Sprintf("%.1f MB at 1x (%s)", m1/1024, what),
		ratio: m10 / m1, goal: goalMemory, atMost: true}
}

func rss(ms []measure) []float64 {
	var r []float64
	for _, m := range ms {
		r = append(r, float64(m.rssKB))
	}
	return r
}

// written is an export on disk: its root (a local copy of the bucket) and
// its data files.
type written struct {
	root  string
	files []string
	items int64
}

// writeExport writes a full export of n items in 8 files in AWS's layout
// (exporttest, the bench's ~250-byte items), with extra more items in the
// last file (the differences of a diff).
func writeExport(e *env, name string, n, extra int) (written, error) {
	root := filepath.Join(e.tmp, name)
	files := make([]int, 8)
	for i := range files {
		files[i] = n / 8
	}
	files[7] += n - 8*(n/8) + extra
	w, err := exporttest.Write(root, exporttest.Spec{Prefix: "exports/" + name, ExportID: "01700000000000-" + name, FileItems: files, PadBytes: 150})
	if err != nil {
		return written{}, err
	}
	out := written{root: root, items: w.Items}
	for _, k := range w.DataKeys {
		out.files = append(out.files, filepath.Join(root, filepath.FromSlash(k)))
	}
	return out, nil
}

// cpuSeconds is this process's CPU time so far (user + system).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// inProcess times f in this process: wall and CPU seconds.
func inProcess(f func() (int64, error)) (measure, error) {
	runtime.GC()
	cpu, start := cpuSeconds(), time.Now()
	n, err := f()
	return measure{work: float64(n), seconds: time.Since(start).Seconds(), cpu: cpuSeconds() - cpu}, err
}

// dynopsParse reads every item of the export at root as table diff and
// pitr repair read them (exportverify.Export.EachItem, one file per CPU).
func (e *env) dynopsParse(root string) (measure, error) {
	return inProcess(func() (int64, error) {
		ex, err := exportverify.OpenExport(root, nil)
		if err != nil {
			return 0, err
		}
		var n atomic.Int64
		_, err = ex.EachItem(e.ctx, runtime.NumCPU(), func(map[string]types.AttributeValue) error { n.Add(1); return nil })
		return n.Load(), err
	})
}

// rawParse is a plain Go reader of the same files: gunzip, split lines,
// encoding/json into a map per line, one file per CPU at a time.
func rawParse(files []string) (measure, error) {
	return inProcess(func() (int64, error) {
		var n atomic.Int64
		var g errgroup.Group
		g.SetLimit(runtime.NumCPU())
		for _, p := range files {
			g.Go(func() error {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				defer f.Close()
				zr, err := gzip.NewReader(bufio.NewReaderSize(f, 64<<10))
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				sc := bufio.NewScanner(zr)
				sc.Buffer(make([]byte, 256<<10), 8<<20)
				for sc.Scan() {
					var line map[string]any
					if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
						return fmt.Errorf("%s: %w", p, err)
					}
					n.Add(1)
				}
				return sc.Err()
			})
		}
		err := g.Wait()
		return n.Load(), err
	})
}

// exportDiff runs `dynops table diff` of two local exports (no table read).
func (e *env) exportDiff(a, b string) (measure, error) {
	keys := filepath.Join(e.tmp, "keys-om.jsonl")
	out, m, err := e.runDynops("table", "diff", "--source-export", a, "--target-export", b, "--key", "user_id",
		"--export-parallel", strconv.Itoa(max(4, runtime.NumCPU())), "--keys-out", keys, "--force",
		"--unverified-exports", "bench: exports written by the bench in AWS's layout")
	if err != nil {
		return m, err
	}
	var rep diffReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return m, fmt.Errorf("table diff -o json: %w: %s", err, out)
	}
	m.work = float64(rep.SourceItems + rep.TargetItems)
	return m, nil
}

// fakeDiff runs `dynops table diff` of two tables of n items served by the
// in-process fake DynamoDB (fakeddb.go): the Scan path at full speed.
func (e *env) fakeDiff(n int) (measure, error) {
	f, err := startFake(n)
	if err != nil {
		return measure{}, err
	}
	defer f.close()
	endpoint := e.endpoint
	e.endpoint = f.url
	defer func() { e.endpoint = endpoint }()
	_, m, err := e.diff("dev-fake-restored", "dev-fake")
	return m, err
}

func (m measure) perCore() float64 { return m.work / m.cpu }
func (m measure) cores() float64   { return m.cpu / m.seconds }

func perCore(ms []measure) []float64 {
	var r []float64
	for _, m := range ms {
		r = append(r, m.perCore())
	}
	return r
}

func cores(ms []measure) []float64 {
	var r []float64
	for _, m := range ms {
		r = append(r, m.cores())
	}
	return r
}
