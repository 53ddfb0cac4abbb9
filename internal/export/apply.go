package export

import (
	"bufio"
	"context"
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

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/ddbtags"
	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/tablediff"
)

// Tags dynops keeps on a table rebuilt from exports.
const (
	// TagImportedFrom is set by `export import`: s3://BUCKET/<full export>/data/.
	TagImportedFrom = "dynops:imported-from"
	// TagAppliedThrough is set by `export apply` after each incremental
	// export: the end of the last window applied (RFC 3339). It is the
	// checkpoint a re-run resumes from.
	TagAppliedThrough = "dynops:applied-through"
)

// ApplyDB is the part of the API an apply uses: the table's tags (its
// checkpoints), and each key read and written with a condition.
type ApplyDB interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	ListTagsOfResource(context.Context, *dynamodb.ListTagsOfResourceInput, ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error)
	TagResource(context.Context, *dynamodb.TagResourceInput, ...func(*dynamodb.Options)) (*dynamodb.TagResourceOutput, error)
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	capacity.ItemWriter
}

// ItemGetter reads one item.
type ItemGetter interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// Current reads a key's item of table now, with a consistent GetItem (nil:
// absent): ApplyOptions.Current.
func Current(db ItemGetter, table string) func(context.Context, map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	return func(ctx context.Context, keys map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: keys, ConsistentRead: aws.Bool(true)})
		if err != nil || len(out.Item) == 0 {
			return nil, err
		}
		return out.Item, nil
	}
}

// ApplyOptions of ApplyIncrements.
type ApplyOptions struct {
	Table string
	// Since is where the first window must start when the table carries no
	// checkpoint and no import tag: the full export's exportTime.
	Since time.Time
	Apply bool // false: plan only
	Act   func(what, target string, detail any)
	// Shard, with a Count above 1, limits the apply to the keys whose key
	// hash is that shard's (tablediff.KeyShard) and keeps its checkpoint
	// in the shard's own tag (ShardTag).
	Shard engine.Shard
	// Workers is how many keys are written at once (default 8).
	Workers int
	// Progress is told each increment's changes as they are written.
	Progress func(inc Increment, written, total int)
	// WriteBudget holds the writes to --max-write-units (nil: no budget).
	WriteBudget *capacity.Bucket
	// Planned, when set, is told in a dry run each key the exports would
	// write, once: the item now (Current) and what the last change of the
	// chain would leave (nil: deleted).
	Planned func(keys, before, after map[string]types.AttributeValue)
	// Current reads a key's item now (nil: absent); needed with Planned.
	Current func(ctx context.Context, keys map[string]types.AttributeValue) (map[string]types.AttributeValue, error)
}

// IncrementResult is what applying one export did.
type IncrementResult struct {
	Increment
	Puts    int  `json:"puts"`
	Deletes int  `json:"deletes"`
	Skipped bool `json:"skipped,omitempty"` // already applied (before the checkpoint)
	// Written are the puts and deletes written; Unchanged the keys already
	// as the export leaves them (a re-run, a duplicate shard), not written.
	Written   int `json:"written"`
	Unchanged int `json:"unchanged"`
}

// ApplyReport is the result of ApplyIncrements.
type ApplyReport struct {
	Table      string            `json:"table"`
	DryRun     bool              `json:"dry_run"`
	Since      time.Time         `json:"since"`      // where the chain started
	SinceFrom  string            `json:"since_from"` // where that came from
	Through    time.Time         `json:"through"`    // the table's checkpoint afterwards (read back)
	Increments []IncrementResult `json:"increments"`
	// SourceTable is the table the exports are of, and Vouched what was
	// established of each export read (exportverify.Vouch).
	SourceTable string                 `json:"source_table,omitempty"`
	Vouched     []exportverify.Vouched `json:"vouched,omitempty"`
	// Unverified is the --unverified-exports reason, when one was given.
	Unverified string `json:"unverified_exports,omitempty"`
	// WriteCapacity is the budget and what the writes used (as the
	// responses reported), when a budget was given.
	WriteCapacity *capacity.Usage `json:"write_capacity,omitempty"`
	// WriteBudget is the budget the run holds to and where it came from.
	WriteBudget *capacity.Budget `json:"write_budget,omitempty"`
	// WriteEstimate is what a dry run expects the writes to take.
	WriteEstimate *capacity.Estimate `json:"write_estimate,omitempty"`
	// Shard is the part of the keys this apply takes (--shard I/N), "" for
	// all; Shards says whether every shard of the run is through.
	Shard  string        `json:"shard,omitempty"`
	Shards *ShardsStatus `json:"shards,omitempty"`
}

