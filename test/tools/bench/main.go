// Command bench measures dynops against the raw client doing the same work
// in the same run, and prints each ratio beside its goal (`make bench`):
//
//	table diff                   vs a raw segmented Scan of the same two tables (aws-sdk-go-v2, same segments)
//	table diff, provisioned      the same on provisioned tables: the budget wrapper in the path, not binding
//	pitr repair --unconditional  vs raw BatchWriteItem of the same items (same workers)
//	pitr repair --from-export    the same, the images streamed from an export in S3
//	migrate backfill             vs raw BatchWriteItem of the same routed items (same workers)
//	export verify                vs `gzip -t` of the same files (same number of processes)
//
// then ONE MACHINE (onemachine.go): the export parse and the diff of two
// exports in items per CPU second (items/s per core) with the cores each
// kept busy, each beside a baseline measured in the same run (encoding/json
// decoding the same lines; the parse), and the diff's peak RSS at 10x the
// items over 1x (exports, and Scans of the in-process fake DynamoDB);
//
// then SHARDS (shards.go): table diff --engine local at 2 shards over 1, on
// the same tables;
//
// then SCAN PATH (scanpath.go): table diff on on-demand and provisioned
// tables, and the raw Scan with and without ReturnConsumedCapacity, each
// beside the raw Scan in the same rounds, and the estimate's cost;
//
// then two tables of their own (budgets.go): each bulk command at a
// capacity budget (items/s and the units/s used beside the budget), and
// each migration path (scan, export, export+import) beside migrate plan's
// estimate of it.
//
// dynops runs as the built binary (bin/dynops), the way an operator runs it,
// so its max RSS is measured too; the raw client runs in this process with the
// same AWS configuration loader (internal/awsconfig). Rounds alternate the two
// so both see the same load, and the ratio printed is the median of the
// rounds' ratios. On the emulator (moto, one Python process) the emulator is
// the ceiling both reach; the ratios say how close dynops gets to it.
//
// A row below its goal makes the bench exit 1 naming the row (after all
// rows are printed): performance claims are these ratios, never timed
// assertions in tests. -baseline BIN benches another build of dynops in the
// same rounds of table diff (before/after in one run).
//
// `make bench-memory` (-memory) measures the diff's max RSS at 1x and 10x
// the items instead, and writes a heap profile of the diff at its peak.
//
//	bin/with-emulator -- go run ./test/tools/bench [-items 20000] [-rounds 3] [-only backfill,unconditional] [-profile-dir DIR]
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynops/dynops/internal/awsconfig"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// env is what every case needs.
type env struct {
	ctx      context.Context
	cfg      aws.Config
	db       *dynamodb.Client
	dynops   string // the binary
	baseline string // another build benched beside it (-baseline), "" for none
	region   string
	endpoint string // "" on AWS
	id       string // unique part of table names
	tmp      string
	items    int // per table
	workers  int
	segments int
	// scanItems is the items per table of the SCAN PATH section.
	scanItems int
	profiles  string // where each dynops run's profiles go ("": none)
	gctrace   bool   // run dynops with GODEBUG=gctrace=1 and keep its heap figures
	runs      int
	cleanup   []func()
}

// measure is one timed run: how much work (items or bytes), how long, and
// the max RSS of the process (dynops only).
type measure struct {
	work    float64
	seconds float64
	cpu     float64 // CPU seconds (user + system) of the process
	rssKB   int64
	// From the garbage collector's trace (-memory): the largest heap left
	// live after a collection, and the largest heap goal, in MB.
	liveMB, goalMB int
}

func (m measure) rate() float64 { return m.work / m.seconds }

// benchCase is one line of the table: a dynops operation beside the raw
// client doing the same work.
type benchCase struct {
	name, raw string
	unit      string  // of the rates: items/s or MB/s
	goal      float64 // dynops/raw must be at least this
	setup     func(e *env) error
	// round runs dynops and the raw client once each.
	round func(e *env) (dynops, raw measure, err error)
	// ref, when set, is a second raw client doing everything dynops does
	// (read the items, then write them), run in each round after round:
	// its ratio says what dynops adds beyond the service's own work.
	ref      string
	refRound func(e *env) (measure, error)
	refNote  string // what the ref's ratio says (default: what dynops adds)
	// after, when set, runs once after the rounds and returns lines printed
	// below the table (e.g. the migration's catch-up lag).
	after func(e *env) ([]string, error)
}

