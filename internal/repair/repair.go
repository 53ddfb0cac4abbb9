// Package repair copies items from a restored table back to the original,
// for the keys a diff found different (internal/tablediff's keys file).
//
// By default every item is written on its own with a condition that the
// original is still as the diff saw it: the current item's checksum must
// match the one in the keys file, and the PutItem (or DeleteItem) carries a
// condition on the item's full current image (attribute_not_exists of the
// key when it was absent), so a write the application makes in between is
// never overwritten: it is reported as a conflict instead (DDB-API-01/02).
// With Unconditional, items are read with BatchGetItem (100 keys per call)
// and written with BatchWriteItem (batchwrite: 25 requests and 16 MB per
// call, retrying UnprocessedItems with backoff, DDB-API-02), reads and writes
// in two pipelined stages of Workers each: much faster, and safe only while
// writes to the original are stopped. Items only in the original are deleted only with DeleteExtra.
package repair

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/batchwrite"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/tablediff"
)

// DynamoDB is the part of the API a repair uses.
type DynamoDB interface {
	tablediff.Describer
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// ErrKeysFile marks a keys file that cannot be read or does not fit the repair asked for.
var ErrKeysFile = errors.New("bad keys file")

// Options of a repair.
type Options struct {
	From string // the restored table: the items to copy
	To   string // the original table: where they go
	// KeysFile is a keys file from `dynops table diff --source From --target To --keys-out`.
	KeysFile string
	// KeysTarget, when set, is a full export of To (checked and vouched for
	// by the caller) that the keys file may be a diff against instead of
	// To itself: `table diff --source-export From --target-export KeysTarget`.
	KeysTarget string
	// DeleteExtra deletes items only in To; without it they are kept and counted.
	DeleteExtra bool
	// Unconditional writes with BatchWriteItem and no conditions.
	Unconditional bool
	// Workers is the number of parallel writers (default 8).
	Workers int
	// Backoff for unprocessed batch items (default DefaultBackoff()).
	Backoff Backoff
	// Progress, when set, is called with the number of keys handled so far.
	Progress func(done int64)
	// FromExport, when set, is where the items come from instead of the
	// restored table: a full export (From is then its URI, as in the keys
	// file). The export is streamed once; the keys to copy are held in
	// memory meanwhile (~100 bytes each).
	FromExport *exportverify.Export
	// ExportParallel is how many export files are read at once (default 4).
	ExportParallel int
	// WriteBudget holds the writes to To to --max-write-units (nil: no budget).
	WriteBudget *capacity.Bucket
	// Scope limits the repair to the keys written in the damage window
	// (nil: every difference, which needs Unscoped).
	Scope *Scope
	// Unscoped is why every difference is repaired without a scope (the
	// explicit decision; recorded in the plan and the audit).
	Unscoped string
	// RecordFile, when set, gets every key's outcome (JSON lines) for
	// `dynops pitr verify`.
	RecordFile string
	// Shard, when it has a Count above 1, limits the repair to the keys of
	// that shard (tablediff.KeyShard): N shards of a keys file repair what
	// one repair of it does.
	Shard engine.Shard
	// VersionAttribute is To's version attribute (--version-attribute): the
	// writes are conditional on it and increment it (Lock). "": none.
	VersionAttribute string
	// DryRun reads every key as the conditional repair does and writes
	// nothing (for Planned); no record is written.
	DryRun bool
	// Planned, when set, is told each key the repair writes (or, in a dry
	// run, would write): the item of To read before and the item the write
	// leaves (nil: deleted). Called from the workers at once.
	Planned func(keys, before, after map[string]types.AttributeValue)
}

// Plan is what a repair would do, read from the keys file alone.
type Plan struct {
	From        string    `json:"from"`
	To          string    `json:"to"`
	KeysFile    string    `json:"keys_file"`
	DiffTime    time.Time `json:"diff_time"`
	Mode        string    `json:"mode"`    // conditional or batch
	Missing     int64     `json:"missing"` // only in From: to copy back
	Changed     int64     `json:"changed"` // in both, different: to copy back
	Extra       int64     `json:"extra"`   // only in To
	DeleteExtra bool      `json:"delete_extra"`
	// Shard is the part of the keys this repair takes (--shard I/N), "" for all.
	Shard string `json:"shard,omitempty"`
	// Scope is the damage window and where its keys come from (nil: unscoped).
	Scope    *Scope `json:"scope,omitempty"`
	Unscoped string `json:"unscoped_reason,omitempty"`
	// Copy is how many missing and changed keys the repair copies back,
	// Delete how many extra keys it deletes (--delete-extra, in scope).
	Copy   int64 `json:"copy"`
	Delete int64 `json:"delete"`
	// OutOfScope are differing keys not written in the damage window: good
	// writes since the restore point, left alone. WrittenAfter are keys
	// written in the window and again after it: conflicts, left alone.
	OutOfScope   int64 `json:"out_of_scope"`
	WrittenAfter int64 `json:"written_after_window"`
	// MayBeGoodWrites are the keys to copy back that may be good writes
	// made after the restore point: every one when unscoped.
	MayBeGoodWrites int64 `json:"may_be_good_writes"`
}

// Copies is the number of items the plan copies back.
func (p *Plan) Copies() int64 { return p.Copy }

// ErrUnscoped is a repair that would copy back differences without a
// scope and without an explicit decision to.
var ErrUnscoped = errors.New("the repair is not scoped to the damage window")

// CheckScoped refuses a plan that copies back keys that may be good writes
// (no scope) unless Unscoped gives the decision: a restore point cannot
// tell the damage from the application's later writes.
func (p *Plan) CheckScoped() error {
	if p.Scope != nil || p.Unscoped != "" || p.Copy == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d changed and %d missing item(s) differ from the restore point, and any of them may be a good write made after it (a restore point cannot tell them from the damage), so copying them back could revert good writes; "+
		"scope the repair to the keys written in the damage window with --damage-until TIME and --damage-stream (the table's stream) or --damage-keys FILE, "+
		"or decide to copy back every difference with --unscoped REASON (recorded in the audit); nothing was changed", ErrUnscoped, p.Changed, p.Missing)
}

