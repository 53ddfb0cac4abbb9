package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/tablediff"
)

// ErrShardResults: the shard results given cannot be combined (a shard
// missing or given twice, results of another verify).
var ErrShardResults = errors.New("cannot combine these verify results")

// CombineVerify adds up the results of the N shards of one verify (each
// shard exactly once) into the result one verify gives: the counts add up,
// and each kind's sample is the first sampleSize keys in the one verify's
// order (bucket, then key: each shard's sample holds the first of its own
// keys in that order, so the merged first ones are among them).
func CombineVerify(results []*VerifyResult, sampleSize int) (*VerifyResult, error) {
	if len(results) == 0 {
		return nil, fmt.Errorf("%w: no result given", ErrShardResults)
	}
	if sampleSize <= 0 {
		sampleSize = 10
	}
	first := results[0]
	n := 0
	seen := map[int]bool{}
	for _, r := range results {
		sh, err := engine.ParseShard(r.Shard)
		if r.Shard == "" || err != nil {
			return nil, fmt.Errorf("%w: a result has no shard (%q): give the -o json results of `migrate verify --shard I/N`", ErrShardResults, r.Shard)
		}
		if n == 0 {
			n = sh.Count
		}
		switch {
		case sh.Count != n:
			return nil, fmt.Errorf("%w: shard %s is of %d shards, shard %s of %d", ErrShardResults, r.Shard, sh.Count, first.Shard, n)
		case seen[sh.Index]:
			return nil, fmt.Errorf("%w: shard %s is given twice", ErrShardResults, r.Shard)
		case r.Source != first.Source || r.Target != first.Target || r.Buckets != first.Buckets || strings.Join(r.KeyNames, ",") != strings.Join(first.KeyNames, ","):
			return nil, fmt.Errorf("%w: shard %s compared %s with %s (%d buckets), shard %s %s with %s (%d buckets): results of another verify",
				ErrShardResults, r.Shard, r.Source, r.Target, r.Buckets, first.Shard, first.Source, first.Target, first.Buckets)
		}
		seen[sh.Index] = true
	}
	var missing []string
	for i := range n {
		if !seen[i] {
			missing = append(missing, engine.Shard{Index: i, Count: n}.String())
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: shard(s) %s of %d missing: run them and give every result", ErrShardResults, strings.Join(missing, ", "), n)
	}
	rep := *first.Report
	rep.KeyNames = append([]string{}, first.KeyNames...)
	rep.SourceItems, rep.TargetItems, rep.Same, rep.OnlyInSource, rep.OnlyInTarget, rep.Changed, rep.Seconds = 0, 0, 0, 0, 0, 0, 0
	var onlySrc, onlyDst, changed []json.RawMessage
	out := &VerifyResult{Report: &rep}
	for _, r := range results {
		rep.SourceItems += r.SourceItems
		rep.TargetItems += r.TargetItems
		rep.Same += r.Same
		rep.OnlyInSource += r.OnlyInSource
		rep.OnlyInTarget += r.OnlyInTarget
		rep.Changed += r.Changed
		rep.Seconds = max(rep.Seconds, r.Seconds)
		out.Unmatched += r.Unmatched
		out.Untransformable += r.Untransformable
		onlySrc, onlyDst, changed = append(onlySrc, r.Sample.OnlyInSource...), append(onlyDst, r.Sample.OnlyInTarget...), append(changed, r.Sample.Changed...)
	}
	if rep.Seconds > 0 {
		rep.ItemsPerSec = float64(rep.SourceItems+rep.TargetItems) / rep.Seconds
	}
	rep.Sample = tablediff.Sample{OnlyInSource: firstKeys(onlySrc, rep.Buckets, sampleSize),
		OnlyInTarget: firstKeys(onlyDst, rep.Buckets, sampleSize), Changed: firstKeys(changed, rep.Buckets, sampleSize)}
	return out, nil
}

// firstKeys are the first n keys in a verify's order: by bucket (the key
// hash mod buckets), then by key.
// Keys read back from an indented JSON document are compacted first: the
// hash is of the key's compact bytes.
func firstKeys(keys []json.RawMessage, buckets, n int) []json.RawMessage {
	for i, k := range keys {
		var b bytes.Buffer
		if json.Compact(&b, k) == nil {
			keys[i] = b.Bytes()
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		bi, bj := tablediff.KeyShard(keys[i], buckets), tablediff.KeyShard(keys[j], buckets)
		if bi != bj {
			return bi < bj
		}
		return string(keys[i]) < string(keys[j])
	})
	out := []json.RawMessage{}
	return append(out, keys[:min(n, len(keys))]...)
}
