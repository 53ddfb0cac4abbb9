package migrate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/dynops/dynops/internal/batchwrite"
	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/tablediff"
)

// BackfillOptions of a backfill.
type BackfillOptions struct {
	Input
	// Segments is the number of parallel Scan segments (default 4); a resumed
	// backfill keeps the number it started with.
	Segments int
	// Writers is the number of concurrent BatchWriteItem calls per segment
	// (default 2): Segments x Writers writers are shared by all segments.
	Writers int
	// MaxWritesPerSecond caps the items written per second over all segments (0: no cap).
	MaxWritesPerSecond int
	// AllowUnmatched lets items no rule matches be skipped (counted) instead of failing the run.
	AllowUnmatched bool
	// AllowUntransformable lets items their route cannot transform (a
	// rename onto an attribute the item already has) be skipped (counted)
	// instead of failing the run.
	AllowUntransformable bool
	// Restart starts a new backfill (new stream position) over an existing state.
	Restart bool
	// Export, when it asks for one (Requested), reads a full export of the
	// source instead of scanning it (backfill_export.go).
	Export *ExportOptions
	// PageLimit caps the items per Scan page (0: DynamoDB's 1 MB pages).
	PageLimit int32
	Backoff   repair.Backoff
	Now       func() time.Time
	// Progress, when set, is called after each page with the items read so far,
	// the total estimate and the estimated time left (0 when unknown).
	Progress func(done, total int64, eta time.Duration)
	// LeftBehind, when set, is called for each item the backfill leaves
	// behind, as it is met (kind "unmatched": no route matches it, the
	// item's key; "untransformable": its route cannot transform it, "KEY:
	// why"), so that a person sees them during a long run, not only in the
	// result. It may be called from several segments at once.
	LeftBehind func(kind, item string)
	// Started, when set, is called before the first read: once a new
	// backfill's position is recorded, or when a backfill resumes.
	Started func(st *State, resumed bool)
}

// BackfillResult is what a backfill did (read back from its checkpoint).
type BackfillResult struct {
	Source string `json:"source"`
	// Export is the export read instead of a Scan, and its files.
	Export          *ExportState     `json:"export,omitempty"`
	State           string           `json:"state"`
	Resumed         bool             `json:"resumed"`
	AlreadyDone     bool             `json:"already_done"`
	Position        *Position        `json:"position"`
	Read            int64            `json:"items_read"`
	Written         map[string]int64 `json:"written"`
	WrittenTotal    int64            `json:"written_total"`
	Unmatched       int64            `json:"unmatched"`
	UnmatchedSample []string         `json:"unmatched_sample"`
	// Untransformable items matched a route that could not transform them;
	// the sample holds "KEY: why".
	Untransformable       int64    `json:"untransformable"`
	UntransformableSample []string `json:"untransformable_sample"`
	// ReadThisRun is what this run read (a resumed run starts past the
	// checkpoint); Seconds and ItemsPerSec are this run's.
	ReadThisRun int64   `json:"items_read_this_run"`
	Seconds     float64 `json:"seconds"`
	ItemsPerSec float64 `json:"items_per_second"`
	// ActiveSeconds adds up the time of every run of this backfill (up to
	// each run's last checkpoint); OverallItemsPerSec is Read over it.
	ActiveSeconds      float64 `json:"active_seconds"`
	OverallItemsPerSec float64 `json:"overall_items_per_second"`
}

// UnmatchedError is returned when items no rule matches were found without AllowUnmatched.
type UnmatchedError struct {
	Count  int64
	Sample []string
}

func (e *UnmatchedError) Error() string {
	return fmt.Sprintf("%d item(s) match no route (e.g. %v): add rules for them, or pass --allow-unmatched to leave them behind", e.Count, e.Sample)
}

// UntransformableError is returned when items their route cannot transform
// were found without AllowUntransformable. Like unmatched items they are
// counted, sampled and left behind; the rest of the run goes on.
type UntransformableError struct {
	Count  int64
	Sample []string
}

func (e *UntransformableError) Error() string {
	return fmt.Sprintf("%d item(s) cannot be transformed by their route (e.g. %v): fix the route's rename, or pass --allow-untransformable to leave them behind", e.Count, e.Sample)
}