// Result is what a repair did.
type Result struct {
	Plan
	Copied         int64 `json:"copied"`
	Deleted        int64 `json:"deleted"`
	AlreadyEqual   int64 `json:"already_equal"`
	GoneFromSource int64 `json:"gone_from_source"`
	KeptExtra      int64 `json:"kept_extra"`
	LeftOutOfScope int64 `json:"left_out_of_scope"`
	Conflicts      int64 `json:"conflicts"`
	// ChangedSinceRead are keys written (counted in Copied or Deleted) whose
	// item another writer changed between the repair's read and its write:
	// the write replaced those changes (Lock). Each is in ConflictSample and
	// the record with the attributes it replaced.
	ChangedSinceRead int64      `json:"changed_since_read"`
	ConflictSample   []Conflict `json:"conflict_sample"`
	Seconds          float64    `json:"seconds"`
	ItemsPerSec      float64    `json:"items_per_second"`
	// WriteCapacity is the budget and what the writes used (as the
	// responses reported), when the run had a budget.
	WriteCapacity *capacity.Usage `json:"write_capacity,omitempty"`
}

// Conflict is a key left alone because an item changed since the diff.
type Conflict struct {
	Key    json.RawMessage `json:"key"`
	Reason string          `json:"reason"`
	// ChangedSinceRead are the attributes a write replaced that another
	// writer had changed since the read (the key was written).
	ChangedSinceRead []string `json:"changed_since_read,omitempty"`
}

const conflictSampleSize = 100

// MakePlan reads the keys file and says what a repair would do; it makes no AWS call.
func MakePlan(opts Options) (*Plan, error) {
	p, _, err := readPlan(opts)
	return p, err
}