// cases lists what `make bench` measures, in order.
func cases() []*benchCase {
	return []*benchCase{diffCase(), provisionedDiffCase(), repairCase(), repairExportCase(), backfillCase(), verifyCase()}
}

func run() error {
	items := flag.Int("items", 10000, "items per table")
	rounds := flag.Int("rounds", 3, "rounds per case (dynops and the raw client alternate)")
	only := flag.String("only", "", "run only the cases whose name contains one of these comma-separated words (e.g. backfill,unconditional)")
	profiles := flag.String("profile-dir", "", "write a CPU and a heap profile of each dynops run there (DYNOPS_CPUPROFILE, DYNOPS_MEMPROFILE)")
	memory := flag.Bool("memory", false, "measure the diff's max RSS at -items and 10x -items instead (make bench-memory)")
	fake := flag.Bool("fake", false, "with -memory: serve the tables from an in-process fake DynamoDB (Scan only; seconds instead of minutes)")
	profile := flag.String("heap-profile", ".cache/bench/diff-heap.pprof", "with -memory: where the in-process diff's peak heap profile goes")
	bin := flag.String("dynops", "bin/dynops", "the dynops binary")
	baseline := flag.String("baseline", "", "another dynops build (e.g. of an older commit) run in the same rounds of table diff: its ratio is before/after in one run")
	segments := flag.Int("segments", 4, "Scan segments per table (diff and the raw Scan)")
	scanItems := flag.Int("scan-items", 2000, "items per table in the SCAN PATH section (seven variants, two rounds each: moto serves ~600 items/s)")
	flag.Parse()

	e, err := newEnv(*bin, *items)
	if err != nil {
		return err
	}
	defer e.close()
	if *profiles != "" {
		if err := os.MkdirAll(*profiles, 0o755); err != nil {
			return err
		}
	}
	e.segments = *segments
	e.scanItems = *scanItems
	if *baseline != "" {
		if e.baseline, err = filepath.Abs(*baseline); err != nil {
			return err
		}
	}
	e.profiles = *profiles
	fmt.Printf("dynops bench: %s, %d CPUs (GOMAXPROCS %d), %d items per table, %d segments per table, %d workers\n\n",
		e.where(), runtime.NumCPU(), runtime.GOMAXPROCS(0), e.items, e.segments, e.workers)
	if *memory {
		return benchMemory(e, *items, *profile, *fake)
	}
	type row struct {
		c           *benchCase
		dyn, raw    []measure
		ratios      []float64
		refs        []measure
		refRatios   []float64
		setupSecond float64
	}
	var rows []row
	var notes []string
	for _, c := range cases() {
		if !selected(c.name, *only) {
			continue
		}
		start := time.Now()
		if err := c.setup(e); err != nil {
			return fmt.Errorf("%s: setup: %w", c.name, err)
		}
		r := row{c: c, setupSecond: time.Since(start).Seconds()}
		for i := 0; i < *rounds; i++ {
			d, w, err := c.round(e)
			if err != nil {
				return fmt.Errorf("%s: round %d: %w", c.name, i+1, err)
			}
			r.dyn, r.raw = append(r.dyn, d), append(r.raw, w)
			r.ratios = append(r.ratios, d.rate()/w.rate())
			fmt.Fprintf(os.Stderr, "bench: %-28s round %d: dynops %8.1f %s (%.2fs, max RSS %d MB)  raw %8.1f %s (%.2fs)  ratio %.2fx\n",
				c.name, i+1, d.rate(), c.unit, d.seconds, d.rssKB/1024, w.rate(), c.unit, w.seconds, d.rate()/w.rate())
			if c.refRound != nil {
				ref, err := c.refRound(e)
				if err != nil {
					return fmt.Errorf("%s: round %d: %s: %w", c.name, i+1, c.ref, err)
				}
				r.refs, r.refRatios = append(r.refs, ref), append(r.refRatios, d.rate()/ref.rate())
				fmt.Fprintf(os.Stderr, "bench: %-28s round %d: %s %8.1f %s (%.2fs)  ratio %.2fx\n",
					c.name, i+1, c.ref, ref.rate(), c.unit, ref.seconds, d.rate()/ref.rate())
			}
		}
		if c.after != nil {
			lines, err := c.after(e)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			notes = append(notes, lines...)
		}
		rows = append(rows, r)
	}
	if len(rows) > 0 {
		fmt.Printf("%-28s %-14s %-40s %-14s %-7s %-7s %s\n", "OPERATION", "DYNOPS", "RAW CLIENT (same run)", "RAW", "RATIO", "GOAL", "")
	}
	var missed []string
	for _, r := range rows {
		ratio := median(r.ratios)
		verdict := "met"
		if ratio < r.c.goal {
			verdict, missed = "MISSED", append(missed, r.c.name)
		}
		fmt.Printf("%-28s %-14s %-40s %-14s %-7s %-7s %s\n", r.c.name,
			fmt.Sprintf("%.1f %s", median(rates(r.dyn)), r.c.unit), r.c.raw,
			fmt.Sprintf("%.1f %s", median(rates(r.raw)), r.c.unit),
			fmt.Sprintf("%.2fx", ratio), fmt.Sprintf(">=%.2fx", r.c.goal), verdict)
		if r.c.refRound != nil {
			note := r.c.refNote
			if note == "" {
				note = "(what dynops adds)"
			}
			label := "  same work, raw"
			if r.c.refNote != "" {
				label = "  baseline build"
			}
			fmt.Printf("%-28s %-14s %-40s %-14s %-7s %-7s %s\n", label, "", r.c.ref,
				fmt.Sprintf("%.1f %s", median(rates(r.refs)), r.c.unit), fmt.Sprintf("%.2fx", median(r.refRatios)), "-", note)
		}
	}
	if len(rows) > 0 {
		fmt.Printf("\nratio = dynops rate / raw rate, median of %d alternating rounds; max RSS of dynops per case:", *rounds)
		for _, r := range rows {
			fmt.Printf(" %s %d MB;", r.c.name, maxRSS(r.dyn)/1024)
		}
		fmt.Println()
	}
	for _, n := range notes {
		fmt.Println(n)
	}
	if selected("onemachine", *only) {
		var om []goalRow
		err := timed("onemachine", func(e *env) (err error) { om, err = oneMachine(e); return err }, e)
		if err != nil {
			return fmt.Errorf("one machine: %w", err)
		}
		missed = append(missed, printGoalRows(om)...)
	}
	if selected("shards", *only) {
		var rows []goalRow
		err := timed("shards", func(e *env) (err error) { rows, err = shardsSection(e); return err }, e)
		if err != nil {
			return fmt.Errorf("shards: %w", err)
		}
		fmt.Printf("\nSHARDS (table diff --engine local, the same tables, median of 3 alternating rounds)\n")
		missed = append(missed, printGoalRows(rows)...)
	}
	for _, s := range []struct {
		name string
		run  func(*env) error
	}{{"scanpath", scanPathSection}, {"budget", budgetSection}, {"path", pathSection}} {
		if selected(s.name, *only) {
			if err := timed(s.name, s.run, e); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		}
	}
	if len(missed) > 0 {
		// Exit non-zero naming the rows (docs/performance.md: what bounds each ratio).
		return fmt.Errorf("%d row(s) below their goal: %s", len(missed), strings.Join(missed, "; "))
	}
	return nil
}