// LeftBehind reports whether err says only that items were left behind
// (unmatched or untransformable): the run itself finished and its result
// is complete. A step refused before its first write (RefusedError) is not.
func LeftBehind(err error) bool {
	if IsRefused(err) {
		return false // nothing was written: the run did not happen
	}
	var u *UnmatchedError
	var t *UntransformableError
	return errors.As(err, &u) || errors.As(err, &t)
}

// leftBehindErr is the error for the items left behind without leave.
func leftBehindErr(unmatched int64, uSample []string, allowU bool, untrans int64, tSample []string, allowT bool) error {
	var errs []error
	if unmatched > 0 && !allowU {
		errs = append(errs, &UnmatchedError{Count: unmatched, Sample: uSample})
	}
	if untrans > 0 && !allowT {
		errs = append(errs, &UntransformableError{Count: untrans, Sample: tSample})
	}
	return errors.Join(errs...)
}

func (r *BackfillResult) leftBehind(o BackfillOptions) error {
	return leftBehindErr(r.Unmatched, r.UnmatchedSample, o.AllowUnmatched, r.Untransformable, r.UntransformableSample, o.AllowUntransformable)
}

// Backfill copies the source into the destinations, resuming from st.
func Backfill(ctx context.Context, c Clients, o BackfillOptions, st *State) (*BackfillResult, error) {
	if o.Segments <= 0 {
		o.Segments = 4
	}
	if o.Writers <= 0 {
		o.Writers = 2
	}
	if o.Backoff.Attempts == 0 {
		o.Backoff = repair.DefaultBackoff()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	start := o.Now()
	src, err := ReadSource(ctx, c.DB, o.Source, o.Routes, true)
	if err != nil {
		return nil, err
	}
	resuming := st.Backfill != nil && !o.Restart
	if resuming && st.BackfillDone() {
		res := backfillResult(st)
		res.AlreadyDone = true
		return res, res.leftBehind(o)
	}
	if o.Restart && st.CatchUp != nil && st.Cutover != nil && st.Cutover.CutAt != nil && st.Cutover.RolledBackAt == nil {
		return nil, &InputError{[]string{fmt.Sprintf("%s has been cut over (%s): roll back before a new backfill", o.Source, st.Cutover.CutAt.Format(time.RFC3339))}}
	}
	if resuming {
		if err := checkExportResume(o, st); err != nil {
			return nil, err
		}
	}
	imports := o.Export.Requested() && o.Export.Import != nil
	switch {
	case imports && !resuming:
		// ImportTable creates them: every destination must be new.
		if err := checkAbsent(ctx, c.DB, src, o.Routes); err != nil {
			return nil, err
		}
	case imports: // resumed: the run before may have created some already
	default:
		checks, err := CheckDestinations(ctx, c.DB, src, o.Routes, !resuming, false)
		if err != nil {
			return nil, err
		}
		if p := Problems(checks); len(p) > 0 {
			return nil, &InputError{p}
		}
	}
	switch {
	case resuming:
	case o.Export.Requested():
		if err := startExport(ctx, c, o, src, st); err != nil {
			return nil, err
		}
		if imports {
			to := o.Export.Import.To
			err := st.Update(func(s *State) {
				s.Backfill.Export.Import = &ImportState{Bucket: to.Bucket, Prefix: to.Prefix, Tables: map[string]*ImportedTableState{}}
			})
			if err != nil {
				return nil, err
			}
		}
	default:
		// Record the stream's position before the first read, so the catch-up
		// starts before the backfill did.
		pos, err := recordPosition(ctx, c.Streams, src.StreamARN, o.Now())
		if err != nil {
			return nil, err
		}
		err = st.Update(func(s *State) {
			s.Position = pos
			s.CatchUp, s.Cutover = nil, nil
			s.Backfill = &BackfillState{Started: o.Now().UTC(), Total: src.ItemCount, Segments: make([]SegmentState, o.Segments), AllowUnmatched: o.AllowUnmatched}
		})
		if err != nil {
			return nil, err
		}
	}
	if st.Backfill.Export != nil {
		if err := finishExport(ctx, o, st); err != nil {
			return nil, err
		}
	}
	if o.Started != nil {
		o.Started(st, resuming)
	}
	var limiter *rate.Limiter
	if o.MaxWritesPerSecond > 0 {
		limiter = rate.NewLimiter(rate.Limit(o.MaxWritesPerSecond), max(25, o.MaxWritesPerSecond/10))
	}
	b := &backfiller{c: c, o: o, st: st, limiter: limiter, keyNames: o.Routes.SourceKey, start: time.Now(), jobs: make(chan writeJob)}
	b.doneAtStart = b.readSoFar()
	b.activeAtStart, b.runStart = st.Backfill.ActiveSeconds, start
	g, gctx := errgroup.WithContext(ctx)
	// One pool of writers for all segments (as a raw copy runs N writers):
	// a segment whose page is large, or the last segment still running,
	// gets every writer instead of its own few.
	var writers sync.WaitGroup
	readers := len(st.Backfill.Segments)
	if st.Backfill.Export != nil {
		readers = max(o.Export.Parallel, 1) // data files read at once
	}
	for range readers * o.Writers {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for j := range b.jobs {
				j.page.done(b.writeBatch(gctx, j))
			}
		}()
	}
	if st.Backfill.Export != nil {
		g.Go(func() error { return b.exportFiles(gctx) })
	}
	for seg := range st.Backfill.Segments {
		if st.Backfill.Segments[seg].Done {
			continue
		}
		g.Go(func() error { return b.segment(gctx, seg) })
	}
	err = g.Wait()
	b.feeding.Wait() // a segment that failed may leave a page's batches being handed over
	close(b.jobs)
	writers.Wait()
	if err != nil {
		return nil, err
	}
	if ex := st.Backfill.Export; ex != nil && ex.Import != nil {
		// Nothing is in a destination yet: items left behind refuse the
		// imports before any table is created (Preflight cannot read the
		// export's items before they are transformed).
		if err := backfillResult(st).leftBehind(o); err != nil {
			problems := append(strings.Split(err.Error(), "\n"), "no destination was created: run the same backfill again once the routes are fixed, or with the flag (the transformed files are kept)")
			return nil, &RefusedError{InputError: &InputError{problems}, Cause: err}
		}
		if err := b.importAll(ctx, src); err != nil {
			return nil, err
		}
	}
	now := o.Now().UTC()
	err = st.Update(func(s *State) {
		s.Backfill.Finished = &now
		s.Backfill.AllowUnmatched, s.Backfill.AllowUntransformable = o.AllowUnmatched, o.AllowUntransformable
		s.Backfill.ActiveSeconds = b.activeAtStart + now.Sub(start).Seconds()
	})
	if err != nil {
		return nil, err
	}
	res := backfillResult(st)
	res.Resumed = resuming
	res.ReadThisRun = res.Read - b.doneAtStart
	res.Seconds = now.Sub(start).Seconds()
	if res.Seconds > 0 {
		res.ItemsPerSec = float64(res.ReadThisRun) / res.Seconds
	}
	return res, res.leftBehind(o)
}