func readPlan(opts Options) (*Plan, tablediff.Header, error) {
	p := &Plan{From: opts.From, To: opts.To, KeysFile: opts.KeysFile, Mode: "conditional", DeleteExtra: opts.DeleteExtra,
		Scope: opts.Scope, Unscoped: opts.Unscoped}
	if opts.Unconditional {
		p.Mode = "batch"
	}
	if opts.Shard.Count > 1 {
		p.Shard = opts.Shard.String()
	}
	h, err := tablediff.ReadKeys(opts.KeysFile, tablediff.OfShard(opts.Shard, func(r tablediff.KeyRecord) error {
		v := verdict(opts.Scope, r)
		switch r.Kind {
		case tablediff.OnlyInSource:
			p.Missing++
		case tablediff.Changed:
			p.Changed++
		case tablediff.OnlyInTarget:
			p.Extra++
			if opts.DeleteExtra && v == InScope {
				p.Delete++
			}
			return nil
		}
		switch v {
		case InScope:
			p.Copy++
		case AfterWindow:
			p.WrittenAfter++
		case OutOfScope:
			p.OutOfScope++
		}
		return nil
	}))
	if err != nil {
		return nil, h, fmt.Errorf("%w: %w", ErrKeysFile, err)
	}
	if h.Source != opts.From || (h.Target != opts.To && (opts.KeysTarget == "" || h.Target != opts.KeysTarget)) {
		return nil, h, fmt.Errorf("%w: %s is a diff of --source %s --target %s, not of %s -> %s; run `dynops table diff --source %s --target %s --keys-out FILE`",
			ErrKeysFile, opts.KeysFile, h.Source, h.Target, opts.From, opts.To, opts.From, opts.To)
	}
	p.DiffTime = h.Time
	if opts.Scope == nil {
		p.MayBeGoodWrites = p.Copy
	} else {
		p.MayBeGoodWrites = int64(opts.Scope.Undated)
	}
	return p, h, nil
}

// verdict is the scope's verdict on a record (InScope without a scope).
func verdict(s *Scope, r tablediff.KeyRecord) Verdict {
	if s == nil {
		return InScope
	}
	return s.Of(r.Key)
}

// Run repairs opts.To from opts.From.
func Run(ctx context.Context, db DynamoDB, opts Options) (*Result, error) {
	start := time.Now()
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.Backoff.Attempts <= 0 {
		opts.Backoff = DefaultBackoff()
	}
	if opts.ExportParallel <= 0 {
		opts.ExportParallel = 4
	}
	// A first pass checks the whole file and counts before anything is touched.
	plan, header, err := readPlan(opts)
	if err != nil {
		return nil, err
	}
	var keyNames []string
	if opts.FromExport != nil {
		keyNames, err = tableKey(ctx, db, opts.To)
	} else {
		keyNames, _, err = tablediff.SameKey(ctx, db, opts.From, opts.To)
	}
	if err != nil {
		return nil, err
	}
	if !slices.Equal(keyNames, header.KeyNames) {
		return nil, fmt.Errorf("%w: %s has key %v, the tables have %v", ErrKeysFile, opts.KeysFile, header.KeyNames, keyNames)
	}
	r := &runner{db: withBudget(db, opts.To, opts.WriteBudget), opts: opts, keyNames: keyNames, attrs: header.Attributes,
		lock: Lock{KeyNames: keyNames, Version: opts.VersionAttribute}, res: &Result{Plan: *plan, ConflictSample: []Conflict{}}}
	if opts.DryRun {
		r.opts.Unconditional, r.opts.RecordFile = false, "" // every key read, one by one; nothing written
	}
	if r.opts.RecordFile != "" {
		r.record, err = createRecord(opts.RecordFile, RecordHeader{From: opts.From, To: opts.To, KeysFile: opts.KeysFile,
			KeyNames: keyNames, Attributes: header.Attributes, Time: time.Now().UTC(), Scope: opts.Scope, Unscoped: opts.Unscoped, DeleteExtra: opts.DeleteExtra})
		if err != nil {
			return nil, err
		}
	}

	// Second pass: stream the keys to the workers, one key (conditional) or
	// up to 100 keys of one kind (batch: one BatchGetItem) per unit of work.
	per := 1
	switch {
	case r.opts.Unconditional && opts.FromExport != nil:
		per = maxBatchWrite // nothing to read: one BatchWriteItem per unit
	case r.opts.Unconditional:
		per = maxBatchGet // one BatchGetItem, then BatchWriteItems of 25
	}
	g, gctx := errgroup.WithContext(ctx)
	work := make(chan unit, opts.Workers)
	g.Go(func() error {
		defer close(work)
		if opts.FromExport != nil {
			return r.feedFromExport(gctx, per, work)
		}
		return feed(gctx, opts.KeysFile, opts.Shard, per, work, nil, func(rec tablediff.KeyRecord) (bool, error) { return r.leaveAlone(gctx, rec) })
	})
	if r.opts.Unconditional {
		r.pipeline(gctx, g, work)
	} else {
		for range opts.Workers {
			g.Go(func() error {
				for u := range work {
					var img map[string]types.AttributeValue
					if u.images != nil {
						img = u.images[0]
					}
					if err := r.one(gctx, u.recs[0], img); err != nil {
						return err
					}
					r.handled(int64(len(u.recs)))
				}
				return nil
			})
		}
	}
	err = g.Wait()
	if cerr := r.record.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	res := r.result()
	res.Seconds = time.Since(start).Seconds()
	if res.Seconds > 0 {
		res.ItemsPerSec = float64(res.Copied+res.Deleted) / res.Seconds
	}
	if opts.WriteBudget != nil {
		u := opts.WriteBudget.Usage()
		res.WriteCapacity = &u
	}
	return res, nil
}