// Start is where an apply, or one shard of it, continues from.
type Start struct {
	Arn string
	// Base is where this apply continues: the table's checkpoint, or a
	// shard's own when it is later. From says where Base came from.
	Base time.Time
	From string
	// Whole is the table's checkpoint (its dynops:applied-through tag,
	// else the full export's exportTime, else --since).
	Whole time.Time
}

// Baseline says where the table's history starts: its checkpoint tag, else
// the exportTime of the full export it was imported from (the import tag),
// else since; for a shard, its own checkpoint tag when that is later. An
// apply as another number of shards than a run in progress is refused
// (ErrShardMix).
func Baseline(ctx context.Context, db ApplyDB, store exportverify.Store, bucket, table string, since time.Time, sh engine.Shard) (Start, error) {
	d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return Start{}, fmt.Errorf("describing %s: %w", table, err)
	}
	st := Start{Arn: aws.ToString(d.Table.TableArn)}
	tags, err := tableTags(ctx, db, st.Arn)
	if err != nil {
		return st, err
	}
	if st.Whole, st.From, err = wholeBase(ctx, store, bucket, table, tags, since); err != nil {
		return st, err
	}
	if err := checkShardMix(table, tags, st.Whole, max(sh.Count, 1)); err != nil {
		return st, err
	}
	base, own, err := checkpointOf(tags, sh, st.Whole)
	if err != nil {
		return st, fmt.Errorf("%s %w", table, err)
	}
	st.Base = base
	if own {
		st.From = "the table's " + ShardTag(sh) + " tag"
	}
	return st, nil
}

func wholeBase(ctx context.Context, store exportverify.Store, bucket, table string, tags map[string]string, since time.Time) (time.Time, string, error) {
	if v := tags[TagAppliedThrough]; v != "" {
		t, err := parseStamp(v)
		if err != nil {
			return time.Time{}, "", fmt.Errorf("%s tag %s: %w", table, TagAppliedThrough, err)
		}
		return t, "the table's " + TagAppliedThrough + " tag", nil
	}
	if !since.IsZero() {
		return since, "--since", nil
	}
	src := tags[TagImportedFrom]
	if want := "s3://" + bucket + "/"; store != nil && strings.HasPrefix(src, want) {
		dir := strings.TrimSuffix(strings.TrimPrefix(src, want), "data/")
		sum, err := readSummary(ctx, store, dir+exportverify.SummaryName)
		if err == nil && sum.ExportTime != "" {
			t, err := parseStamp(sum.ExportTime)
			if err == nil {
				return t, "the exportTime of " + src + " (the " + TagImportedFrom + " tag)", nil
			}
		}
	}
	return time.Time{}, "", fmt.Errorf("cannot tell where %s's history starts: it has no %s tag, and no readable full-export manifest through its %s tag (%q); pass --since with the full export's exportTime", table, TagAppliedThrough, TagImportedFrom, src)
}

func tableTags(ctx context.Context, db ApplyDB, arn string) (map[string]string, error) {
	tags, err := ddbtags.List(ctx, db, arn)
	if err != nil {
		return nil, fmt.Errorf("reading the tags of %s: %w", arn, err)
	}
	return tags, nil
}