func backfillResult(st *State) *BackfillResult {
	res := &BackfillResult{Source: st.Source, State: st.Path(), Position: st.Position, Written: map[string]int64{},
		UnmatchedSample: []string{}, UntransformableSample: []string{}, ActiveSeconds: st.Backfill.ActiveSeconds}
	parts := st.Backfill.Segments
	if ex := st.Backfill.Export; ex != nil {
		res.Export = ex
		for _, f := range ex.Files {
			parts = append(parts[:len(parts):len(parts)], f)
		}
	}
	for _, s := range parts {
		res.Read += s.Read
		res.Unmatched += s.Unmatched
		res.Untransformable += s.Untransformable
		for t, n := range s.Written {
			res.Written[t] += n
			res.WrittenTotal += n
		}
		res.UnmatchedSample = appendSample(res.UnmatchedSample, s.Samples...)
		res.UntransformableSample = appendSample(res.UntransformableSample, s.UntransformableSamples...)
	}
	sort.Strings(res.UnmatchedSample)
	sort.Strings(res.UntransformableSample)
	if res.ActiveSeconds > 0 {
		res.OverallItemsPerSec = float64(res.Read) / res.ActiveSeconds
	}
	return res
}

// sampleSize is how many keys of each kind of left-behind item are kept.
const sampleSize = 10

func appendSample(sample []string, keys ...string) []string {
	for _, k := range keys {
		if len(sample) >= sampleSize {
			break
		}
		sample = append(sample, k)
	}
	return sample
}