// unit is one piece of work: one key (conditional) or up to 25 keys of one
// kind (batch), with the source images when they come from an export.
type unit struct {
	recs   []tablediff.KeyRecord
	images []map[string]types.AttributeValue // nil: read them from the restored table
}

// queue groups records into units of per and sends them.
type queue struct {
	ctx  context.Context
	per  int
	work chan<- unit
	u    unit
}

func (q *queue) add(rec tablediff.KeyRecord, image map[string]types.AttributeValue) error {
	q.u.recs = append(q.u.recs, rec)
	if image != nil {
		q.u.images = append(q.u.images, image)
	}
	if len(q.u.recs) >= q.per {
		return q.flush()
	}
	return nil
}

func (q *queue) flush() error {
	if len(q.u.recs) == 0 {
		return nil
	}
	select {
	case q.work <- q.u:
		q.u = unit{}
		return nil
	case <-q.ctx.Done():
		return q.ctx.Err()
	}
}

// feed streams the keys file to the workers: copies and deletes in separate
// units. With keep set, copies go to keep instead (the export path). Keys
// skip takes (settled without a write: out of the repair's scope) go nowhere.
func feed(ctx context.Context, keysFile string, sh engine.Shard, per int, work chan<- unit, keep func(tablediff.KeyRecord), skip func(tablediff.KeyRecord) (bool, error)) error {
	puts, dels := &queue{ctx: ctx, per: per, work: work}, &queue{ctx: ctx, per: per, work: work}
	_, err := tablediff.ReadKeys(keysFile, tablediff.OfShard(sh, func(rec tablediff.KeyRecord) error {
		if skip != nil {
			if done, err := skip(rec); err != nil || done {
				return err
			}
		}
		if rec.Kind == tablediff.OnlyInTarget {
			return dels.add(rec, nil)
		}
		if keep != nil {
			keep(rec)
			return nil
		}
		return puts.add(rec, nil)
	}))
	if err != nil {
		return err
	}
	if err := puts.flush(); err != nil {
		return err
	}
	return dels.flush()
}

