package export

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/engine"
)

// A sharded apply (export apply --shard I/N) writes only the keys whose key
// hash is shard I's (tablediff.KeyShard, as revert and repair shard), and
// keeps a checkpoint of its own: the table's tag
// dynops:applied-through:shard-I-of-N. A shard continues from the later of
// its tag and the table's dynops:applied-through. When a shard finds every
// shard of its run through the end of its chain, it moves
// dynops:applied-through there (read back): the whole apply is complete only
// then. The shard tags stay (the operator's role removes no tag): a shard
// tag not past dynops:applied-through is done and ignored.

// MaxApplyShards bounds N of a sharded apply: a table takes 50 tags, and
// each shard holds one.
const MaxApplyShards = 32

// ShardTag is the checkpoint tag of one shard of an apply.
func ShardTag(sh engine.Shard) string {
	return fmt.Sprintf("%s:shard-%d-of-%d", TagAppliedThrough, sh.Index, sh.Count)
}

var shardTagRE = regexp.MustCompile(`^dynops:applied-through:shard-(\d+)-of-(\d+)$`)

// ErrShardMix: the table has an apply in progress as another number of
// shards (or as shards, for an apply without --shard); mixing them would
// leave keys of no shard's checkpoint.
var ErrShardMix = errors.New("another apply of this table is in progress")

// shardCheckpoints reads the shard tags of tags: shard -> applied through.
func shardCheckpoints(tags map[string]string) (map[engine.Shard]time.Time, error) {
	out := map[engine.Shard]time.Time{}
	for k, v := range tags {
		m := shardTagRE.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		t, err := parseStamp(v)
		if err != nil {
			return nil, fmt.Errorf("tag %s: %w", k, err)
		}
		out[engine.Shard{Index: i, Count: n}] = t
	}
	return out, nil
}

// checkShardMix refuses an apply as count shards (1: not sharded) while the
// table has shard checkpoints of another count past its own checkpoint.
func checkShardMix(table string, tags map[string]string, whole time.Time, count int) error {
	cps, err := shardCheckpoints(tags)
	if err != nil {
		return err
	}
	var other []string
	otherCount := 0
	for sh, t := range cps {
		if t.After(whole) && sh.Count != count {
			other = append(other, fmt.Sprintf("%s=%s", ShardTag(sh), stamp(t)))
			otherCount = sh.Count
		}
	}
	if len(other) == 0 {
		return nil
	}
	sort.Strings(other)
	how := "without --shard"
	if count > 1 {
		how = fmt.Sprintf("as %d shards", count)
	}
	return fmt.Errorf("%w: %s is being applied as %d shards (%s, past the table's checkpoint %s), not %s: run the remaining shards with --shard I/%d and the same exports; once every shard is through, any apply may follow",
		ErrShardMix, table, otherCount, strings.Join(other, ", "), stamp(whole), how, otherCount)
}

// checkpointOf is where shard sh continues: the later of the table's
// checkpoint and its own tag.
func checkpointOf(tags map[string]string, sh engine.Shard, whole time.Time) (time.Time, bool, error) {
	if sh.Count <= 1 {
		return whole, false, nil
	}
	v, ok := tags[ShardTag(sh)]
	if !ok {
		return whole, false, nil
	}
	t, err := parseStamp(v)
	if err != nil {
		return whole, false, fmt.Errorf("tag %s: %w", ShardTag(sh), err)
	}
	if t.After(whole) {
		return t, true, nil
	}
	return whole, false, nil
}

// wholeCheckpoint is the table's dynops:applied-through, or base when it
// has none.
func wholeCheckpoint(tags map[string]string, base time.Time) (time.Time, error) {
	v := tags[TagAppliedThrough]
	if v == "" {
		return base, nil
	}
	t, err := parseStamp(v)
	if err != nil {
		return base, fmt.Errorf("tag %s: %w", TagAppliedThrough, err)
	}
	if t.After(base) {
		return t, nil
	}
	return base, nil
}

// ShardsStatus is where the shards of a sharded apply are.
type ShardsStatus struct {
	// Complete: every shard is through End, and the table's
	// dynops:applied-through says so (read back).
	Complete bool `json:"complete"`
	// End is the end of the chain this shard applied.
	End time.Time `json:"end"`
	// Waiting are the shards not yet through End (I/N).
	Waiting []string `json:"waiting_for_shards,omitempty"`
}

// finishShards checks the shards of sh's run against end: when every one is
// through it, the table's checkpoint moves there (read back).
func finishShards(ctx context.Context, db ApplyDB, arn, table string, sh engine.Shard, base, end time.Time, act func(string, string, any)) (ShardsStatus, error) {
	st := ShardsStatus{End: end}
	tags, err := tableTags(ctx, db, arn)
	if err != nil {
		return st, err
	}
	whole, err := wholeCheckpoint(tags, base)
	if err != nil {
		return st, err
	}
	for i := range sh.Count {
		s := engine.Shard{Index: i, Count: sh.Count}
		t, _, err := checkpointOf(tags, s, whole)
		if err != nil {
			return st, err
		}
		if t.Before(end) {
			st.Waiting = append(st.Waiting, s.String())
		}
	}
	if len(st.Waiting) > 0 {
		return st, nil
	}
	if whole.Before(end) {
		if err := moveCheckpoint(ctx, db, arn, table, TagAppliedThrough, end, true); err != nil {
			return st, fmt.Errorf("every shard is through %s but %s's %s was not moved (run any shard again to finish): %w", stamp(end), table, TagAppliedThrough, err)
		}
		act(audit.ActExportAppliedThrough, table, map[string]any{"through": stamp(end), "shards": sh.Count})
	}
	st.Complete = true
	return st, nil
}

// errNotMoved wraps a TagResource that failed: the checkpoint stays.
var errNotMoved = errors.New("the checkpoint was not moved")

// moveCheckpoint sets tag key to t and reads it back: exactly t, or with
// atLeast (a duplicate shard may have moved it further) t or later.
func moveCheckpoint(ctx context.Context, db ApplyDB, arn, table, key string, t time.Time, atLeast bool) error {
	if _, err := db.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: &arn,
		Tags: []types.Tag{{Key: aws.String(key), Value: aws.String(stamp(t))}}}); err != nil {
		return fmt.Errorf("%w: %w", errNotMoved, err)
	}
	tags, err := tableTags(ctx, db, arn)
	if err != nil {
		return err
	}
	got, err := parseStamp(tags[key])
	if err != nil || got.Before(t) || (!atLeast && !got.Equal(t)) {
		return fmt.Errorf("%s: the checkpoint reads back %q, not %s (tag %s)", table, tags[key], stamp(t), key)
	}
	return nil
}