type backfiller struct {
	c           Clients
	o           BackfillOptions
	st          *State
	limiter     *rate.Limiter
	keyNames    []string
	start       time.Time
	doneAtStart int64
	// activeAtStart is the time earlier runs spent (BackfillState.ActiveSeconds);
	// runStart is this run's start by o.Now.
	activeAtStart float64
	runStart      time.Time
	// inFlightRead counts the items of export files being read that are
	// not yet in the state (a file is checkpointed once written in full).
	inFlightRead atomic.Int64
	jobs         chan writeJob  // to the shared writers
	feeding      sync.WaitGroup // submit's senders: jobs closes after them
}

// writeJob is one BatchWriteItem's worth of a page (batchwrite.Split).
type writeJob struct {
	table string
	batch []types.WriteRequest
	page  *pageWrites
}

// pageWrites tracks the writes of one page: the checkpoint moves past the
// page only once all of them succeeded.
type pageWrites struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
}

func (pw *pageWrites) done(err error) {
	if err != nil {
		pw.mu.Lock()
		if pw.err == nil {
			pw.err = err
		}
		pw.mu.Unlock()
	}
	pw.wg.Done()
}

func (pw *pageWrites) wait() error {
	pw.wg.Wait()
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.err
}

func (b *backfiller) readSoFar() int64 {
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	var n int64
	for _, s := range b.st.Backfill.Segments {
		n += s.Read
	}
	if ex := b.st.Backfill.Export; ex != nil {
		for _, f := range ex.Files {
			n += f.Read
		}
	}
	return n + b.inFlightRead.Load()
}

func (b *backfiller) progress() {
	if b.o.Progress == nil {
		return
	}
	done := b.readSoFar()
	total := max(b.st.Backfill.Total, done)
	var eta time.Duration
	if el := time.Since(b.start); done > b.doneAtStart && total > done {
		perItem := el / time.Duration(done-b.doneAtStart)
		eta = perItem * time.Duration(total-done)
	}
	b.o.Progress(done, total, eta)
}

// page is one Scan page routed to its destinations.
type page struct {
	lastKey   map[string]types.AttributeValue
	read      int64
	batches   map[string][]types.WriteRequest
	unmatched []string
	// untransformable holds "KEY: why" of items their route cannot transform.
	untransformable []string
}

// segment scans one segment from its checkpoint. The writes of page k run
// while page k+1 is read; the checkpoint moves past page k only once all of
// its writes (and those before it) are done.
func (b *backfiller) segment(ctx context.Context, seg int) error {
	total := len(b.st.Backfill.Segments)
	table := b.o.Source
	in := &dynamodb.ScanInput{TableName: &table, Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(total)),
		ConsistentRead: aws.Bool(true)}
	if b.o.PageLimit > 0 {
		in.Limit = aws.Int32(b.o.PageLimit)
	}
	b.st.mu.Lock()
	last := b.st.Backfill.Segments[seg].LastKey
	b.st.mu.Unlock()
	if last != "" {
		k, err := tablediff.DecodeKey([]byte(last))
		if err != nil {
			return fmt.Errorf("segment %d checkpoint: %w", seg, err)
		}
		in.ExclusiveStartKey = k
	}
	var inflight *pageWrites
	var prev *page
	wait := func() error {
		if inflight == nil {
			return nil
		}
		if err := inflight.wait(); err != nil {
			return err
		}
		return b.checkpoint(seg, prev)
	}
	for {
		out, err := b.c.DB.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("scanning %s segment %d/%d: %w", table, seg, total, err)
		}
		p, err := b.route(out)
		if err != nil {
			return err
		}
		if err := wait(); err != nil {
			return err
		}
		inflight, prev = b.submit(ctx, p), p
		if len(out.LastEvaluatedKey) == 0 {
			return wait()
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func (b *backfiller) route(out *dynamodb.ScanOutput) (*page, error) {
	p := &page{lastKey: out.LastEvaluatedKey, read: int64(len(out.Items)), batches: map[string][]types.WriteRequest{}}
	for _, item := range out.Items {
		rt := b.o.Routes.Find(item)
		if rt == nil {
			k, err := tablediff.EncodeKey(item, b.keyNames)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", b.o.Source, err)
			}
			p.unmatched = append(p.unmatched, string(k))
			continue
		}
		dst, err := rt.Transform(item)
		if err != nil {
			k, _ := tablediff.EncodeKey(item, b.keyNames)
			p.untransformable = append(p.untransformable, fmt.Sprintf("%s: %v", k, err))
			continue
		}
		p.batches[rt.Table] = append(p.batches[rt.Table], types.WriteRequest{PutRequest: &types.PutRequest{Item: dst}})
	}
	if b.o.LeftBehind != nil {
		for _, k := range p.unmatched {
			b.o.LeftBehind(LeftUnmatched, k)
		}
		for _, k := range p.untransformable {
			b.o.LeftBehind(LeftUntransformable, k)
		}
	}
	return p, nil
}

