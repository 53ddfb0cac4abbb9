package migrate

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/migrate/routes"
	"github.com/dynops/dynops/internal/tablediff"
)

// TableAttribute is the pseudo key attribute verify adds to every item: the
// destination table, so an item in the wrong table is a difference.
const TableAttribute = "dynops_table"

// VerifyOptions of a verify.
type VerifyOptions struct {
	Input
	Segments   int // parallel Scan segments per table (default 4)
	SampleSize int // keys of each kind to list (default 10)
	TempDir    string
	// Shard, with a Count above 1, compares only the keys whose key hash
	// (tablediff.KeyShard of the comparison key: primary key and
	// destination table) is that shard's; unmatched and untransformable
	// source items count in the shard of their source key. N shards'
	// results combine (CombineVerify) into the one verify's.
	Shard engine.Shard
}

// VerifyResult is the comparison of the routed source with the destinations.
type VerifyResult struct {
	*tablediff.Report
	// Unmatched source items no rule routes (left behind, not compared).
	Unmatched int64 `json:"unmatched_in_source"`
	// Untransformable source items their route cannot transform (left
	// behind by the backfill as unmatched ones are, not compared).
	Untransformable int64 `json:"untransformable_in_source"`
	// Shard is the part of the keys compared (--shard I/N), "" for all.
	Shard string `json:"shard,omitempty"`
}

// errStop ends a scan early.
var errStop = errors.New("stop")

// scanTable reads table with parallel segmented Scans (following
// LastEvaluatedKey, DDB-API-03), calling fn for every item (concurrently
// from the segments). fn returning errStop ends the scan without error.
// limit > 0 caps the items per page (a sample reads only what it needs).
func scanTable(ctx context.Context, db DynamoDB, table string, segments int, consistent bool, limit int32, fn func(map[string]types.AttributeValue) error) error {
	g, gctx := errgroup.WithContext(ctx)
	// Once a segment has failed (or ctx ended), no further segment starts.
	for seg := 0; seg < segments && gctx.Err() == nil; seg++ {
		g.Go(func() error {
			in := &dynamodb.ScanInput{TableName: &table, Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments)),
				ConsistentRead: aws.Bool(consistent)}
			if limit > 0 {
				in.Limit = aws.Int32(limit)
			}
			for {
				out, err := db.Scan(gctx, in)
				if err != nil {
					return fmt.Errorf("scanning %s segment %d/%d: %w", table, seg, segments, err)
				}
				for _, item := range out.Items {
					if err := fn(item); err != nil {
						return err
					}
				}
				if len(out.LastEvaluatedKey) == 0 {
					return nil
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
		})
	}
	err := g.Wait()
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// Verify compares the source, routed and transformed, with the union of the
// destinations, with table diff's bucketed checksums: the key of an item is
// its primary key plus its destination table, the checksum covers every
// attribute but the catch-up's sequence number.
func Verify(ctx context.Context, db DynamoDB, o VerifyOptions) (*VerifyResult, error) {
	if o.Segments <= 0 {
		o.Segments = 4
	}
	src, err := ReadSource(ctx, db, o.Source, o.Routes, false)
	if err != nil {
		return nil, err
	}
	checks, err := CheckDestinations(ctx, db, src, o.Routes, false, false)
	if err != nil {
		return nil, err
	}
	if p := Problems(checks); len(p) > 0 {
		return nil, &InputError{p}
	}
	var unmatched, untransformable atomic.Int64
	keyNames := append(append([]string{}, o.Routes.SourceKey...), TableAttribute)
	// mine: is the item's key (of names) this shard's? Every key is
	// without a shard.
	mine := func(item map[string]types.AttributeValue, names []string) (bool, error) {
		if o.Shard.Count <= 1 {
			return true, nil
		}
		k, err := tablediff.EncodeKey(item, names)
		if err != nil {
			return false, err
		}
		return tablediff.KeyShard(k, o.Shard.Count) == o.Shard.Index, nil
	}
	source := []tablediff.Feed{func(ctx context.Context, emit func(map[string]types.AttributeValue) error) error {
		return scanTable(ctx, db, o.Source, o.Segments, true, 0, func(item map[string]types.AttributeValue) error {
			rt := o.Routes.Find(item)
			var out map[string]types.AttributeValue
			var err error
			if rt != nil {
				out, err = rt.Transform(item)
			}
			if rt == nil || err != nil {
				if ok, kerr := mine(item, o.Routes.SourceKey); kerr != nil || !ok {
					return kerr
				}
				if rt == nil {
					unmatched.Add(1)
				} else {
					untransformable.Add(1)
				}
				return nil
			}
			out[TableAttribute] = &types.AttributeValueMemberS{Value: rt.Table}
			if ok, err := mine(out, keyNames); err != nil || !ok {
				return err
			}
			return emit(out)
		})
	}}
	var target []tablediff.Feed
	for _, table := range o.Routes.Tables() {
		target = append(target, func(ctx context.Context, emit func(map[string]types.AttributeValue) error) error {
			return scanTable(ctx, db, table, o.Segments, true, 0, func(item map[string]types.AttributeValue) error {
				delete(item, routes.SeqAttribute)
				item[TableAttribute] = &types.AttributeValueMemberS{Value: table}
				if ok, err := mine(item, keyNames); err != nil || !ok {
					return err
				}
				return emit(item)
			})
		})
	}
	rep, err := tablediff.CompareFeeds(ctx, tablediff.FeedOptions{Source: o.Source, Target: fmt.Sprintf("%d destination tables", len(o.Routes.Tables())),
		KeyNames: keyNames, ItemsHint: src.ItemCount, SampleSize: o.SampleSize, TempDir: o.TempDir}, source, target)
	if err != nil {
		return nil, err
	}
	rep.Segments = o.Segments
	res := &VerifyResult{Report: rep, Unmatched: unmatched.Load(), Untransformable: untransformable.Load()}
	if o.Shard.Count > 1 {
		res.Shard = o.Shard.String()
	}
	return res, nil
}