func newEnv(bin string, items int) (*env, error) {
	ctx := context.Background()
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("no dynops binary at %s: run `make build` first", bin)
	}
	e := &env{ctx: ctx, dynops: abs, items: items, workers: 8, segments: 4}
	e.endpoint = os.Getenv("DYNOPS_EMULATOR_URL")
	e.region = os.Getenv("AWS_REGION")
	if e.region == "" {
		e.region = "eu-west-1"
	}
	if e.endpoint == "" && !strings.EqualFold(os.Getenv("DYNOPS_TEST_TARGET"), "aws") {
		return nil, fmt.Errorf("no emulator: run under bin/with-emulator (make bench), or set DYNOPS_TEST_TARGET=aws to bench against real AWS (tables dev-bench-* are created and deleted)")
	}
	// moto serves concurrent pages one at a time: a 1 MB page can wait minutes.
	opts := awsconfig.Options{Region: e.region, EndpointURL: e.endpoint, Timeout: 10 * time.Minute}
	if e.cfg, err = awsconfig.Load(ctx, opts); err != nil {
		return nil, err
	}
	e.db = dynamodb.NewFromConfig(e.cfg)
	var b [4]byte
	_, _ = rand.Read(b[:])
	e.id = "bench" + hex.EncodeToString(b[:])
	if e.tmp, err = os.MkdirTemp("", "dynops-bench-"); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *env) where() string {
	if e.endpoint != "" {
		return "emulator " + e.endpoint
	}
	return "AWS " + e.region
}

