package tablediff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/shardrun"
)

// Sides of a sharded diff, as the run's object names spell them.
var shardSides = [2]string{"source", "target"}

// MapDone is a map shard's marker (map/done/shard-IIII.json), written after
// all its bucket objects: the items it read per side, the records of each
// bucket object it wrote (0: none written), and how many items had each
// listed attribute.
type MapDone struct {
	Shard   int              `json:"shard"`
	Shards  int              `json:"shards"`
	Items   map[string]int64 `json:"items"`
	Records map[string][]int `json:"records"`
	Seen    map[string]int64 `json:"seen,omitempty"`
}

func mapObject(side string, bucket, shard int) string {
	return fmt.Sprintf("map/%s/bucket-%04d/shard-%04d", side, bucket, shard)
}

func mapDoneObject(shard int) string { return fmt.Sprintf("map/done/shard-%04d.json", shard) }

// MapShard runs map shard sh of plan p: it reads the shard's Scan segments
// and export files of both sides, reduces each item to its key and
// checksum, and writes one object per side and bucket (records sorted by
// key: a retried shard writes the same bytes) and then its marker.
// open opens an export side (its URI as the plan names it); tempDir holds
// the shard's spill (default: the system temp dir).
func MapShard(ctx context.Context, db DynamoDB, run *shardrun.Run, p *Plan, sh engine.Shard, open func(uri string) (*exportverify.Export, error), tempDir string) (*MapDone, error) {
	if sh.Count != p.Shards {
		return nil, fmt.Errorf("shard %s, but the plan %s has %d shards: give --shard I/%d", sh, run.Where(PlanName), p.Shards, p.Shards)
	}
	dir, err := os.MkdirTemp(tempDir, "dynops-map-")
	if err != nil {
		return nil, fmt.Errorf("creating spill dir: %w", err)
	}
	defer os.RemoveAll(dir)
	done := &MapDone{Shard: sh.Index, Shards: sh.Count, Items: map[string]int64{}, Records: map[string][]int{}}
	seen := make(map[string]*atomic.Int64, len(p.Attributes))
	for _, a := range p.Attributes {
		seen[a] = new(atomic.Int64)
	}
	opts := Options{Attributes: p.Attributes, PageLimit: p.PageLimit, pages: newPageSlots(0)}
	spills := map[string]*spill{}
	counts := map[string]*atomic.Int64{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(p.ExportParallel, 1) * 2)
	for i, side := range []PlanSide{p.Source, p.Target} {
		name := shardSides[i]
		sp := newSpill(filepath.Join(dir, name), p.Buckets)
		n := new(atomic.Int64)
		spills[name], counts[name] = sp, n
		if side.Export != "" {
			e, err := open(side.Export)
			if err != nil {
				return nil, err
			}
			sum, _, err := e.ExportSummary(ctx)
			if err != nil {
				return nil, err
			}
			for f := sh.Index; f < len(side.Files); f += sh.Count {
				en := side.Files[f].FileEntry
				g.Go(func() error {
					return e.EachItemOfFile(gctx, sum, en, func(item map[string]types.AttributeValue) error {
						return record(item, p.KeyNames, p.Attributes, sp, n, seen)
					})
				})
			}
			continue
		}
		o := opts
		o.Segments = side.Segments
		for seg := sh.Index; seg < side.Segments; seg += sh.Count {
			g.Go(func() error {
				return scanSegment(gctx, db, o, side.Table, p.KeyNames, seg, sp, n, func() {}, seen)
			})
		}
	}
	err = g.Wait()
	for _, sp := range spills {
		if cerr := sp.close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, err
	}
	for _, name := range shardSides {
		done.Items[name] = counts[name].Load()
		recs := make([]int, p.Buckets)
		for b := range p.Buckets {
			data, n, err := sortedBucket(spills[name].path(b), filepath.Join(dir, "sorted", name, fmt.Sprint(b)))
			if err != nil {
				return nil, err
			}
			if n == 0 {
				continue
			}
			if err := run.Put(ctx, mapObject(name, b, sh.Index), data); err != nil {
				return nil, err
			}
			recs[b] = n
		}
		done.Records[name] = recs
	}
	if len(seen) > 0 {
		done.Seen = map[string]int64{}
		for a, n := range seen {
			done.Seen[a] = n.Load()
		}
	}
	data, err := json.MarshalIndent(done, "", "  ")
	if err != nil {
		return nil, err
	}
	return done, run.Put(ctx, mapDoneObject(sh.Index), data)
}

// record reduces one item to its key and checksum in sp, as scanSegment does.
func record(item map[string]types.AttributeValue, keyNames, attrs []string, sp *spill, n *atomic.Int64, seen map[string]*atomic.Int64) error {
	key, err := AppendKey(nil, item, keyNames)
	if err != nil {
		return err
	}
	if err := sp.add(key, Sum(item, attrs)); err != nil {
		return err
	}
	for _, a := range attrs {
		if _, ok := lookupAttr(item, a); ok {
			seen[a].Add(1)
		}
	}
	n.Add(1)
	return nil
}

// sortedBucket returns a spill bucket file's records sorted by key, in the
// spill's own encoding (written through a one-bucket spill in dir), and
// their number.
func sortedBucket(path, dir string) ([]byte, int, error) {
	type rec struct {
		key string
		sum [16]byte
	}
	var recs []rec
	if err := readBucket(path, func(k string, s [16]byte) { recs = append(recs, rec{k, s}) }); err != nil {
		return nil, 0, err
	}
	if len(recs) == 0 {
		return nil, 0, nil
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].key < recs[j].key })
	one := newSpill(dir, 1)
	for _, r := range recs {
		if err := one.add([]byte(r.key), r.sum); err != nil {
			return nil, 0, errors.Join(err, one.close())
		}
	}
	if err := one.close(); err != nil {
		return nil, 0, err
	}
	data, err := os.ReadFile(one.path(0))
	if err != nil {
		return nil, 0, fmt.Errorf("reading sorted bucket: %w", err)
	}
	return data, len(recs), nil
}
