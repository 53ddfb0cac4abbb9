package tablediff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/shardrun"
)

// BucketResult is a reduce shard's result for one bucket
// (reduce/bucket-BBBB.json): its counts, its first keys of each kind (in key
// order, as Diff samples them) and how many keys its keys part holds.
type BucketResult struct {
	Bucket       int    `json:"bucket"`
	Same         int64  `json:"same"`
	OnlyInSource int64  `json:"only_in_source"`
	OnlyInTarget int64  `json:"only_in_target"`
	Changed      int64  `json:"changed"`
	Sample       Sample `json:"sample"`
	Keys         int64  `json:"keys"`
}

func bucketResultObject(b int) string { return fmt.Sprintf("reduce/bucket-%04d.json", b) }
func keysPartObject(b int) string     { return fmt.Sprintf("reduce/keys-%04d.jsonl", b) }

// mapMarkers reads every map shard's marker; a missing one is an error
// naming the shard to run again.
func mapMarkers(ctx context.Context, run *shardrun.Run, p *Plan) ([]MapDone, error) {
	out := make([]MapDone, p.Shards)
	var missing []string
	for i := range p.Shards {
		data, err := run.Get(ctx, mapDoneObject(i))
		if errors.Is(err, shardrun.ErrNotFound) {
			missing = append(missing, fmt.Sprintf("%d/%d", i, p.Shards))
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &out[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", run.Where(mapDoneObject(i)), err)
		}
		for _, side := range shardSides {
			if len(out[i].Records[side]) != p.Buckets {
				return nil, fmt.Errorf("%s has %d buckets of %s, the plan %d: the run's objects are not this plan's", run.Where(mapDoneObject(i)), len(out[i].Records[side]), side, p.Buckets)
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("map shard(s) %s of %s have not finished (no %s): run them again with `dynops shard run --run %s --stage map --shard I/N`",
			strings.Join(missing, ", "), run.URI(), "map/done/shard-IIII.json", run.URI())
	}
	return out, nil
}

// ReduceShard runs reduce shard sh of plan p: for each bucket b with
// b mod N == I it gathers both sides' records from every map shard,
// compares them as Diff does, and writes the bucket's keys part and then
// its result.
func ReduceShard(ctx context.Context, run *shardrun.Run, p *Plan, sh engine.Shard, tempDir string) error {
	if sh.Count != p.Shards {
		return fmt.Errorf("shard %s, but the plan %s has %d shards: give --shard I/%d", sh, run.Where(PlanName), p.Shards, p.Shards)
	}
	markers, err := mapMarkers(ctx, run, p)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(tempDir, "dynops-reduce-")
	if err != nil {
		return fmt.Errorf("creating spill dir: %w", err)
	}
	defer os.RemoveAll(dir)
	for b := sh.Index; b < p.Buckets; b += sh.Count {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := reduceBucket(ctx, run, p, markers, b, dir); err != nil {
			return fmt.Errorf("bucket %d: %w", b, err)
		}
	}
	return nil
}

func reduceBucket(ctx context.Context, run *shardrun.Run, p *Plan, markers []MapDone, b int, dir string) error {
	paths := map[string]string{}
	for _, side := range shardSides {
		var all []byte
		for i, m := range markers {
			if m.Records[side][b] == 0 {
				continue
			}
			data, err := run.Get(ctx, mapObject(side, b, i))
			if err != nil {
				return err
			}
			all = append(all, data...)
		}
		paths[side] = filepath.Join(dir, side)
		if err := os.WriteFile(paths[side], all, 0o600); err != nil {
			return fmt.Errorf("writing spill bucket: %w", err)
		}
	}
	rep := &Report{Sample: Sample{OnlyInSource: []json.RawMessage{}, OnlyInTarget: []json.RawMessage{}, Changed: []json.RawMessage{}}}
	keysPath := filepath.Join(dir, "keys.jsonl")
	keys, err := createKeys(keysPath, true, p.keysHeader(p.Created))
	if err != nil {
		return err
	}
	err = compareBucket(paths["source"], paths["target"], rep, keys, p.SampleSize)
	if cerr := keys.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	res := BucketResult{Bucket: b, Same: rep.Same, OnlyInSource: rep.OnlyInSource, OnlyInTarget: rep.OnlyInTarget, Changed: rep.Changed,
		Sample: rep.Sample, Keys: rep.Differences()}
	if res.Keys > 0 {
		data, err := os.ReadFile(keysPath)
		if err != nil {
			return fmt.Errorf("reading keys part: %w", err)
		}
		if err := run.Put(ctx, keysPartObject(b), data); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return run.Put(ctx, bucketResultObject(b), data)
}

// keysHeader is the header line of the run's keys files.
func (p *Plan) keysHeader(t time.Time) Header {
	return Header{Source: p.Source.Name, Target: p.Target.Name, KeyNames: p.KeyNames, Attributes: p.Attributes, Time: t.UTC()}
}

// CollectOptions of Collect.
type CollectOptions struct {
	// KeysOut, when set, receives every differing key (the parts in bucket
	// order: the file Diff writes); KeysForce lets it overwrite a file.
	KeysOut   string
	KeysForce bool
	Now       func() time.Time
}

// Collect adds up a finished run's buckets into Diff's report (counts,
// samples in the same order) and assembles the keys file.
func Collect(ctx context.Context, run *shardrun.Run, p *Plan, o CollectOptions) (*Report, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	markers, err := mapMarkers(ctx, run, p)
	if err != nil {
		return nil, err
	}
	rep := &Report{Source: p.Source.Name, Target: p.Target.Name, KeyNames: p.KeyNames, Attributes: p.Attributes,
		Segments: max(p.Source.Segments, p.Target.Segments), Buckets: p.Buckets, KeysOut: o.KeysOut,
		Sample: Sample{OnlyInSource: []json.RawMessage{}, OnlyInTarget: []json.RawMessage{}, Changed: []json.RawMessage{}}}
	seen := map[string]int64{}
	for _, m := range markers {
		rep.SourceItems += m.Items["source"]
		rep.TargetItems += m.Items["target"]
		for a, n := range m.Seen {
			seen[a] += n
		}
	}
	var absent []string
	for _, a := range p.Attributes {
		if seen[a] == 0 {
			absent = append(absent, a)
		}
	}
	if len(absent) > 0 && rep.SourceItems+rep.TargetItems > 0 {
		return nil, fmt.Errorf("%w: --attributes %s: no item of %s or %s has it; check the name (a nested attribute is a document path: profile.name for a map member, tags[0] for a list element)",
			ErrAttributeAbsent, strings.Join(absent, ","), p.Source.Name, p.Target.Name)
	}
	var keys *keysWriter
	if o.KeysOut != "" {
		if keys, err = createKeys(o.KeysOut, o.KeysForce, p.keysHeader(o.Now())); err != nil {
			return nil, err
		}
	}
	err = collectBuckets(ctx, run, p, rep, keys)
	if keys != nil {
		if cerr := keys.close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, err
	}
	return rep, nil
}

func collectBuckets(ctx context.Context, run *shardrun.Run, p *Plan, rep *Report, keys *keysWriter) error {
	appendSample := func(dst *[]json.RawMessage, src []json.RawMessage) {
		for _, k := range src {
			if len(*dst) < p.SampleSize {
				*dst = append(*dst, k)
			}
		}
	}
	for b := range p.Buckets {
		data, err := run.Get(ctx, bucketResultObject(b))
		if errors.Is(err, shardrun.ErrNotFound) {
			return fmt.Errorf("bucket %d has no result (reduce shard %d/%d has not finished): run it again with `dynops shard run --run %s --stage reduce --shard %d/%d`",
				b, b%p.Shards, p.Shards, run.URI(), b%p.Shards, p.Shards)
		}
		if err != nil {
			return err
		}
		var r BucketResult
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", run.Where(bucketResultObject(b)), err)
		}
		rep.Same += r.Same
		rep.OnlyInSource += r.OnlyInSource
		rep.OnlyInTarget += r.OnlyInTarget
		rep.Changed += r.Changed
		appendSample(&rep.Sample.OnlyInSource, r.Sample.OnlyInSource)
		appendSample(&rep.Sample.OnlyInTarget, r.Sample.OnlyInTarget)
		appendSample(&rep.Sample.Changed, r.Sample.Changed)
		if keys == nil || r.Keys == 0 {
			continue
		}
		part, err := run.Get(ctx, keysPartObject(b))
		if err != nil {
			return err
		}
		var n int64
		if _, err := readKeys(bytes.NewReader(part), run.Where(keysPartObject(b)), func(k KeyRecord) error { n++; return keys.write(k) }); err != nil {
			return err
		}
		if n != r.Keys {
			return fmt.Errorf("%s holds %d keys, its result says %d: the part is damaged; run reduce shard %d/%d again", run.Where(keysPartObject(b)), n, r.Keys, b%p.Shards, p.Shards)
		}
	}
	return nil
}
