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
	// VersionAttribute is the table's version attribute (--version-attribute):
	// each write is conditional on it and increments it (repair.Lock).
	VersionAttribute string
}

// RevertConflict is a key left alone: changed after the window, so putting
// back its old image would lose a later write; or a key written whose item
// another writer changed between the revert's read and its write.
type RevertConflict struct {
	Key    json.RawMessage `json:"key"`
	Reason string          `json:"reason"`
	// ChangedSinceRead are the attributes the write replaced that another
	// writer changed since the read (the key was written).
	ChangedSinceRead []string `json:"changed_since_read,omitempty"`
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
	AlreadyReverted int64 `json:"already_reverted"`
	Conflicts       int64 `json:"conflicts"`
	// ChangedSinceRead are keys written (in Restores or Deletes) over a
	// change another writer made between the read and the write; each is
	// in ConflictKeys with the attributes the write replaced.
	ChangedSinceRead int64            `json:"changed_since_read"`
	ConflictSample   []RevertConflict `json:"conflict_sample,omitempty"`
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
// already reverted. src comes from PrepareRevert only (its exports are
// unexported): a revert reads nothing DynamoDB has not vouched for.
func Revert(ctx context.Context, db RevertDB, store exportverify.Store, src RevertSource, o RevertOptions) (RevertReport, error) {
	incs := src.incs
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
	var done atomic.Int64
	t := &revertTally{}
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
				if err := revertOne(gctx, w, o, repair.Lock{KeyNames: keyNames, Version: o.VersionAttribute}, c, t); err != nil {
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
	rep.Restores, rep.Deletes, rep.AlreadyReverted, rep.Conflicts = t.restores.Load(), t.deletes.Load(), t.already.Load(), t.conflicts.Load()
	rep.ChangedSinceRead, rep.ConflictKeys = t.changed.Load(), t.keys
	sort.Slice(rep.ConflictKeys, func(i, j int) bool { return string(rep.ConflictKeys[i].Key) < string(rep.ConflictKeys[j].Key) })
	rep.ConflictSample = rep.ConflictKeys[:min(len(rep.ConflictKeys), o.SampleSize)]
	if err != nil {
		return rep, fmt.Errorf("reverting %s (%d of %d keys handled; run it again: reverted keys count as already reverted): %w", o.Table, done.Load(), rep.Keys, err)
	}
	return rep, nil
}

// revertTally counts what the workers did with the keys.
type revertTally struct {
	restores, deletes, already, conflicts, changed atomic.Int64
	mu                                             sync.Mutex
	keys                                           []RevertConflict
}

// conflict lists a key: left alone (changed is nil) or written over the
// attributes changed names.
func (t *revertTally) conflict(keys map[string]types.AttributeValue, reason string, changed []string) {
	if changed == nil {
		t.conflicts.Add(1)
	} else {
		t.changed.Add(1)
	}
	k, _ := ddbjson.EncodeItem(keys)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.keys = append(t.keys, RevertConflict{Key: k, Reason: reason, ChangedSinceRead: changed})
}

func revertOne(ctx context.Context, db RevertDB, o RevertOptions, lock repair.Lock, c *windowChange, t *revertTally) error {
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(o.Table), Key: c.keys, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("reading an item of %s: %w", o.Table, err)
	}
	cur := out.Item
	if len(cur) == 0 {
		cur = nil
	}
	switch {
	case lock.Same(cur, c.before):
		t.already.Add(1)
		return nil
	case !lock.Same(cur, c.after):
		t.conflict(c.keys, "changed after the window: the item is not as the window left it", nil)
		return nil
	}
	after, err := lock.Next(c.before, cur)
	if err != nil {
		t.conflict(c.keys, err.Error(), nil)
		return nil
	}
	count := &t.restores
	if after == nil {
		count = &t.deletes
	}
	if !o.Apply {
		count.Add(1)
		if o.Planned != nil {
			o.Planned(c.keys, cur, after)
		}
		return nil
	}
	old, err := lock.Write(ctx, db, o.Table, c.keys, cur, after)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.Is(err, repair.ErrUnlockable):
		t.conflict(c.keys, err.Error(), nil)
		return nil
	case errors.As(err, &ccf) && lock.WrittenMeanwhile(ctx, db, o.Table, c.keys, after):
		t.already.Add(1) // a duplicate of this revert (or shard) wrote it first
		return nil
	case errors.As(err, &ccf):
		t.conflict(c.keys, "changed while reverting", nil)
		return nil
	case err != nil:
		return err
	}
	count.Add(1)
	if changed := repair.ChangedSinceRead(cur, old); len(changed) > 0 {
		t.conflict(c.keys, fmt.Sprintf("reverted, but another writer changed the item between the revert's read and its write: the write replaced %s (read the item and decide)", strings.Join(changed, ", ")), changed)
	}
	return nil
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

// RevertSource is what a revert reads, established before its first write:
// the window's exports (a chain, each NEW_AND_OLD_IMAGES), the reverted
// table's ARN and what DynamoDB vouched for of each export.
type RevertSource struct {
	incs     []Increment
	TableArn string
	Vouched  []exportverify.Vouched
}

// Exports is how many exports the window has.
func (s RevertSource) Exports() int { return len(s.incs) }

// PrepareRevert finds the exports under prefixes, checks that they can be
// reverted (errors wrap ErrNotRevertable) and that each is an export of
// table in bucket that DynamoDB vouches for (exportverify.Vouch: refusals
// wrap exportverify.ErrContradicted or ErrUnvouched).
func PrepareRevert(ctx context.Context, db DynamoDB, store exportverify.Store, prefixes []string, table, bucket string, trust exportverify.Trust) (RevertSource, error) {
	var src RevertSource
	incs, err := FindIncrements(ctx, store, prefixes)
	if err != nil {
		return src, err
	}
	if err := CheckRevertable(store, incs); err != nil {
		return src, err
	}
	src.incs = incs
	if src.TableArn, err = TableArn(ctx, db, table); err != nil {
		return src, err
	}
	src.Vouched, err = Vouch(ctx, store, incs, exportverify.Expect{TableArn: src.TableArn, Bucket: bucket}, trust)
	return src, err
}