// feedFromExport sends the deletes from the keys file, then streams the
// export and sends each item whose key is to be copied, with its image.
// Keys the export does not hold are counted as gone from the source.
func (r *runner) feedFromExport(ctx context.Context, per int, work chan<- unit) error {
	want := map[string]tablediff.KeyRecord{}
	skip := func(rec tablediff.KeyRecord) (bool, error) { return r.leaveAlone(ctx, rec) }
	if err := feed(ctx, r.opts.KeysFile, r.opts.Shard, per, work, func(rec tablediff.KeyRecord) { want[string(rec.Key)] = rec }, skip); err != nil {
		return err
	}
	var mu sync.Mutex
	puts := &queue{ctx: ctx, per: per, work: work}
	_, err := r.opts.FromExport.EachItem(ctx, r.opts.ExportParallel, func(item map[string]types.AttributeValue) error {
		key, err := tablediff.EncodeKey(item, r.keyNames)
		if err != nil {
			return fmt.Errorf("%s: %w", r.opts.FromExport.URI, err)
		}
		mu.Lock()
		defer mu.Unlock()
		rec, ok := want[string(key)]
		if !ok {
			return nil
		}
		delete(want, string(key))
		return puts.add(rec, item)
	})
	if err != nil {
		return err
	}
	r.gone.Add(int64(len(want)))
	for _, rec := range want {
		r.note(rec, OutGone, "")
	}
	return puts.flush()
}

// tableKey returns a table's key attribute names, hash first.
func tableKey(ctx context.Context, db tablediff.Describer, table string) ([]string, error) {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return nil, fmt.Errorf("describing %s: %w", table, err)
	}
	var names []string
	for _, k := range out.Table.KeySchema {
		names = append(names, aws.ToString(k.AttributeName))
	}
	return names, nil
}

// runner holds the state of one repair; its counters are shared by the workers.
type runner struct {
	db       DynamoDB
	opts     Options
	keyNames []string
	attrs    []string // the attributes the diff compared (checksums cover only these)
	lock     Lock     // the condition of each write over the item read
	done     atomic.Int64

	copied, deleted, equal, gone, kept, outOfScope, changed atomic.Int64
	mu                                                      sync.Mutex
	conflicts                                               int64
	res                                                     *Result
	record                                                  *recordWriter // nil: no --record
}

func (r *runner) conflict(rec tablediff.KeyRecord, reason string) {
	r.note(rec, OutConflict, reason)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conflicts++
	if len(r.res.ConflictSample) < conflictSampleSize {
		r.res.ConflictSample = append(r.res.ConflictSample, Conflict{Key: rec.Key, Reason: reason})
	}
}

// changedSinceRead reports a key written over a change another writer made
// between the read and the write (the attributes replaced, from ALL_OLD):
// a conflict in the sample and the record, the write counted as done.
func (r *runner) changedSinceRead(rec tablediff.KeyRecord, o Outcome, written string, attrs []string) {
	reason := fmt.Sprintf("written, but another writer changed %s between the repair's read and its write: the write replaced %s (read the item and decide)", r.opts.To, strings.Join(attrs, ", "))
	r.changed.Add(1)
	r.record.add(KeyOutcome{Key: rec.Key, Kind: rec.Kind, Outcome: o, Reason: reason, SourceSum: rec.SourceSum, TargetSum: rec.TargetSum, WrittenSum: written, ChangedSinceRead: attrs})
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.res.ConflictSample) < conflictSampleSize {
		r.res.ConflictSample = append(r.res.ConflictSample, Conflict{Key: rec.Key, Reason: reason, ChangedSinceRead: attrs})
	}
}

// note writes a key's outcome to the record (when there is one).
func (r *runner) note(rec tablediff.KeyRecord, o Outcome, reason string) {
	r.record.add(KeyOutcome{Key: rec.Key, Kind: rec.Kind, Outcome: o, Reason: reason, SourceSum: rec.SourceSum, TargetSum: rec.TargetSum})
}

// afterWindow is the reason of a key written in the damage window and after it.
func (r *runner) afterWindow() string {
	return "written after the damage window (after " + r.opts.Scope.Until.UTC().Format(time.RFC3339) + ", " + r.opts.Scope.Source + "): left alone, a later write would be lost"
}

