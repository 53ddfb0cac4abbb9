package tablediff

// A sharded diff runs Diff's two phases as two stages of shards that
// exchange their work through a run's S3 prefix (internal/shardrun):
//
//	plan.json                                 the plan: sides, their units of work, buckets, shards
//	map/<side>/bucket-BBBB/shard-IIII         a map shard's records of one bucket (spill form, sorted by key)
//	map/done/shard-IIII.json                  the map shard's marker: items, records per bucket (written last)
//	reduce/keys-BBBB.jsonl                    a bucket's differing keys (a keys file: ReadKeys reads it)
//	reduce/bucket-BBBB.json                   a bucket's counts and samples (written last)
//
// Map shard I reads the Scan segments s of a table with s mod N == I
// (TotalSegments = N x segments per shard) and the export data files f
// (in manifest order) with f mod N == I; reduce shard I compares the buckets
// b with b mod N == I. Collect adds the buckets up in bucket order, so the
// report, its samples and the keys file are the single-process Diff's.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/shardrun"
)

// PlanName is the plan's object under the run's prefix.
const PlanName = "plan.json"

// Plan is a sharded diff: what each shard reads and where it writes.
// Everything but Created and the estimate follows from the inputs.
type Plan struct {
	Version        int      `json:"version"`
	Run            string   `json:"run"`
	Source         PlanSide `json:"source"`
	Target         PlanSide `json:"target"`
	KeyNames       []string `json:"key_names"`
	Attributes     []string `json:"attributes,omitempty"`
	PageLimit      int32    `json:"page_limit,omitempty"`
	Shards         int      `json:"shards"`
	Buckets        int      `json:"buckets"`
	SampleSize     int      `json:"sample_size"`
	ExportParallel int      `json:"export_parallel"`
	// Unverified is the driver's --unverified-exports reason: each map
	// shard vouches for the exports it reads again, with the same reason
	// (an export changed after the plan was written is refused there).
	Unverified string `json:"unverified_exports,omitempty"`
	// Created stamps the keys files the run writes (the same on a retry).
	Created  time.Time     `json:"created"`
	Estimate ShardEstimate `json:"estimate"`
}

// PlanSide is one side of the diff: a table read with Scan segments or an
// export read file by file.
type PlanSide struct {
	// Name is the table or the export's URI, as the report names it.
	Name   string `json:"name"`
	Table  string `json:"table,omitempty"`
	Export string `json:"export,omitempty"`
	// Segments is the Scan's TotalSegments (a table side).
	Segments int `json:"segments,omitempty"`
	// ReadUnitsPerShard is each map shard's share of the side's read
	// budget (0: none).
	ReadUnitsPerShard float64 `json:"read_units_per_shard,omitempty"`
	// Files are the export's data files as manifest-files.json lists them.
	Files []PlanFile `json:"files,omitempty"`
	// Items and Bytes: the export's (listed), or the table's (DynamoDB's
	// approximate ItemCount and TableSizeBytes, refreshed every ~6 h).
	Items int64 `json:"items"`
	Bytes int64 `json:"bytes"`
}

// PlanFile is one export data file and its size.
type PlanFile struct {
	exportverify.FileEntry
	Bytes int64 `json:"bytes"`
}

// ShardEstimate is what the run will cost beside capacity: task-hours at an
// assumed per-shard rate and S3 requests (upper bounds).
type ShardEstimate struct {
	Items                  int64   `json:"items"`
	Bytes                  int64   `json:"bytes"`
	ItemsPerSecondPerShard float64 `json:"items_per_second_per_shard"`
	TaskHours              float64 `json:"task_hours"`
	Minutes                float64 `json:"minutes"`
	S3Puts                 int64   `json:"s3_puts"`
	S3Gets                 int64   `json:"s3_gets"`
}

// AssumedShardRate is the items per second one shard is assumed to read,
// key and bucket for the task-hour estimate: a round figure below what one
// process measured on the emulator (docs/scale.md), not a measurement of
// AWS.
const AssumedShardRate = 20_000

// String is the estimate as the plan prints it.
func (e ShardEstimate) String() string {
	return fmt.Sprintf("shards: %d items (%d bytes) in all; about %.2f task-hours and %.0f min at %.0f items/s per shard (assumed); at most %d S3 PUTs and %d GETs",
		e.Items, e.Bytes, e.TaskHours, e.Minutes, e.ItemsPerSecondPerShard, e.S3Puts, e.S3Gets)
}

// NewPlan plans a diff of opts in shards shards: opts.Segments is the
// Scan segments per shard. now stamps it.
func NewPlan(ctx context.Context, db Describer, opts Options, shards int, run string, now time.Time) (*Plan, error) {
	if shards < 1 {
		return nil, fmt.Errorf("a sharded diff needs 1 shard or more, not %d", shards)
	}
	opts.setDefaults()
	for _, a := range opts.Attributes {
		if _, err := ParsePath(a); err != nil {
			return nil, err
		}
	}
	keyNames, err := keysAndBuckets(ctx, db, &opts)
	if err != nil {
		return nil, err
	}
	p := &Plan{Version: 1, Run: run, KeyNames: keyNames, Attributes: opts.Attributes, PageLimit: opts.PageLimit,
		Shards: shards, Buckets: opts.Buckets, SampleSize: opts.SampleSize, ExportParallel: opts.ExportParallel, Created: now.UTC()}
	for _, s := range []struct {
		side   *PlanSide
		name   string
		export *exportverify.Export
	}{{&p.Source, opts.Source, opts.SourceExport}, {&p.Target, opts.Target, opts.TargetExport}} {
		s.side.Name = s.name
		if s.export != nil {
			s.side.Export = s.export.URI
			if err := planExport(ctx, *s.export, s.side); err != nil {
				return nil, err
			}
			continue
		}
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.name)})
		if err != nil {
			return nil, fmt.Errorf("describing %s: %w", s.name, err)
		}
		s.side.Table, s.side.Segments = s.name, shards*opts.Segments
		s.side.Items, s.side.Bytes = aws.ToInt64(out.Table.ItemCount), aws.ToInt64(out.Table.TableSizeBytes)
	}
	p.Estimate = p.estimate()
	return p, nil
}

