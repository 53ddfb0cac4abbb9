package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/tablediff"
)

// RevertDB is the part of the API a revert uses.
type RevertDB interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// RevertOptions of Revert.
type RevertOptions struct {
	Table string
	Apply bool // false: plan only (reads the table, writes nothing)
	// Workers is how many keys are handled at once (default 8).
	Workers int
	// SampleSize is how many conflicts the report samples for a terminal
	// (default 10); ConflictKeys lists them all.
	SampleSize int
	// WriteBudget holds the writes to --max-write-units (nil: no budget).
	WriteBudget *capacity.Bucket
	// Progress is told the keys handled so far of the total.
	Progress func(done, total int64)
	// Shard, with a Count above 1, limits the revert to the keys whose key
	// hash is that shard's (tablediff.KeyShard): N shards revert what one
	// revert does.
	Shard engine.Shard
	// Planned, when set, is told in a dry run each key it would write: the
	// item now (read with a consistent GetItem) and what the write would
	// leave (nil: deleted). Called from the workers at once.
	Planned func(keys, before, after map[string]types.AttributeValue)
}

// RevertConflict is a key left alone: changed after the window, so putting
// back its old image would lose a later write.
type RevertConflict struct {
	Key    json.RawMessage `json:"key"`
	Reason string          `json:"reason"`
}

// RevertReport is the result of Revert.
type RevertReport struct {
	Table   string    `json:"table"`
	DryRun  bool      `json:"dry_run"`
	From    time.Time `json:"from"` // the window reverted: the first export's start
	To      time.Time `json:"to"`   // and the last one's end
	Exports []string  `json:"exports"`
	// SourceTable is the table the exports are of (the reverted table), and
	// Vouched what was established of each export (exportverify.Vouch).
	SourceTable string                 `json:"source_table,omitempty"`
	Vouched     []exportverify.Vouched `json:"vouched,omitempty"`
	// Unverified is the --unverified-exports reason, when one was given.
	Unverified string `json:"unverified_exports,omitempty"`
	Keys       int64  `json:"keys"` // changed in the window (of this shard, with one)
	// Shard is the part of the keys this revert takes (--shard I/N), "" for all.
	Shard string `json:"shard,omitempty"`
	// KeysDigest is the SHA-256 of the changed keys (sorted, one a line):
	// two runs over the same keys have the same digest.
	KeysDigest string `json:"keys_digest,omitempty"`
	// Restores are keys put back to their image at From (changed or
	// deleted in the window); Deletes are keys created in the window.
	Restores int64 `json:"restores"`
	Deletes  int64 `json:"deletes"`
	// AlreadyReverted are keys already as they were at From (a re-run).
	AlreadyReverted int64            `json:"already_reverted"`
	Conflicts       int64            `json:"conflicts"`
	ConflictSample  []RevertConflict `json:"conflict_sample,omitempty"`
	// ConflictKeys are every conflict, ordered by key.
	ConflictKeys []RevertConflict `json:"conflict_keys,omitempty"`
	WriteBudget  *capacity.Budget `json:"write_budget,omitempty"`
	// WriteEstimate is what the writes are expected to take (the dry run).
	WriteEstimate *capacity.Estimate `json:"write_estimate,omitempty"`
	WriteCapacity *capacity.Usage    `json:"write_capacity,omitempty"`
}

// ErrNoOldImages: an export of the window was written without old images.
var ErrNoOldImages = errors.New("an incremental export without old images cannot be reverted")

// windowChange is one key's net change over the window: its image at the
// window's start (before, nil: absent) and at its end (after, nil: absent).
type windowChange struct {
	keys          map[string]types.AttributeValue
	before, after map[string]types.AttributeValue
	first, last   int64 // WriteTimestampMicros of its first and last change
}