// leaveAlone settles, before the workers, the keys the scope leaves alone:
// extras kept, keys out of scope, and (in batch mode, whose workers read
// nothing of the original) keys written after the window: already equal
// when the original holds the restored value (a re-run sees its own
// writes after the window), else a conflict. It reports whether rec was
// settled.
func (r *runner) leaveAlone(ctx context.Context, rec tablediff.KeyRecord) (bool, error) {
	v := verdict(r.opts.Scope, rec)
	switch {
	case rec.Kind == tablediff.OnlyInTarget && (!r.opts.DeleteExtra || v != InScope):
		r.kept.Add(1)
		r.note(rec, OutKeptExtra, "")
	case v == OutOfScope:
		r.outOfScope.Add(1)
		r.note(rec, OutOutOfScope, "not written in the damage window: a good write, left alone")
	case v == AfterWindow && r.opts.Unconditional:
		key, err := tablediff.DecodeKey(rec.Key)
		if err != nil {
			return false, err
		}
		cur, err := r.get(ctx, r.opts.To, key)
		if err != nil {
			return false, err
		}
		if cur != nil && r.sum(cur) == rec.SourceSum {
			r.equal.Add(1)
			r.note(rec, OutEqual, "")
		} else {
			r.conflict(rec, r.afterWindow())
		}
	default:
		return false, nil
	}
	r.handled(1)
	return true, nil
}

func (r *runner) result() *Result {
	res := r.res
	res.Copied, res.Deleted, res.AlreadyEqual = r.copied.Load(), r.deleted.Load(), r.equal.Load()
	res.GoneFromSource, res.KeptExtra, res.Conflicts = r.gone.Load(), r.kept.Load(), r.conflicts
	res.LeftOutOfScope, res.ChangedSinceRead = r.outOfScope.Load(), r.changed.Load()
	sort.Slice(res.ConflictSample, func(i, j int) bool {
		return string(res.ConflictSample[i].Key) < string(res.ConflictSample[j].Key)
	})
	return res
}