// ApplyIncrements applies incremental exports, oldest first, onto a table
// rebuilt from a full export: each change's NewImage is put, a change
// without one (a delete) deletes the key. Within an export each key takes its
// latest change by WriteTimestampMicros. Each export is verified first (the
// code of `export verify`). Each key is read (a consistent GetItem) and
// written only when it is not already as the export leaves it, with a
// condition that it is unchanged since read: a re-run after a crash and a
// duplicate shard running at once write no key twice. After an export is
// written, the checkpoint (the table's dynops:applied-through tag, or the
// shard's own) moves to its window's end, so a re-run skips it and an
// interrupted export is applied again (its written keys read as unchanged).
func ApplyIncrements(ctx context.Context, db ApplyDB, store exportverify.Store, start Start, incs []Increment, o ApplyOptions) (ApplyReport, error) {
	if o.Act == nil {
		o.Act = func(string, string, any) {}
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	sharded := o.Shard.Count > 1
	rep := ApplyReport{Table: o.Table, DryRun: !o.Apply, Since: start.Base, Through: start.Base}
	tag := TagAppliedThrough
	if sharded {
		rep.Shard, tag = o.Shard.String(), ShardTag(o.Shard)
	}
	var todo []Increment
	for _, inc := range incs {
		if !inc.To.After(start.Base) {
			rep.Increments = append(rep.Increments, IncrementResult{Increment: inc, Skipped: true})
			continue
		}
		todo = append(todo, inc)
	}
	if err := CheckChain(todo, start.Base); err != nil {
		return rep, err
	}
	keyNames, err := tableKeyNames(ctx, db, o.Table)
	if err != nil {
		return rep, err
	}
	if len(keyNames) == 0 {
		return rep, fmt.Errorf("%s: DescribeTable gave no key schema", o.Table)
	}
	planned := map[string]change{} // a dry run's plan: each key's last change of the chain
	var order []string
	for _, inc := range todo {
		res := IncrementResult{Increment: inc}
		if _, err := verifyIncrement(ctx, store, inc); err != nil {
			return rep, err
		}
		changes, err := readChanges(ctx, store, inc)
		if err != nil {
			return rep, err
		}
		if changes, err = ofShard(changes, keyNames, o.Shard); err != nil {
			return rep, err
		}
		for _, c := range changes {
			if c.image != nil {
				res.Puts++
			} else {
				res.Deletes++
			}
		}
		if !o.Apply {
			rep.Increments = append(rep.Increments, res)
			for _, c := range changes {
				id, err := ddbjson.EncodeItem(c.keys)
				if err != nil {
					return rep, err
				}
				if _, seen := planned[string(id)]; !seen {
					order = append(order, string(id))
				}
				planned[string(id)] = c
			}
			continue
		}
		if sharded {
			// A duplicate of this shard may have applied it meanwhile.
			if cp, err := shardCheckpoint(ctx, db, start, o.Shard); err != nil || !cp.Before(inc.To) {
				if err != nil {
					return rep, err
				}
				res.Skipped, rep.Through = true, cp
				rep.Increments = append(rep.Increments, res)
				continue
			}
		}
		o.Act(audit.ActExportApply, o.Table, map[string]any{"export_arn": inc.ExportArn, "dir": inc.Dir, "from": inc.From, "to": inc.To, "puts": res.Puts, "deletes": res.Deletes, "shard": rep.Shard})
		res.Written, res.Unchanged, err = writeChanges(ctx, db, o, keyNames, inc, changes)
		if err != nil {
			return rep, fmt.Errorf("applying %s to %s (re-run to resume: %s stays at %s): %w", inc.Dir, o.Table, tag, stamp(rep.Through), err)
		}
		if err := moveCheckpoint(ctx, db, start.Arn, o.Table, tag, inc.To, sharded); err != nil {
			if errors.Is(err, errNotMoved) {
				return rep, fmt.Errorf("%s is applied but the checkpoint was not moved (a re-run applies it again, harmlessly): %w", inc.Dir, err)
			}
			return rep, err
		}
		rep.Through = inc.To
		o.Act(audit.ActExportAppliedThrough, o.Table, map[string]any{"through": stamp(inc.To), "tag": tag, "written": res.Written, "unchanged": res.Unchanged})
		rep.Increments = append(rep.Increments, res)
	}
	if o.Planned != nil && o.Current != nil {
		for _, id := range order {
			c := planned[id]
			cur, err := o.Current(ctx, c.keys)
			if err != nil {
				return rep, fmt.Errorf("reading an item of %s for the plan: %w", o.Table, err)
			}
			o.Planned(c.keys, cur, c.image)
		}
	}
	if o.Apply && sharded {
		end := start.Base
		if len(incs) > 0 && incs[len(incs)-1].To.After(end) {
			end = incs[len(incs)-1].To
		}
		st, err := finishShards(ctx, db, start.Arn, o.Table, o.Shard, start.Whole, end, o.Act)
		rep.Shards = &st
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// shardCheckpoint reads where shard sh is now.
func shardCheckpoint(ctx context.Context, db ApplyDB, start Start, sh engine.Shard) (time.Time, error) {
	tags, err := tableTags(ctx, db, start.Arn)
	if err != nil {
		return time.Time{}, err
	}
	whole, err := wholeCheckpoint(tags, start.Whole)
	if err != nil {
		return time.Time{}, err
	}
	cp, _, err := checkpointOf(tags, sh, whole)
	return cp, err
}

// ofShard keeps the changes of shard sh's keys (all of them without a shard).
func ofShard(changes []change, keyNames []string, sh engine.Shard) ([]change, error) {
	if sh.Count <= 1 {
		return changes, nil
	}
	out := changes[:0]
	for _, c := range changes {
		k, err := tablediff.EncodeKey(c.keys, keyNames)
		if err != nil {
			return nil, fmt.Errorf("a key of the exports: %w", err)
		}
		if tablediff.KeyShard(k, sh.Count) == sh.Index {
			out = append(out, c)
		}
	}
	return out, nil
}

// applyAttempts bounds the conditional writes of one key that another
// writer keeps changing.
const applyAttempts = 5

// writeChanges writes an export's changes, o.Workers keys at once, each
// only when it is not already as the export leaves it.
func writeChanges(ctx context.Context, db ApplyDB, o ApplyOptions, keyNames []string, inc Increment, changes []change) (written, unchanged int, err error) {
	w := capacity.Items(db, o.Table, o.WriteBudget)
	var nw, nu atomic.Int64
	var mu sync.Mutex
	done := 0
	work := make(chan change)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(work)
		for _, c := range changes {
			select {
			case work <- c:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	for range o.Workers {
		g.Go(func() error {
			for c := range work {
				wrote, err := applyOne(gctx, db, w, o.Table, keyNames, c)
				if err != nil {
					return err
				}
				if wrote {
					nw.Add(1)
				} else {
					nu.Add(1)
				}
				if o.Progress != nil {
					mu.Lock()
					done++
					o.Progress(inc, done, len(changes))
					mu.Unlock()
				}
			}
			return nil
		})
	}
	err = g.Wait()
	return int(nw.Load()), int(nu.Load()), err
}

// applyOne reads a key (consistently) and, unless it is already as c leaves
// it, puts c's image or deletes the key, on condition that the item is
// unchanged since read (repair's condition; an item too wide for one is
// written without). A condition that fails (a duplicate shard wrote it
// first) reads the key again. wrote is false for a key left unchanged.
func applyOne(ctx context.Context, db ApplyDB, w capacity.ItemWriter, table string, keyNames []string, c change) (wrote bool, err error) {
	for range applyAttempts {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: c.keys, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return false, fmt.Errorf("reading an item of %s: %w", table, err)
		}
		cur := out.Item
		if len(cur) == 0 {
			cur = nil
		}
		if (repair.Lock{}).Same(cur, c.image) {
			return false, nil
		}
		var cond *string
		expr, names, values, cerr := repair.UnchangedCondition(cur, keyNames)
		if cerr == nil {
			cond = &expr
		}
		if c.image != nil {
			_, err = w.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: c.image,
				ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
		} else {
			_, err = w.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: c.keys,
				ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
		}
		var ccf *types.ConditionalCheckFailedException
		switch {
		case errors.As(err, &ccf):
			continue
		case err != nil:
			return false, fmt.Errorf("writing an item of %s: %w", table, err)
		}
		return true, nil
	}
	return false, fmt.Errorf("an item of %s changed under each of %d conditional writes: is something else writing the table?", table, applyAttempts)
}

func verifyIncrement(ctx context.Context, store exportverify.Store, inc Increment) (exportverify.Report, error) {
	rep, err := exportverify.Verify(ctx, store, inc.Dir+"/", exportverify.Options{})
	if err != nil {
		return rep, fmt.Errorf("verifying %s before applying it: %w", store.Describe(inc.Dir), err)
	}
	if !rep.OK {
		var problems []string
		for _, ex := range rep.Exports {
			problems = append(problems, ex.Problems...)
		}
		return rep, fmt.Errorf("%w, nothing of it was applied: %s\n  - %s", ErrExportDamaged, store.Describe(inc.Dir), strings.Join(problems, "\n  - "))
	}
	return rep, nil
}

// change is the latest change of one key in an export.
type change struct {
	keys   map[string]types.AttributeValue
	image  map[string]types.AttributeValue // nil: deleted
	micros int64
}

type incrementalLine struct {
	Metadata struct {
		WriteTimestampMicros json.RawMessage `json:"WriteTimestampMicros"`
	} `json:"Metadata"`
	Keys     json.RawMessage `json:"Keys"`
	NewImage json.RawMessage `json:"NewImage"`
	OldImage json.RawMessage `json:"OldImage"`
}

// lineChange is one line of an incremental export, decoded: id is the
// encoded key (attribute names sorted), old and image nil when absent.
type lineChange struct {
	change
	id  string
	old map[string]types.AttributeValue
}

// eachChange reads an export's data files (those its manifest lists) and
// calls fn with every line, decoded.
func eachChange(ctx context.Context, store exportverify.Store, inc Increment, fn func(lineChange) error) error {
	filesKey := inc.Dir + "/" + exportverify.FilesName
	if inc.summary.ManifestFilesS3Key != "" {
		if k, err := exportverify.Resolve(ctx, store, inc.summary, inc.summary.ManifestFilesS3Key); err == nil {
			filesKey = k
		}
	}
	body, err := store.Open(ctx, filesKey)
	if err != nil {
		return err
	}
	var keys []string
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		var e exportverify.FileEntry
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			body.Close()
			return fmt.Errorf("%s: %w", store.Describe(filesKey), err)
		}
		keys = append(keys, e.DataFileS3Key)
	}
	body.Close()
	if err := sc.Err(); err != nil {
		return err
	}
	for _, listed := range keys {
		k, err := exportverify.Resolve(ctx, store, inc.summary, listed)
		if err != nil {
			return err
		}
		r, err := store.Open(ctx, k)
		if err != nil {
			return err
		}
		err = exportverify.EachLine(r, func(line []byte) error {
			var l incrementalLine
			if err := json.Unmarshal(line, &l); err != nil {
				return err
			}
			if len(l.Keys) == 0 {
				return errors.New(`no "Keys": not an incremental export line`)
			}
			micros, err := ddbjson.Micros(l.Metadata.WriteTimestampMicros)
			if err != nil {
				return err
			}
			c := lineChange{change: change{micros: micros}}
			if c.keys, err = ddbjson.DecodeItem(l.Keys); err != nil {
				return fmt.Errorf("Keys: %w", err)
			}
			if len(l.NewImage) > 0 && string(l.NewImage) != "null" {
				if c.image, err = ddbjson.DecodeItem(l.NewImage); err != nil {
					return fmt.Errorf("NewImage: %w", err)
				}
			}
			if len(l.OldImage) > 0 && string(l.OldImage) != "null" {
				if c.old, err = ddbjson.DecodeItem(l.OldImage); err != nil {
					return fmt.Errorf("OldImage: %w", err)
				}
			}
			names := make([]string, 0, len(c.keys))
			for n := range c.keys {
				names = append(names, n)
			}
			sort.Strings(names)
			id, err := tablediff.EncodeKey(c.keys, names)
			if err != nil {
				return err
			}
			c.id = string(id)
			return fn(c)
		})
		r.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", store.Describe(k), err)
		}
	}
	return nil
}

// readChanges keeps each key's latest change in an export, ordered by
// WriteTimestampMicros.
func readChanges(ctx context.Context, store exportverify.Store, inc Increment) ([]change, error) {
	latest := map[string]change{}
	err := eachChange(ctx, store, inc, func(c lineChange) error {
		if prev, ok := latest[c.id]; !ok || c.micros >= prev.micros {
			latest[c.id] = c.change
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]change, 0, len(latest))
	for _, c := range latest {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].micros < out[j].micros })
	return out, nil
}