// WindowChanges reads the exports (a chain, oldest first, each verified)
// into each key's net change: the old image of its first change and the
// new image of its last. Every export must be NEW_AND_OLD_IMAGES.
func WindowChanges(ctx context.Context, store exportverify.Store, incs []Increment) (map[string]*windowChange, error) {
	if err := CheckRevertable(store, incs); err != nil {
		return nil, err
	}
	out := map[string]*windowChange{}
	for _, inc := range incs {
		if _, err := verifyIncrement(ctx, store, inc); err != nil {
			return nil, err
		}
		err := eachChange(ctx, store, inc, func(c lineChange) error {
			w, ok := out[c.id]
			if !ok {
				out[c.id] = &windowChange{keys: c.keys, before: c.old, after: c.image, first: c.micros, last: c.micros}
				return nil
			}
			if c.micros < w.first {
				w.first, w.before = c.micros, c.old
			}
			if c.micros >= w.last {
				w.last, w.after = c.micros, c.image
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ErrNotRevertable: the exports cannot be reverted as given (none, a gap or
// an overlap, no old images); wraps ErrGap or ErrNoOldImages when one of
// those is why.
var ErrNotRevertable = errors.New("cannot revert these exports")

// CheckRevertable checks what a revert needs of the exports before it reads
// a data file: at least one, a chain without gap or overlap (oldest first),
// every one NEW_AND_OLD_IMAGES.
func CheckRevertable(store exportverify.Store, incs []Increment) error {
	if len(incs) == 0 {
		return fmt.Errorf("%w: no incremental export to revert", ErrNotRevertable)
	}
	if err := CheckChain(incs, time.Time{}); err != nil {
		return fmt.Errorf("%w: %w", ErrNotRevertable, err)
	}
	for _, inc := range incs {
		if inc.View != "NEW_AND_OLD_IMAGES" {
			return fmt.Errorf("%w: %w: %s has outputView %q; export the window again with NEW_AND_OLD_IMAGES (dynops export incremental does)", ErrNotRevertable, ErrNoOldImages, store.Describe(inc.Dir), inc.View)
		}
	}
	return nil
}

// Revert undoes what the window did to the table, key by key: a key whose
// item is still as the window left it (read with a consistent GetItem) is
// put back to its image at the window's start, or deleted when it was
// created in the window, with a condition that it is still unchanged (the
// repair conflict model); a key changed since the window is a conflict and
// left alone. Re-running is safe: a key already as it was counts as
// already reverted.
func Revert(ctx context.Context, db RevertDB, store exportverify.Store, incs []Increment, o RevertOptions) (RevertReport, error) {
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.SampleSize <= 0 {
		o.SampleSize = 10
	}
	rep := RevertReport{Table: o.Table, DryRun: !o.Apply}
	sort.SliceStable(incs, func(i, j int) bool { return incs[i].From.Before(incs[j].From) })
	for _, inc := range incs {
		rep.Exports = append(rep.Exports, inc.Dir)
	}
	if len(incs) > 0 {
		rep.From, rep.To = incs[0].From, incs[len(incs)-1].To
	}
	changes, err := WindowChanges(ctx, store, incs)
	if err != nil {
		return rep, err
	}
	keyNames, err := tableKeyNames(ctx, db, o.Table)
	if err != nil {
		return rep, err
	}
	if o.Shard.Count > 1 {
		rep.Shard = o.Shard.String()
		for id, c := range changes {
			k, err := tablediff.EncodeKey(c.keys, keyNames)
			if err != nil {
				return rep, fmt.Errorf("a key of the exports: %w", err)
			}
			if tablediff.KeyShard(k, o.Shard.Count) != o.Shard.Index {
				delete(changes, id)
			}
		}
	}
	rep.Keys = int64(len(changes))
	var restores, deletes, already, conflicts, done atomic.Int64
	var mu sync.Mutex
	conflict := func(keys map[string]types.AttributeValue, reason string) {
		conflicts.Add(1)
		k, _ := ddbjson.EncodeItem(keys)
		mu.Lock()
		defer mu.Unlock()
		rep.ConflictKeys = append(rep.ConflictKeys, RevertConflict{Key: k, Reason: reason})
	}
	ids := make([]string, 0, len(changes))
	for id := range changes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	digest := sha256.Sum256([]byte(strings.Join(ids, "\n")))
	rep.KeysDigest = "sha256:" + hex.EncodeToString(digest[:])
	work := make(chan *windowChange)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(work)
		for _, id := range ids {
			select {
			case work <- changes[id]:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	w := budgetedRevertDB{RevertDB: db, ItemWriter: capacity.Items(db, o.Table, o.WriteBudget)}
	for i := 0; i < o.Workers; i++ {
		g.Go(func() error {
			for c := range work {
				if err := revertOne(gctx, w, o, keyNames, c, &restores, &deletes, &already, conflict); err != nil {
					return err
				}
				if n := done.Add(1); o.Progress != nil {
					o.Progress(n, rep.Keys)
				}
			}
			return nil
		})
	}
	err = g.Wait()
	rep.Restores, rep.Deletes, rep.AlreadyReverted, rep.Conflicts = restores.Load(), deletes.Load(), already.Load(), conflicts.Load()
	sort.Slice(rep.ConflictKeys, func(i, j int) bool { return string(rep.ConflictKeys[i].Key) < string(rep.ConflictKeys[j].Key) })
	rep.ConflictSample = rep.ConflictKeys[:min(len(rep.ConflictKeys), o.SampleSize)]
	if err != nil {
		return rep, fmt.Errorf("reverting %s (%d of %d keys handled; run it again: reverted keys count as already reverted): %w", o.Table, done.Load(), rep.Keys, err)
	}
	return rep, nil
}

func revertOne(ctx context.Context, db RevertDB, o RevertOptions, keyNames []string, c *windowChange,
	restores, deletes, already *atomic.Int64, conflict func(map[string]types.AttributeValue, string)) error {
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(o.Table), Key: c.keys, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("reading an item of %s: %w", o.Table, err)
	}
	cur := out.Item
	if len(cur) == 0 {
		cur = nil
	}
	switch {
	case sameItem(cur, c.before):
		already.Add(1)
		return nil
	case !sameItem(cur, c.after):
		conflict(c.keys, "changed after the window: the item is not as the window left it")
		return nil
	}
	if !o.Apply {
		if c.before == nil {
			deletes.Add(1)
		} else {
			restores.Add(1)
		}
		if o.Planned != nil {
			o.Planned(c.keys, cur, c.before)
		}
		return nil
	}
	expr, names, values, err := repair.UnchangedCondition(cur, keyNames)
	if err != nil {
		conflict(c.keys, err.Error())
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	if c.before == nil {
		_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(o.Table), Key: c.keys,
			ConditionExpression: &expr, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
	} else {
		_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(o.Table), Item: c.before,
			ConditionExpression: &expr, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
	}
	switch {
	case errors.As(err, &ccf) && revertedMeanwhile(ctx, db, o.Table, c):
		already.Add(1) // a duplicate of this revert (or shard) wrote it first
	case errors.As(err, &ccf):
		conflict(c.keys, "changed while reverting")
	case err != nil:
		return fmt.Errorf("writing an item of %s: %w", o.Table, err)
	case c.before == nil:
		deletes.Add(1)
	default:
		restores.Add(1)
	}
	return nil
}

// revertedMeanwhile: after a failed condition, is the key (read again) as
// it was at the window's start? Then another run of the same revert wrote
// it: not a conflict.
func revertedMeanwhile(ctx context.Context, db RevertDB, table string, c *windowChange) bool {
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: c.keys, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false
	}
	cur := out.Item
	if len(cur) == 0 {
		cur = nil
	}
	return sameItem(cur, c.before)
}

// sameItem: both absent, or both present with every attribute equal.
func sameItem(a, b map[string]types.AttributeValue) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return tablediff.Checksum(a, nil) == tablediff.Checksum(b, nil)
}

func tableKeyNames(ctx context.Context, db RevertDB, table string) ([]string, error) {
	d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return nil, fmt.Errorf("describing %s: %w", table, err)
	}
	var names []string
	for _, k := range d.Table.KeySchema {
		if k.KeyType == types.KeyTypeHash {
			names = append([]string{aws.ToString(k.AttributeName)}, names...)
		} else {
			names = append(names, aws.ToString(k.AttributeName))
		}
	}
	return names, nil
}

// budgetedRevertDB holds the revert's writes to the write budget
// (capacity.Items); reads are not charged.
type budgetedRevertDB struct {
	RevertDB
	capacity.ItemWriter
}

func (w budgetedRevertDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return w.ItemWriter.PutItem(ctx, in, o...)
}

func (w budgetedRevertDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return w.ItemWriter.DeleteItem(ctx, in, o...)
}