// get reads one item with a consistent read (a write-then-read, DDB-API-05); nil when absent.
func (r *runner) get(ctx context.Context, table string, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := r.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("reading an item of %s: %w", table, err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	return out.Item, nil
}

func (r *runner) sum(item map[string]types.AttributeValue) string {
	if item == nil {
		return ""
	}
	return tablediff.Checksum(item, r.attrs)
}

// one repairs one key with a conditional write.
func (r *runner) one(ctx context.Context, rec tablediff.KeyRecord, image map[string]types.AttributeValue) error {
	key, err := tablediff.DecodeKey(rec.Key)
	if err != nil {
		return err
	}
	src := image
	if src == nil && r.opts.FromExport == nil {
		if src, err = r.get(ctx, r.opts.From, key); err != nil {
			return err
		}
	}
	if r.sum(src) != rec.SourceSum {
		if src == nil {
			r.gone.Add(1)
			r.note(rec, OutGone, "")
			return nil
		}
		r.conflict(rec, "changed in "+r.opts.From+" since the diff")
		return nil
	}
	cur, err := r.get(ctx, r.opts.To, key)
	if err != nil {
		return err
	}
	if cur == nil && rec.Kind == tablediff.OnlyInTarget {
		r.equal.Add(1) // already deleted
		r.note(rec, OutEqual, "")
		return nil
	}
	if rec.Kind != tablediff.OnlyInTarget && cur != nil && r.lock.Same(cur, src) {
		r.equal.Add(1) // already repaired (e.g. a second run: its own writes are after the window)
		r.note(rec, OutEqual, "")
		return nil
	}
	if verdict(r.opts.Scope, rec) == AfterWindow {
		r.conflict(rec, r.afterWindow())
		return nil
	}
	if r.sum(cur) != rec.TargetSum {
		r.conflict(rec, "changed in "+r.opts.To+" since the diff")
		return nil
	}
	var after map[string]types.AttributeValue // nil: deleted
	if rec.Kind != tablediff.OnlyInTarget {
		if after, err = r.lock.Next(src, cur); err != nil {
			r.conflict(rec, err.Error())
			return nil
		}
	}
	if r.opts.DryRun {
		r.planned(key, cur, after)
		return nil
	}
	return r.write(ctx, rec, key, cur, after)
}

// planned tells opts.Planned (when set) what a write does to a key.
func (r *runner) planned(key, before, after map[string]types.AttributeValue) {
	if r.opts.Planned != nil {
		r.opts.Planned(key, before, after)
	}
}

// write puts after (or deletes the key when after is nil) on the condition
// that the item is still cur, asking for the item it replaced: changes
// another writer made since the read are reported (Lock).
func (r *runner) write(ctx context.Context, rec tablediff.KeyRecord, key, cur, after map[string]types.AttributeValue) error {
	old, err := r.lock.Write(ctx, r.db, r.opts.To, key, cur, after)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.Is(err, ErrUnlockable):
		r.conflict(rec, err.Error())
		return nil
	case errors.As(err, &ccf) && r.lock.WrittenMeanwhile(ctx, r.db, r.opts.To, key, after):
		r.equal.Add(1) // a duplicate of this repair (or shard) wrote it first
		r.note(rec, OutEqual, "")
		return nil
	case errors.As(err, &ccf) && after == nil:
		r.conflict(rec, "changed in "+r.opts.To+" while deleting")
		return nil
	case errors.As(err, &ccf):
		r.conflict(rec, "changed in "+r.opts.To+" while writing")
		return nil
	case err != nil:
		return err
	case after == nil:
		r.deleted.Add(1)
	default:
		r.copied.Add(1)
	}
	r.planned(key, cur, after)
	o := OutCopied
	if after == nil {
		o = OutDeleted
	}
	if changed := ChangedSinceRead(cur, old); len(changed) > 0 {
		r.changedSinceRead(rec, o, r.writtenSum(after), changed)
		return nil
	}
	r.record.add(KeyOutcome{Key: rec.Key, Kind: rec.Kind, Outcome: o, SourceSum: rec.SourceSum, TargetSum: rec.TargetSum, WrittenSum: r.writtenSum(after)})
	return nil
}

// writtenSum is the checksum of what a versioned write put ("" otherwise):
// the version it carries is not the restored one, so `pitr verify` checks
// the key against this.
func (r *runner) writtenSum(after map[string]types.AttributeValue) string {
	if r.lock.Version == "" || after == nil {
		return ""
	}
	return r.sum(after)
}

// handled adds n keys to those done and reports progress.
func (r *runner) handled(n int64) {
	done := r.done.Add(n)
	if r.opts.Progress != nil {
		r.opts.Progress(done)
	}
}

// batch is one BatchWriteItem's worth of requests (batchwrite.Split: at most
// 25 requests and 16 MB encoded) and the counter its items add to.
type batch struct {
	reqs []types.WriteRequest
	done *atomic.Int64
}

