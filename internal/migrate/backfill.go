package migrate

import (
	"context"
	"fmt"
	"sort"
	"sync"
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
	// Restart starts a new backfill (new stream position) over an existing state.
	Restart bool
	// PageLimit caps the items per Scan page (0: DynamoDB's 1 MB pages).
	PageLimit int32
	Backoff   repair.Backoff
	Now       func() time.Time
	// Progress, when set, is called after each page with the items read so far,
	// the total estimate and the estimated time left (0 when unknown).
	Progress func(done, total int64, eta time.Duration)
	// Started, when set, is called before the first read: once a new
	// backfill's position is recorded, or when a backfill resumes.
	Started func(st *State, resumed bool)
}

// BackfillResult is what a backfill did (read back from its checkpoint).
type BackfillResult struct {
	Source          string           `json:"source"`
	State           string           `json:"state"`
	Resumed         bool             `json:"resumed"`
	AlreadyDone     bool             `json:"already_done"`
	Position        *Position        `json:"position"`
	Read            int64            `json:"items_read"`
	Written         map[string]int64 `json:"written"`
	WrittenTotal    int64            `json:"written_total"`
	Unmatched       int64            `json:"unmatched"`
	UnmatchedSample []string         `json:"unmatched_sample"`
	Seconds         float64          `json:"seconds"`
	ItemsPerSec     float64          `json:"items_per_second"`
}

// UnmatchedError is returned when items no rule matches were found without AllowUnmatched.
type UnmatchedError struct {
	Count  int64
	Sample []string
}

func (e *UnmatchedError) Error() string {
	return fmt.Sprintf("%d item(s) match no route (e.g. %v): add rules for them, or pass --allow-unmatched to leave them behind", e.Count, e.Sample)
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
		if res.Unmatched > 0 && !o.AllowUnmatched {
			return res, &UnmatchedError{Count: res.Unmatched, Sample: res.UnmatchedSample}
		}
		return res, nil
	}
	if o.Restart && st.CatchUp != nil && st.Cutover != nil && st.Cutover.CutAt != nil && st.Cutover.RolledBackAt == nil {
		return nil, &InputError{[]string{fmt.Sprintf("%s has been cut over (%s): roll back before a new backfill", o.Source, st.Cutover.CutAt.Format(time.RFC3339))}}
	}
	checks, err := CheckDestinations(ctx, c.DB, src, o.Routes, !resuming, false)
	if err != nil {
		return nil, err
	}
	if p := Problems(checks); len(p) > 0 {
		return nil, &InputError{p}
	}
	if !resuming {
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
	if o.Started != nil {
		o.Started(st, resuming)
	}
	var limiter *rate.Limiter
	if o.MaxWritesPerSecond > 0 {
		limiter = rate.NewLimiter(rate.Limit(o.MaxWritesPerSecond), max(25, o.MaxWritesPerSecond/10))
	}
	b := &backfiller{c: c, o: o, st: st, limiter: limiter, keyNames: o.Routes.SourceKey, start: time.Now(), jobs: make(chan writeJob)}
	b.doneAtStart = b.readSoFar()
	g, gctx := errgroup.WithContext(ctx)
	// One pool of writers for all segments (as a raw copy runs N writers):
	// a segment whose page is large, or the last segment still running,
	// gets every writer instead of its own few.
	var writers sync.WaitGroup
	for range len(st.Backfill.Segments) * o.Writers {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for j := range b.jobs {
				j.page.done(b.writeBatch(gctx, j))
			}
		}()
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
	now := o.Now().UTC()
	if err := st.Update(func(s *State) { s.Backfill.Finished, s.Backfill.AllowUnmatched = &now, o.AllowUnmatched }); err != nil {
		return nil, err
	}
	res := backfillResult(st)
	res.Resumed = resuming
	res.Seconds = o.Now().Sub(start).Seconds()
	if res.Seconds > 0 {
		res.ItemsPerSec = float64(res.Read) / res.Seconds
	}
	if res.Unmatched > 0 && !o.AllowUnmatched {
		return res, &UnmatchedError{Count: res.Unmatched, Sample: res.UnmatchedSample}
	}
	return res, nil
}

func backfillResult(st *State) *BackfillResult {
	res := &BackfillResult{Source: st.Source, State: st.Path(), Position: st.Position, Written: map[string]int64{}, UnmatchedSample: []string{}}
	for _, s := range st.Backfill.Segments {
		res.Read += s.Read
		res.Unmatched += s.Unmatched
		for t, n := range s.Written {
			res.Written[t] += n
			res.WrittenTotal += n
		}
		for _, k := range s.Samples {
			if len(res.UnmatchedSample) < 10 {
				res.UnmatchedSample = append(res.UnmatchedSample, k)
			}
		}
	}
	sort.Strings(res.UnmatchedSample)
	return res
}

type backfiller struct {
	c           Clients
	o           BackfillOptions
	st          *State
	limiter     *rate.Limiter
	keyNames    []string
	start       time.Time
	doneAtStart int64
	jobs        chan writeJob  // to the shared writers
	feeding     sync.WaitGroup // submit's senders: jobs closes after them
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
	return n
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
			return nil, fmt.Errorf("item %s: %w", k, err)
		}
		p.batches[rt.Table] = append(p.batches[rt.Table], types.WriteRequest{PutRequest: &types.PutRequest{Item: dst}})
	}
	return p, nil
}

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
		for _, k := range p.unmatched {
			if len(ss.Samples) < 10 {
				ss.Samples = append(ss.Samples, k)
			}
		}
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