// Kinds of items a backfill leaves behind (BackfillOptions.LeftBehind).
const (
	LeftUnmatched       = "unmatched"
	LeftUntransformable = "untransformable"
)

// submit hands a page's items to the shared writers in batches sized by
// their encoded request (batchwrite.Split: 25 requests, 16 MB) and returns
// at once, so the segment reads its next page meanwhile; pageWrites.wait
// says when they are all written.
func (b *backfiller) submit(ctx context.Context, p *page) *pageWrites {
	var jobs []writeJob
	pw := &pageWrites{}
	for table, reqs := range p.batches {
		for _, batch := range batchwrite.Split(table, reqs, batchwrite.DefaultLimits()) {
			jobs = append(jobs, writeJob{table: table, batch: batch, page: pw})
		}
	}
	pw.wg.Add(len(jobs))
	b.feeding.Add(1)
	go func() {
		defer b.feeding.Done()
		for i, j := range jobs {
			select {
			case b.jobs <- j:
			case <-ctx.Done():
				for range jobs[i:] {
					pw.done(ctx.Err())
				}
				return
			}
		}
	}()
	return pw
}

// writeBatch writes one batch within the rate limit, retrying unprocessed
// items with backoff and halving a batch refused as too large (batchwrite).
func (b *backfiller) writeBatch(ctx context.Context, j writeJob) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.limiter != nil {
		if err := b.limiter.WaitN(ctx, len(j.batch)); err != nil {
			return err
		}
	}
	return batchwrite.WriteBatch(ctx, b.c.DB, j.table, j.batch, b.o.Backoff)
}

func (b *backfiller) checkpoint(seg int, p *page) error {
	var last string
	if len(p.lastKey) > 0 {
		k, err := tablediff.EncodeKey(p.lastKey, b.keyNames)
		if err != nil {
			return fmt.Errorf("segment %d: %w", seg, err)
		}
		last = string(k)
	}
	err := b.st.Update(func(s *State) {
		ss := &s.Backfill.Segments[seg]
		ss.Read += p.read
		if ss.Written == nil {
			ss.Written = map[string]int64{}
		}
		for t, reqs := range p.batches {
			ss.Written[t] += int64(len(reqs))
		}
		ss.Unmatched += int64(len(p.unmatched))
		ss.Samples = appendSample(ss.Samples, p.unmatched...)
		ss.Untransformable += int64(len(p.untransformable))
		ss.UntransformableSamples = appendSample(ss.UntransformableSamples, p.untransformable...)
		s.Backfill.ActiveSeconds = b.activeAtStart + b.o.Now().Sub(b.runStart).Seconds()
		ss.LastKey = last
		ss.Done = last == ""
	})
	if err != nil {
		return err
	}
	b.progress()
	return nil
}

// recordPosition lists the stream's shards now: the catch-up reads them (and
// their children) from this moment on.
func recordPosition(ctx context.Context, s Streams, streamARN string, now time.Time) (*Position, error) {
	shards, err := listShards(ctx, s, streamARN)
	if err != nil {
		return nil, err
	}
	pos := &Position{StreamARN: streamARN, Time: now.UTC()}
	for _, sh := range shards {
		pos.Shards = append(pos.Shards, aws.ToString(sh.ShardId))
	}
	return pos, nil
}

func listShards(ctx context.Context, s Streams, streamARN string) ([]shardInfo, error) {
	var out []shardInfo
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: &streamARN}
	for {
		d, err := s.DescribeStream(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("describing stream %s: %w", streamARN, err)
		}
		for _, sh := range d.StreamDescription.Shards {
			out = append(out, shardInfo{ShardId: sh.ShardId, Parent: aws.ToString(sh.ParentShardId)})
		}
		if d.StreamDescription.LastEvaluatedShardId == nil {
			return out, nil
		}
		in.ExclusiveStartShardId = d.StreamDescription.LastEvaluatedShardId
	}
}

type shardInfo struct {
	ShardId *string
	Parent  string
}