// pipeline runs the unconditional repair in two stages, like a raw copy:
// Workers readers turn units into batches (a BatchGetItem of up to 100 keys
// from the restored table, or the export's images, or deletes), and Workers
// writers send the batches with BatchWriteItem, so the writes of one unit
// run in parallel with each other and with the next units' reads. Each batch
// is sized by its encoded request and split in halves when refused as too
// large; unprocessed items are retried with opts.Backoff (batchwrite).
func (r *runner) pipeline(ctx context.Context, g *errgroup.Group, work <-chan unit) {
	batches := make(chan batch, 2*r.opts.Workers)
	var readers sync.WaitGroup
	// Once ctx has ended (a failure, an interrupt), no further worker starts.
	// The worker loops count with range: a counter that never reaches its
	// bound would keep starting workers (g.Go blocks at the group's limit).
	for range r.opts.Workers {
		if ctx.Err() != nil {
			break
		}
		readers.Add(1)
		g.Go(func() error {
			defer readers.Done()
			for u := range work {
				if err := r.toBatches(ctx, u, batches); err != nil {
					return err
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		readers.Wait()
		close(batches)
		return nil
	})
	for range r.opts.Workers {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			for b := range batches {
				if err := batchwrite.WriteBatch(ctx, r.db, r.opts.To, b.reqs, r.opts.Backoff); err != nil {
					return err
				}
				b.done.Add(int64(len(b.reqs)))
				r.handled(int64(len(b.reqs)))
			}
			return nil
		})
	}
}

// toBatches turns one unit (keys of one kind) into write batches: deletes of
// items only in the original (with DeleteExtra), or puts of the restored
// table's current items (BatchGetItem, consistent) or of the export's images.
// Keys it leaves alone (kept extras, items gone from the source) count as
// handled at once.
func (r *runner) toBatches(ctx context.Context, u unit, out chan<- batch) error {
	recs := u.recs
	var reqs []types.WriteRequest
	done := &r.copied
	if recs[0].Kind == tablediff.OnlyInTarget {
		done = &r.deleted
		for _, rec := range recs {
			k, err := tablediff.DecodeKey(rec.Key)
			if err != nil {
				return err
			}
			reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}})
			r.note(rec, OutDeleted, "")
		}
	} else {
		items := u.images
		if items == nil {
			keys := make([]map[string]types.AttributeValue, 0, len(recs))
			for _, rec := range recs {
				k, err := tablediff.DecodeKey(rec.Key)
				if err != nil {
					return err
				}
				keys = append(keys, k)
			}
			var err error
			if items, err = getBatch(ctx, r.db, r.opts.From, keys, r.opts.Backoff); err != nil {
				return err
			}
		}
		if gone := int64(len(recs) - len(items)); gone > 0 {
			r.gone.Add(gone)
			r.handled(gone)
		}
		if err := r.noteBatch(recs, items); err != nil {
			return err
		}
		for _, it := range items {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
	}
	for _, b := range batchwrite.Split(r.opts.To, reqs, batchwrite.DefaultLimits()) {
		select {
		case out <- batch{reqs: b, done: done}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// noteBatch records a batch unit's keys: copied when their item was read,
// gone from the source otherwise.
func (r *runner) noteBatch(recs []tablediff.KeyRecord, items []map[string]types.AttributeValue) error {
	if r.record == nil {
		return nil
	}
	read := make(map[string]bool, len(items))
	for _, it := range items {
		k, err := tablediff.EncodeKey(it, r.keyNames)
		if err != nil {
			return err
		}
		read[string(k)] = true
	}
	for _, rec := range recs {
		if read[string(rec.Key)] {
			r.note(rec, OutCopied, "")
		} else {
			r.note(rec, OutGone, "")
		}
	}
	return nil
}

// Batch limits of DynamoDB.
const (
	maxBatchGet   = 100
	maxBatchWrite = batchwrite.MaxItems
)

// condition is a ConditionExpression with its placeholders (DDB-API-04).
type condition struct {
	expr   string
	names  map[string]string
	values map[string]types.AttributeValue
}

// maxExpression is DynamoDB's limit on an expression string.
const maxExpression = 4096

// unchanged returns a condition that holds only while the item is still
// cur: every attribute equal, or the key absent when cur is nil.
func unchanged(cur map[string]types.AttributeValue, keyNames []string) (condition, error) {
	if cur == nil {
		return condition{expr: "attribute_not_exists(#k0)", names: map[string]string{"#k0": keyNames[0]}}, nil
	}
	c := condition{names: map[string]string{}, values: map[string]types.AttributeValue{}}
	names := make([]string, 0, len(cur))
	for n := range cur {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if i > 0 {
			c.expr += " AND "
		}
		c.expr += fmt.Sprintf("#c%d = :c%d", i, i)
		c.names[fmt.Sprintf("#c%d", i)] = n
		c.values[fmt.Sprintf(":c%d", i)] = cur[n]
	}
	if len(c.expr) > maxExpression {
		return condition{}, fmt.Errorf("too many attributes (%d) for a condition on the whole item (4 KB expression limit): repair it with --unconditional while writes are stopped", len(cur))
	}
	return c, nil
}