func (e *env) close() {
	for _, f := range slices.Backward(e.cleanup) {
		f()
	}
	os.RemoveAll(e.tmp)
}

// runDynops runs the binary with the target's flags and returns its stdout,
// the wall time and its max RSS.
func (e *env) runDynops(args ...string) ([]byte, measure, error) {
	args = append(args, "--region", e.region, "--audit-log", filepath.Join(e.tmp, "audit.jsonl"), "-o", "json")
	if e.endpoint != "" {
		args = append(args, "--endpoint-url", e.endpoint)
	}
	cmd := exec.CommandContext(e.ctx, e.dynops, args...)
	if e.profiles != "" {
		e.runs++
		base := filepath.Join(e.profiles, fmt.Sprintf("%02d-%s-%s", e.runs, args[0], args[1]))
		cmd.Env = append(os.Environ(), "DYNOPS_CPUPROFILE="+base+".cpu.pprof", "DYNOPS_MEMPROFILE="+base+".heap.pprof")
	}
	if e.gctrace {
		cmd.Env = append(cmd.Environ(), "GODEBUG=gctrace=1")
	}
	var errOut strings.Builder
	var stdout bytes.Buffer
	cmd.Stderr, cmd.Stdout = &errOut, &stdout
	start := time.Now()
	err := cmd.Start()
	var hwm int64
	if err == nil {
		done := make(chan struct{})
		polled := make(chan int64)
		go func() { polled <- pollHWM(cmd.Process.Pid, done) }()
		err = cmd.Wait()
		close(done)
		hwm = <-polled
	}
	out := stdout.Bytes()
	m := measure{seconds: time.Since(start).Seconds(), rssKB: hwm}
	if ps := cmd.ProcessState; ps != nil {
		m.cpu = (ps.UserTime() + ps.SystemTime()).Seconds() // the child's own, unlike its max RSS
		if hwm == 0 {
			m.rssKB = rssKB(ps) // not Linux: see rssKB
		}
	}
	if e.gctrace {
		m.liveMB, m.goalMB = gcTrace(errOut.String())
	}
	if err != nil {
		return out, m, fmt.Errorf("dynops %s: %w\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out, m, nil
}

// gcLine is the heap part of a GODEBUG=gctrace=1 line: "4->5->2 MB, 8 MB goal".
var gcLine = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB, (\d+) MB goal`)

// gcTrace returns the largest live heap after a collection and the largest
// heap goal of a gctrace.
func gcTrace(trace string) (live, goal int) {
	for _, m := range gcLine.FindAllStringSubmatch(trace, -1) {
		l, _ := strconv.Atoi(m[3])
		g, _ := strconv.Atoi(m[4])
		live, goal = max(live, l), max(goal, g)
	}
	return live, goal
}

// selected tells whether the case named name is in -only (all when empty).
func selected(name, only string) bool {
	if only == "" {
		return true
	}
	for _, w := range strings.Split(only, ",") {
		if w = strings.TrimSpace(w); w != "" && strings.Contains(name, w) {
			return true
		}
	}
	return false
}

func rates(ms []measure) []float64 {
	var r []float64
	for _, m := range ms {
		r = append(r, m.rate())
	}
	return r
}

func maxRSS(ms []measure) int64 {
	var m int64
	for _, x := range ms {
		m = max(m, x.rssKB)
	}
	return m
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printGoalRows prints rows with their goals and returns the names of those
// that missed it.
func printGoalRows(rows []goalRow) (missed []string) {
	fmt.Printf("%-28s %-22s %-52s %-7s %-7s %s\n", "ROW", "DYNOPS", "BASELINE (same run)", "RATIO", "GOAL", "")
	for _, r := range rows {
		verdict := "met"
		if !r.met() {
			verdict, missed = "MISSED", append(missed, r.name)
		}
		fmt.Printf("%-28s %-22s %-52s %-7s %-7s %s\n", r.name, r.value, r.baseline, fmt.Sprintf("%.2fx", r.ratio), r.goalText(), verdict)
	}
	return missed
}