// setDefaults fills in what opts leaves at zero: 4 Scan segments, 10
// sample keys, 4 export files at once, the clock.
func (o *Options) setDefaults() {
	if o.Segments <= 0 {
		o.Segments = 4
	}
	if o.SampleSize <= 0 {
		o.SampleSize = 10
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ExportParallel <= 0 {
		o.ExportParallel = 4
	}
	if o.pages == nil {
		o.pages = newPageSlots(0)
	}
}

// keysAndBuckets reads the key of opts' sides (keysOf) and sizes the
// buckets from their item count when opts leaves them at 0.
func keysAndBuckets(ctx context.Context, db Describer, opts *Options) ([]string, error) {
	keyNames, count, err := keysOf(ctx, db, *opts)
	if err != nil {
		return nil, err
	}
	if opts.Buckets <= 0 {
		opts.Buckets = bucketsFor(count)
	}
	return keyNames, nil
}

// planExport lists the export's data files with their item counts (from
// manifest-files.json, which must add up to the summary) and sizes.
func planExport(ctx context.Context, e exportverify.Export, side *PlanSide) error {
	sum, entries, err := e.Files(ctx)
	if err != nil {
		return err
	}
	for _, en := range entries {
		key, err := exportverify.Resolve(ctx, e.Store, sum, en.DataFileS3Key)
		if err != nil {
			return fmt.Errorf("data file %s listed in %s of %s: %w", en.DataFileS3Key, exportverify.FilesName, e.URI, err)
		}
		obj, err := e.Store.Stat(ctx, key)
		if err != nil {
			return err
		}
		side.Files = append(side.Files, PlanFile{FileEntry: en, Bytes: obj.Size})
		side.Items += en.ItemCount
		side.Bytes += obj.Size
	}
	return nil
}

func (p *Plan) estimate() ShardEstimate {
	e := ShardEstimate{Items: p.Source.Items + p.Target.Items, Bytes: p.Source.Bytes + p.Target.Bytes, ItemsPerSecondPerShard: AssumedShardRate}
	n, b := int64(p.Shards), int64(p.Buckets)
	secs := float64(e.Items) / AssumedShardRate
	e.TaskHours = secs / 3600
	e.Minutes = secs / float64(n) / 60
	// map: one object per side, bucket and shard at most, and a marker;
	// reduce: a result and a keys part per bucket.
	e.S3Puts = 1 + 2*b*n + n + 2*b
	// map: each export file; reduce: every marker per reduce shard, every
	// map object; collect: markers, results and keys parts.
	e.S3Gets = int64(len(p.Source.Files)+len(p.Target.Files)) + n*n + 2*b*n + n + 2*b
	return e
}

// identity is the plan without what may differ between two plannings of
// the same run: the time and the tables' approximate sizes.
func (p Plan) identity() ([]byte, error) {
	p.Created, p.Estimate = time.Time{}, ShardEstimate{}
	for _, s := range []*PlanSide{&p.Source, &p.Target} {
		if s.Table != "" {
			s.Items, s.Bytes = 0, 0
		}
	}
	return json.Marshal(p)
}

// WritePlan writes p as the run's plan.json, once: when the run already has
// a plan, the same plan (but for its time and the tables' approximate
// sizes) is read back and returned, and a different one is refused.
func WritePlan(ctx context.Context, run *shardrun.Run, p *Plan) (*Plan, error) {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	created, err := run.PutNew(ctx, PlanName, data)
	if err != nil {
		return nil, err
	}
	if created {
		return p, nil
	}
	old, err := ReadPlan(ctx, run)
	if err != nil {
		return nil, err
	}
	a, err := old.identity()
	if err != nil {
		return nil, err
	}
	b, err := p.identity()
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(a, b) {
		return nil, fmt.Errorf("%w: %s holds a different plan (other tables, exports, flags or shard count): "+
			"give a new --run-id, or the same flags as that run to continue it", ErrPlanDiffers, run.Where(PlanName))
	}
	return old, nil
}

// ErrPlanDiffers: the run already has another plan (a refusal: nothing ran).
var ErrPlanDiffers = fmt.Errorf("the run has another plan")

// ReadPlan reads the run's plan.json.
func ReadPlan(ctx context.Context, run *shardrun.Run) (*Plan, error) {
	data, err := run.Get(ctx, PlanName)
	if err != nil {
		return nil, fmt.Errorf("the run's plan: %w (table diff --engine writes it before the first shard runs)", err)
	}
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s is not a plan of dynops table diff: %w", run.Where(PlanName), err)
	}
	if p.Version != 1 || p.Shards < 1 || p.Buckets < 1 || len(p.KeyNames) == 0 {
		return nil, fmt.Errorf("%s is not a plan of this dynops (version %d, %d shards, %d buckets)", run.Where(PlanName), p.Version, p.Shards, p.Buckets)
	}
	return &p, nil
}
