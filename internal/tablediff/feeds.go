package tablediff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"
)

// Feed produces the items of one side of a comparison that is not simply one
// table: e.g. a table's items after a transformation, or several tables. It
// calls emit for each item; emit is safe for concurrent use.
type Feed func(ctx context.Context, emit func(item map[string]types.AttributeValue) error) error

// FeedOptions of CompareFeeds.
type FeedOptions struct {
	Source, Target string // names for the report
	KeyNames       []string
	Buckets        int   // 0: sized from ItemsHint like Diff
	ItemsHint      int64 // the larger side's approximate item count
	SampleSize     int   // default 10
	TempDir        string
}

// CompareFeeds compares two sides given as feeds with Diff's design: every
// item is reduced to its key (KeyNames, canonical JSON) and checksum, spilled
// to on-disk buckets by key hash, and the buckets are compared one at a time.
// All feeds of a side run in parallel.
func CompareFeeds(ctx context.Context, opts FeedOptions, source, target []Feed) (*Report, error) {
	start := time.Now()
	if opts.Buckets <= 0 {
		opts.Buckets = bucketsFor(opts.ItemsHint)
	}
	if opts.SampleSize <= 0 {
		opts.SampleSize = 10
	}
	dir, err := os.MkdirTemp(opts.TempDir, "dynops-compare-")
	if err != nil {
		return nil, fmt.Errorf("creating spill dir: %w", err)
	}
	defer os.RemoveAll(dir)
	rep := &Report{Source: opts.Source, Target: opts.Target, KeyNames: opts.KeyNames, Buckets: opts.Buckets,
		Sample: Sample{OnlyInSource: []json.RawMessage{}, OnlyInTarget: []json.RawMessage{}, Changed: []json.RawMessage{}}}
	src := newSpill(filepath.Join(dir, "source"), opts.Buckets)
	dst := newSpill(filepath.Join(dir, "target"), opts.Buckets)
	var srcN, dstN atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	run := func(feeds []Feed, sp *spill, n *atomic.Int64) {
		for _, feed := range feeds {
			g.Go(func() error {
				return feed(gctx, func(item map[string]types.AttributeValue) error {
					key, err := EncodeKey(item, opts.KeyNames)
					if err != nil {
						return err
					}
					n.Add(1)
					return sp.add(key, Sum(item, nil))
				})
			})
		}
	}
	run(source, src, &srcN)
	run(target, dst, &dstN)
	err = g.Wait()
	if cerr := errors.Join(src.close(), dst.close()); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	rep.SourceItems, rep.TargetItems = srcN.Load(), dstN.Load()
	for b := 0; b < opts.Buckets; b++ {
		if err := compareBucket(src.path(b), dst.path(b), rep, nil, opts.SampleSize); err != nil {
			return nil, err
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	if rep.Seconds > 0 {
		rep.ItemsPerSec = float64(rep.SourceItems+rep.TargetItems) / rep.Seconds
	}
	return rep, nil
}
