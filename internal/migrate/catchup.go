package migrate

// The catch-up applies the source stream's changes to the destinations.
//
// Ordering. DynamoDB Streams orders the records of one key within a shard,
// and a key's records move from a parent shard to its children; the catch-up
// reads every shard in that order (parents first, each shard from its
// checkpoint to its end). In one pass it keeps only the LAST record of each
// key (compaction) and applies that: the destination takes the key's newest
// image, or loses the key on a REMOVE, never an intermediate one.
//
// Never older over newer. Each write the catch-up makes carries the record's
// sequence number (zero-padded, attribute dynops_migrate_seq) and is
// conditional: attribute_not_exists(seq) OR seq < :this. A re-run from an
// older checkpoint, a second catch-up process or a killed pass that is run
// again can therefore never put an older change over a newer one. The
// backfill's copies carry no sequence number; the catch-up runs only after
// the backfill has finished, and its first pass reads up to the stream's tip,
// so the last record of a key it applies over a backfill copy is at least as
// new as the item the backfill read (up to the stream's propagation delay of
// well under a second: run the catch-up a few seconds after the backfill).
// Records older than the backfill's start (the recorded position's time minus
// a margin of one minute, for clock skew and the second granularity of
// ApproximateCreationDateTime) are skipped: the backfill's consistent Scan saw
// their effect.
//
// Routes depend on the key only, so a key has one destination. An item whose
// route changes (its SK prefix changed) is a new key in the source: the old
// key's REMOVE deletes the old destination's copy and the new key's INSERT
// writes the new one. A MODIFY whose old and new images route differently
// (not possible with key-only rules, kept as a guard) also deletes the old copy.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/migrate/routes"
	"github.com/dynops/dynops/internal/tablediff"
)

// ErrTrimmed says the recorded stream position is no longer readable.
var ErrTrimmed = errors.New("stream position trimmed")

// CatchUpOptions of a catch-up pass.
type CatchUpOptions struct {
	Input
	AllowUnmatched bool
	// AllowUntransformable skips changes whose new image the route cannot
	// transform (counted, sampled) instead of failing the pass.
	AllowUntransformable bool
	// Workers is the number of concurrent conditional writes (default 8).
	Workers int
	// Margin: records older than the position's time minus Margin are skipped (default 1 min).
	Margin time.Duration
	// Retention of stream records (24 h on AWS).
	Retention time.Duration
	Now       func() time.Time
	// Follow makes CatchUp run pass after pass until its context ends,
	// pausing Interval (default 1 s) whenever a pass caught up.
	Follow   bool
	Interval time.Duration
	// OnPass is called after each pass with its number (from 1) and result.
	OnPass func(pass int, p *PassResult)
}

// CatchUp applies the stream: one pass, or with o.Follow pass after pass
// until ctx ends (the end of a follow is not an error). It returns the sum
// of the passes and how many ran. A pass that left items behind
// (LeftBehind: unmatched, untransformable) ends the run with its error,
// after the pass is counted in the sum.
func CatchUp(ctx context.Context, c Clients, o CatchUpOptions, st *State) (PassResult, int, error) {
	var total PassResult
	passes := 0
	for {
		p, err := CatchUpPass(ctx, c, o, st)
		if err != nil && !LeftBehind(err) {
			if o.Follow && ctx.Err() != nil {
				return total, passes, nil
			}
			return total, passes, err
		}
		passes++
		total.add(p)
		if o.OnPass != nil {
			o.OnPass(passes, p)
		}
		if err != nil || !o.Follow {
			return total, passes, err
		}
		if p.CaughtUp {
			interval := o.Interval
			if interval <= 0 {
				interval = time.Second
			}
			select {
			case <-ctx.Done():
			case <-time.After(interval):
			}
		}
		if ctx.Err() != nil {
			return total, passes, nil
		}
	}
}

// add sums pass p into t (the lag and caught-up state are p's).
func (t *PassResult) add(p *PassResult) {
	t.Records += p.Records
	t.BeforeBackfill += p.BeforeBackfill
	t.Keys += p.Keys
	t.Put += p.Put
	t.Deleted += p.Deleted
	t.MovedAway += p.MovedAway
	t.Stale += p.Stale
	t.Unmatched += p.Unmatched
	t.UnmatchedSample = append(t.UnmatchedSample, p.UnmatchedSample...)
	t.Untransformable += p.Untransformable
	t.UntransformableSample = append(t.UntransformableSample, p.UntransformableSample...)
	t.CaughtUp, t.Lag, t.Seconds = p.CaughtUp, p.Lag, t.Seconds+p.Seconds
	if p.NewestRecord != nil {
		t.NewestRecord = p.NewestRecord
	}
}

func (o *CatchUpOptions) defaults() {
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.Margin == 0 {
		o.Margin = time.Minute
	}
	if o.Retention == 0 {
		o.Retention = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// PassResult is what one catch-up pass read and applied.
type PassResult struct {
	Records         int64    `json:"records_read"`
	BeforeBackfill  int64    `json:"records_before_backfill"`
	Keys            int      `json:"keys_changed"`
	Put             int64    `json:"put"`
	Deleted         int64    `json:"deleted"`
	MovedAway       int64    `json:"deleted_from_old_route"`
	Stale           int64    `json:"stale_skipped"`
	Unmatched       int64    `json:"unmatched"`
	UnmatchedSample []string `json:"unmatched_sample"`
	// Untransformable changes were left behind: the sample holds "KEY: why".
	Untransformable       int64         `json:"untransformable"`
	UntransformableSample []string      `json:"untransformable_sample"`
	CaughtUp              bool          `json:"caught_up"`
	Lag                   time.Duration `json:"lag_ns"`
	NewestRecord          *time.Time    `json:"newest_record,omitempty"`
	Seconds               float64       `json:"seconds"`
}

// LagString is the lag for people.
func (p *PassResult) LagString() string { return p.Lag.Round(time.Millisecond).String() }

type change struct {
	rec  stypes.Record
	keys map[string]types.AttributeValue
}

// CatchUpPass reads the stream from the checkpoint to its tip and applies
// the last change of each key, then moves the checkpoint.
func CatchUpPass(ctx context.Context, c Clients, o CatchUpOptions, st *State) (*PassResult, error) {
	o.defaults()
	start := o.Now()
	if st.Position == nil || st.Backfill == nil {
		return nil, &InputError{[]string{fmt.Sprintf("no backfill of %s recorded in %s: run `dynops migrate backfill` first (it records where the catch-up starts)", o.Source, st.Path())}}
	}
	if !st.BackfillDone() {
		return nil, &InputError{[]string{fmt.Sprintf("the backfill of %s has not finished: resume it (`dynops migrate backfill` with the same --state) before the catch-up", o.Source)}}
	}
	if st.CatchUp == nil {
		st.CatchUp = &CatchUpState{Shards: map[string]ShardState{}}
	}
	o.AllowUnmatched = o.AllowUnmatched || st.Backfill.AllowUnmatched
	o.AllowUntransformable = o.AllowUntransformable || st.Backfill.AllowUntransformable
	shards, err := listShards(ctx, c.Streams, st.Position.StreamARN)
	if err != nil {
		if isStreamGone(err) {
			return nil, trimmedErr(st, "the stream is gone (disabled or replaced)")
		}
		return nil, err
	}
	if err := checkTrimmed(st, shards, o); err != nil {
		return nil, err
	}
	res := &PassResult{CaughtUp: true, UnmatchedSample: []string{}, UntransformableSample: []string{}}
	last := map[string]*change{}
	newSeq := map[string]ShardState{}
	cutoff := st.Position.Time.Add(-o.Margin)
	for _, sh := range orderShards(shards) {
		id := aws.ToString(sh.ShardId)
		ss := st.CatchUp.Shards[id]
		if ss.Done {
			continue
		}
		got, caughtUp, err := readShard(ctx, c.Streams, st, id, ss, func(r stypes.Record) error {
			res.Records++
			t := aws.ToTime(r.Dynamodb.ApproximateCreationDateTime)
			if !t.IsZero() && t.Before(cutoff) {
				res.BeforeBackfill++
				return nil
			}
			if res.NewestRecord == nil || t.After(*res.NewestRecord) {
				tt := t
				res.NewestRecord = &tt
			}
			keys, err := ddbjson.FromStream(r.Dynamodb.Keys)
			if err != nil {
				return err
			}
			k, err := tablediff.EncodeKey(keys, o.Routes.SourceKey)
			if err != nil {
				return fmt.Errorf("stream record %s: %w", aws.ToString(r.Dynamodb.SequenceNumber), err)
			}
			last[string(k)] = &change{rec: r, keys: keys}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if !caughtUp {
			res.CaughtUp = false
		}
		newSeq[id] = got
	}
	res.Keys = len(last)
	if err := checkChanges(o, last); err != nil {
		return nil, err
	}
	if err := apply(ctx, c, o, last, res); err != nil {
		return nil, err
	}
	now := o.Now()
	if res.NewestRecord != nil && res.Records > res.BeforeBackfill {
		res.Lag = now.Sub(*res.NewestRecord)
	}
	res.Seconds = now.Sub(start).Seconds()
	err = st.Update(func(s *State) {
		for id, ss := range newSeq {
			s.CatchUp.Shards[id] = ss
		}
		s.CatchUp.Applied += res.Put + res.Deleted + res.MovedAway
		s.CatchUp.Stale += res.Stale
		s.CatchUp.Unmatched += res.Unmatched
		s.CatchUp.Untransformable += res.Untransformable
		if res.NewestRecord != nil {
			s.CatchUp.NewestRecord = res.NewestRecord
		}
		t := now.UTC()
		s.CatchUp.LastPass = &t
	})
	if err != nil {
		return nil, err
	}
	return res, leftBehindErr(res.Unmatched, res.UnmatchedSample, o.AllowUnmatched, res.Untransformable, res.UntransformableSample, o.AllowUntransformable)
}

func trimmedErr(st *State, why string) error {
	return fmt.Errorf("%w: %s. The catch-up of %s needs every change since the backfill started (%s), and DynamoDB Streams keeps records 24 hours: changes since are lost to it. Empty the destinations and run a new backfill: dynops migrate backfill --restart",
		ErrTrimmed, why, st.Source, st.Position.Time.Format(time.RFC3339))
}

func isStreamGone(err error) bool {
	var nf *stypes.ResourceNotFoundException
	return errors.As(err, &nf)
}

// checkTrimmed refuses a position older than the stream keeps: a shard the
// backfill recorded is gone before the catch-up finished it, or a shard was
// never read and the position is older than the retention.
func checkTrimmed(st *State, shards []shardInfo, o CatchUpOptions) error {
	present := map[string]bool{}
	for _, sh := range shards {
		present[aws.ToString(sh.ShardId)] = true
	}
	old := o.Now().Sub(st.Position.Time) > o.Retention
	for _, id := range st.Position.Shards {
		ss := st.CatchUp.Shards[id]
		if ss.Done {
			continue
		}
		if !present[id] {
			return trimmedErr(st, fmt.Sprintf("shard %s, open when the backfill started, has been trimmed from the stream", id))
		}
		if old && ss.LastSeq == "" {
			return trimmedErr(st, fmt.Sprintf("the position is %s old, past the stream's retention", o.Now().Sub(st.Position.Time).Round(time.Minute)))
		}
	}
	return nil
}

// orderShards puts parents before children (and otherwise keeps the order).
func orderShards(shards []shardInfo) []shardInfo {
	byID := map[string]shardInfo{}
	for _, sh := range shards {
		byID[aws.ToString(sh.ShardId)] = sh
	}
	var out []shardInfo
	done := map[string]bool{}
	var visit func(sh shardInfo)
	visit = func(sh shardInfo) {
		id := aws.ToString(sh.ShardId)
		if done[id] {
			return
		}
		done[id] = true
		if p, ok := byID[sh.Parent]; ok {
			visit(p)
		}
		out = append(out, sh)
	}
	for _, sh := range shards {
		visit(sh)
	}
	return out
}

// readShard reads one shard from its checkpoint to its current end, calling
// fn for each record in order. It returns the new checkpoint and whether the
// read ended at the tip (an empty page of an open shard or a closed shard's end).
func readShard(ctx context.Context, s Streams, st *State, id string, ss ShardState, fn func(stypes.Record) error) (ShardState, bool, error) {
	iter, err := shardIterator(ctx, s, st, id, ss.LastSeq)
	if err != nil {
		return ss, false, err
	}
	for {
		out, err := s.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(1000)})
		var expired *stypes.ExpiredIteratorException
		if errors.As(err, &expired) {
			if iter, err = shardIterator(ctx, s, st, id, ss.LastSeq); err != nil {
				return ss, false, err
			}
			continue
		}
		var trimmed *stypes.TrimmedDataAccessException
		if errors.As(err, &trimmed) {
			return ss, false, trimmedErr(st, fmt.Sprintf("shard %s: %v", id, err))
		}
		if err != nil {
			return ss, false, fmt.Errorf("reading shard %s of %s: %w", id, st.Position.StreamARN, err)
		}
		for _, r := range out.Records {
			if err := fn(r); err != nil {
				return ss, false, err
			}
			ss.LastSeq = aws.ToString(r.Dynamodb.SequenceNumber)
		}
		if out.NextShardIterator == nil {
			ss.Done = true
			return ss, true, nil
		}
		if len(out.Records) == 0 {
			return ss, true, nil
		}
		iter = out.NextShardIterator
	}
}

func shardIterator(ctx context.Context, s Streams, st *State, id, lastSeq string) (*string, error) {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: &st.Position.StreamARN, ShardId: &id, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon}
	if lastSeq != "" {
		in.ShardIteratorType, in.SequenceNumber = stypes.ShardIteratorTypeAfterSequenceNumber, &lastSeq
	}
	out, err := s.GetShardIterator(ctx, in)
	var trimmed *stypes.TrimmedDataAccessException
	if errors.As(err, &trimmed) {
		return nil, trimmedErr(st, fmt.Sprintf("shard %s after %q: %v", id, lastSeq, err))
	}
	if isStreamGone(err) {
		return nil, trimmedErr(st, fmt.Sprintf("shard %s: %v", id, err))
	}
	if err != nil {
		return nil, fmt.Errorf("getting an iterator on shard %s of %s: %w", id, st.Position.StreamARN, err)
	}
	return out.ShardIterator, nil
}

// PadSeq pads a sequence number to 40 digits so that strings compare as numbers.
func PadSeq(seq string) string {
	if len(seq) >= 40 {
		return seq
	}
	return strings.Repeat("0", 40-len(seq)) + seq
}

// checkChanges is the plan's check of what a pass is about to write (its
// records, as Preflight checks the source's items for the backfill): a
// change no route matches, or whose new image its route cannot transform,
// refuses the pass before its first write unless allowed (then apply
// counts it and leaves it behind). The checkpoint does not move.
func checkChanges(o CatchUpOptions, last map[string]*change) error {
	var unmatched, untransformable int64
	uSample, tSample := []string{}, []string{}
	keys := make([]string, 0, len(last))
	for k := range last {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r := last[k].rec
		if r.EventName == stypes.OperationTypeRemove {
			if o.Routes.Find(last[k].keys) == nil {
				unmatched++
				uSample = appendSample(uSample, k)
			}
			continue
		}
		img, err := ddbjson.FromStream(r.Dynamodb.NewImage)
		if err != nil || len(img) == 0 {
			continue // apply says what is wrong with the record
		}
		rt := o.Routes.Find(img)
		if rt == nil {
			unmatched++
			uSample = appendSample(uSample, k)
			continue
		}
		if _, err := rt.Transform(img); err != nil {
			untransformable++
			tSample = appendSample(tSample, fmt.Sprintf("%s: %v", k, err))
		}
	}
	err := leftBehindErr(unmatched, uSample, o.AllowUnmatched, untransformable, tSample, o.AllowUntransformable)
	if err == nil {
		return nil
	}
	problems := strings.Split(err.Error(), "\n")
	problems = append(problems, "nothing of this pass was written and the checkpoint did not move: run the catch-up again once the routes are fixed, or with the flag")
	return &RefusedError{InputError: &InputError{problems}, Cause: err}
}

const newerCondition = "attribute_not_exists(#s) OR #s < :s"

func apply(ctx context.Context, c Clients, o CatchUpOptions, last map[string]*change, res *PassResult) error {
	var mu sync.Mutex
	count := func(p *int64) { mu.Lock(); *p++; mu.Unlock() }
	keys := make([]string, 0, len(last))
	for k := range last {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.Workers)
	for _, k := range keys {
		ch := last[k]
		g.Go(func() error {
			r := ch.rec
			seq := PadSeq(aws.ToString(r.Dynamodb.SequenceNumber))
			cond := func() (*string, map[string]string, map[string]types.AttributeValue) {
				return aws.String(newerCondition), map[string]string{"#s": routes.SeqAttribute},
					map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: seq}}
			}
			unmatched := func() {
				mu.Lock()
				res.Unmatched++
				res.UnmatchedSample = appendSample(res.UnmatchedSample, k)
				mu.Unlock()
			}
			del := func(table string) (bool, error) {
				ce, names, vals := cond()
				key := map[string]types.AttributeValue{}
				for _, n := range o.Routes.SourceKey {
					key[n] = ch.keys[n]
				}
				_, err := c.DB.DeleteItem(gctx, &dynamodb.DeleteItemInput{TableName: &table, Key: key,
					ConditionExpression: ce, ExpressionAttributeNames: names, ExpressionAttributeValues: vals})
				if isConditionFailed(err) {
					count(&res.Stale)
					return false, nil
				}
				if err != nil {
					return false, fmt.Errorf("deleting %s from %s: %w", k, table, err)
				}
				return true, nil
			}
			if r.EventName == stypes.OperationTypeRemove {
				rt := o.Routes.Find(ch.keys)
				if rt == nil {
					unmatched()
					return nil
				}
				if ok, err := del(rt.Table); err != nil || !ok {
					return err
				}
				count(&res.Deleted)
				return nil
			}
			img, err := ddbjson.FromStream(r.Dynamodb.NewImage)
			if err != nil {
				return err
			}
			if len(img) == 0 {
				return fmt.Errorf("stream record %s of %s has no new image: the stream must be NEW_IMAGE or NEW_AND_OLD_IMAGES", aws.ToString(r.Dynamodb.SequenceNumber), k)
			}
			rt := o.Routes.Find(img)
			if old, _ := ddbjson.FromStream(r.Dynamodb.OldImage); len(old) > 0 {
				if ort := o.Routes.Find(old); ort != nil && (rt == nil || ort.Table != rt.Table) {
					ok, err := del(ort.Table)
					if err != nil {
						return err
					}
					if ok {
						count(&res.MovedAway)
					}
				}
			}
			if rt == nil {
				unmatched()
				return nil
			}
			item, err := rt.Transform(img)
			if err != nil {
				mu.Lock()
				res.Untransformable++
				res.UntransformableSample = appendSample(res.UntransformableSample, fmt.Sprintf("%s: %v", k, err))
				mu.Unlock()
				return nil
			}
			item[routes.SeqAttribute] = &types.AttributeValueMemberS{Value: seq}
			ce, names, vals := cond()
			_, err = c.DB.PutItem(gctx, &dynamodb.PutItemInput{TableName: &rt.Table, Item: item,
				ConditionExpression: ce, ExpressionAttributeNames: names, ExpressionAttributeValues: vals})
			if isConditionFailed(err) {
				count(&res.Stale)
				return nil
			}
			if err != nil {
				return fmt.Errorf("writing %s to %s: %w", k, rt.Table, err)
			}
			count(&res.Put)
			return nil
		})
	}
	return g.Wait()
}

func isConditionFailed(err error) bool {
	var cf *types.ConditionalCheckFailedException
	return errors.As(err, &cf)
}
