// Package tablediff compares the items of two DynamoDB tables with the same
// primary key (e.g. a point-in-time restore and the original) and reports
// the keys only in the source, only in the target, and changed.
//
// Memory stays bounded whatever the table size. Both tables are read with
// parallel segmented Scans (following LastEvaluatedKey, DDB-API-03); each item
// is reduced at once to its canonical key and a 16-byte checksum of its
// attributes, and that record is appended to one of B on-disk spill buckets
// chosen by a hash of the key (one file per table per bucket, in a temp
// dir). An item's key lands in the same bucket number on both sides, so the
// compare phase takes one bucket at a time: it loads the source's bucket
// into a map (key -> checksum) and streams the target's bucket against it.
// Peak memory is about one bucket, (items / B) x ~150 bytes, plus the Scan
// pages being decoded (at most half the cores' worth at once, pageSlots:
// a 1 MB page is ~5 MB decoded) and a 16 KB write buffer per bucket file; disk use
// is (items of both tables) x (key size + ~20 bytes). B is sized from the
// tables' ItemCount (250,000 items per bucket, between 16 and 512) unless set.
package tablediff

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/safefile"
)

// Describer is the part of the API SameKey uses.
type Describer interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// DynamoDB is the part of the API Diff uses.
type DynamoDB interface {
	Describer
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Options of a diff.
type Options struct {
	Source, Target string
	// Segments is the number of parallel Scan segments per table (default 4).
	Segments int
	// Buckets is the number of on-disk spill buckets (0: sized from ItemCount).
	Buckets int
	// Attributes, when set, limits the comparison to these attributes (plus
	// the key), read with a ProjectionExpression; empty compares whole items.
	Attributes []string
	// PageLimit caps the items per Scan page (0: DynamoDB's 1 MB pages).
	PageLimit int32
	// SampleSize is how many keys of each kind the report lists (default 10).
	SampleSize int
	// KeysOut, when set, receives every differing key (see ReadKeys).
	KeysOut string
	// KeysForce lets KeysOut overwrite an existing file (--force).
	KeysForce bool
	// TempDir holds the spill buckets (default: the system temp dir).
	TempDir string
	// Progress, when set, is called as pages arrive with items read so far.
	Progress func(sourceItems, targetItems int64)
	// Now stamps the keys file header (default time.Now).
	Now func() time.Time
	// SourceExport and TargetExport, when set, replace the Scan of that side
	// with the items of a full export (read and checked file by file against
	// its manifests); Source/Target then name the export (its URI).
	SourceExport, TargetExport *exportverify.Export
	// KeyNames is the primary key (hash first) when both sides are exports;
	// with a table on either side it is read from the table.
	KeyNames []string
	// ExportParallel is how many export files are read at once (default 4).
	ExportParallel int

	// pages bounds the Scan pages decoded at once (pageSlots; default
	// GOMAXPROCS), shared by every segment of the run.
	pages pageSlots
}

// Report is the result of a diff.
type Report struct {
	Source       string   `json:"source"`
	Target       string   `json:"target"`
	KeyNames     []string `json:"key_names"`
	Attributes   []string `json:"attributes,omitempty"`
	Segments     int      `json:"segments"`
	Buckets      int      `json:"buckets"`
	SourceItems  int64    `json:"source_items"`
	TargetItems  int64    `json:"target_items"`
	Same         int64    `json:"same"`
	OnlyInSource int64    `json:"only_in_source"`
	OnlyInTarget int64    `json:"only_in_target"`
	Changed      int64    `json:"changed"`
	Sample       Sample   `json:"sample"`
	KeysOut      string   `json:"keys_out,omitempty"`
	Seconds      float64  `json:"seconds"`
	ItemsPerSec  float64  `json:"items_per_second"`
}

// Sample lists the first keys of each kind (canonical DynamoDB JSON).
type Sample struct {
	OnlyInSource []json.RawMessage `json:"only_in_source"`
	OnlyInTarget []json.RawMessage `json:"only_in_target"`
	Changed      []json.RawMessage `json:"changed"`
}

// Differences is the number of differing keys.
func (r *Report) Differences() int64 { return r.OnlyInSource + r.OnlyInTarget + r.Changed }

// Diff compares the two tables of opts.
func Diff(ctx context.Context, db DynamoDB, opts Options) (*Report, error) {
	start := time.Now()
	opts.setDefaults()
	if opts.KeysOut != "" {
		// refused now, not after the scans
		if err := safefile.CheckNew(opts.KeysOut, "keys file (--keys-out)", opts.KeysForce); err != nil {
			return nil, err
		}
	}
	keyNames, err := keysAndBuckets(ctx, db, &opts)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.TempDir, "dynops-diff-")
	if err != nil {
		return nil, fmt.Errorf("creating spill dir: %w", err)
	}
	defer os.RemoveAll(dir)

	rep := &Report{Source: opts.Source, Target: opts.Target, KeyNames: keyNames, Attributes: opts.Attributes,
		Segments: opts.Segments, Buckets: opts.Buckets, KeysOut: opts.KeysOut,
		Sample: Sample{OnlyInSource: []json.RawMessage{}, OnlyInTarget: []json.RawMessage{}, Changed: []json.RawMessage{}}}
	src := newSpill(filepath.Join(dir, "source"), opts.Buckets)
	dst := newSpill(filepath.Join(dir, "target"), opts.Buckets)
	var srcN, dstN atomic.Int64
	progress := func() {
		if opts.Progress != nil {
			opts.Progress(srcN.Load(), dstN.Load())
		}
	}
	for _, a := range opts.Attributes {
		if _, err := ParsePath(a); err != nil {
			return nil, err
		}
	}
	seen := make(map[string]*atomic.Int64, len(opts.Attributes))
	for _, a := range opts.Attributes {
		seen[a] = new(atomic.Int64)
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, side := range []struct {
		table  string
		export *exportverify.Export
		sp     *spill
		n      *atomic.Int64
	}{{opts.Source, opts.SourceExport, src, &srcN}, {opts.Target, opts.TargetExport, dst, &dstN}} {
		if side.export != nil {
			g.Go(func() error { return readExport(gctx, *side.export, opts, keyNames, side.sp, side.n, progress, seen) })
			continue
		}
		for seg := 0; seg < opts.Segments; seg++ {
			g.Go(func() error {
				return scanSegment(gctx, db, opts, side.table, keyNames, seg, side.sp, side.n, progress, seen)
			})
		}
	}
	err = g.Wait()
	if cerr := errors.Join(src.close(), dst.close()); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	rep.SourceItems, rep.TargetItems = srcN.Load(), dstN.Load()
	// A listed attribute no item has compares nothing: a misspelt name or a
	// nested path written as one name would report "the same" (exit 0).
	var absent []string
	for _, a := range opts.Attributes {
		if seen[a].Load() == 0 {
			absent = append(absent, a)
		}
	}
	if len(absent) > 0 && rep.SourceItems+rep.TargetItems > 0 {
		return nil, fmt.Errorf("%w: --attributes %s: no item of %s or %s has it; check the name (a nested attribute is a document path: profile.name for a map member, tags[0] for a list element)",
			ErrAttributeAbsent, strings.Join(absent, ","), opts.Source, opts.Target)
	}

	var keys *keysWriter
	if opts.KeysOut != "" {
		keys, err = createKeys(opts.KeysOut, opts.KeysForce, Header{Source: opts.Source, Target: opts.Target, KeyNames: keyNames,
			Attributes: opts.Attributes, Time: opts.Now().UTC()})
		if err != nil {
			return nil, err
		}
	}
	for b := 0; b < opts.Buckets; b++ {
		if err = compareBucket(src.path(b), dst.path(b), rep, keys, opts.SampleSize); err != nil {
			break
		}
	}
	if keys != nil {
		if cerr := keys.close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, err
	}
	rep.Seconds = time.Since(start).Seconds()
	if rep.Seconds > 0 {
		rep.ItemsPerSec = float64(rep.SourceItems+rep.TargetItems) / rep.Seconds
	}
	return rep, nil
}

// keysOf returns the key names and the larger item count of the two sides:
// from the tables (SameKey) or, for an export, its summary's itemCount.
func keysOf(ctx context.Context, db Describer, opts Options) ([]string, int64, error) {
	if opts.SourceExport == nil && opts.TargetExport == nil {
		return SameKey(ctx, db, opts.Source, opts.Target)
	}
	var count int64
	keyNames := opts.KeyNames
	for _, side := range []struct {
		name   string
		export *exportverify.Export
	}{{opts.Source, opts.SourceExport}, {opts.Target, opts.TargetExport}} {
		if side.export != nil {
			sum, _, err := side.export.ExportSummary(ctx)
			if err != nil {
				return nil, 0, err
			}
			count = max(count, sum.ItemCount)
			continue
		}
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(side.name)})
		if err != nil {
			return nil, 0, fmt.Errorf("describing %s: %w", side.name, err)
		}
		var names []string
		for _, k := range out.Table.KeySchema { // HASH is listed first
			names = append(names, aws.ToString(k.AttributeName))
		}
		if len(keyNames) > 0 && !slices.Equal(keyNames, names) {
			return nil, 0, fmt.Errorf("--key %v, but %s has key %v: give the table's key or leave --key out", keyNames, side.name, names)
		}
		keyNames = names
		count = max(count, aws.ToInt64(out.Table.ItemCount))
	}
	if len(keyNames) == 0 {
		return nil, 0, fmt.Errorf("both sides are exports, which do not record the table's key: give it with --key HASH[,RANGE]")
	}
	return keyNames, count, nil
}

// readExport reduces every item of a full export to key and checksum, as
// scanSegment does for a table.
func readExport(ctx context.Context, e exportverify.Export, opts Options, keyNames []string, sp *spill, n *atomic.Int64, progress func(), seen map[string]*atomic.Int64) error {
	_, err := e.EachItem(ctx, opts.ExportParallel, func(item map[string]types.AttributeValue) error {
		key, err := AppendKey(nil, item, keyNames)
		if err != nil {
			return fmt.Errorf("%s: %w", e.URI, err)
		}
		if err := sp.add(key, Sum(item, opts.Attributes)); err != nil {
			return err
		}
		for _, a := range opts.Attributes {
			if _, ok := lookupAttr(item, a); ok {
				seen[a].Add(1)
			}
		}
		if n.Add(1)%1000 == 0 {
			progress()
		}
		return nil
	})
	progress()
	return err
}

// bucketsFor sizes the spill buckets for tables of up to n items.
func bucketsFor(n int64) int {
	const perBucket = 250_000
	b := int((n + perBucket - 1) / perBucket)
	return min(max(b, 16), 512)
}

// SameKey checks that both tables exist and share a primary key (names and
// types) and returns the key attribute names (hash first) and the larger
// ItemCount of the two.
func SameKey(ctx context.Context, db Describer, a, b string) ([]string, int64, error) {
	describe := func(name string) (*types.TableDescription, error) {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &name})
		if err != nil {
			return nil, fmt.Errorf("describing %s: %w", name, err)
		}
		return out.Table, nil
	}
	ta, err := describe(a)
	if err != nil {
		return nil, 0, err
	}
	tb, err := describe(b)
	if err != nil {
		return nil, 0, err
	}
	ka, kb := keySignature(ta), keySignature(tb)
	if ka != kb {
		return nil, 0, fmt.Errorf("%s has key %s but %s has key %s: only tables with the same primary key can be compared", a, ka, b, kb)
	}
	var names []string
	for _, k := range ta.KeySchema { // HASH is listed first
		names = append(names, aws.ToString(k.AttributeName))
	}
	return names, max(aws.ToInt64(ta.ItemCount), aws.ToInt64(tb.ItemCount)), nil
}

func keySignature(t *types.TableDescription) string {
	typ := map[string]string{}
	for _, d := range t.AttributeDefinitions {
		typ[aws.ToString(d.AttributeName)] = string(d.AttributeType)
	}
	s := ""
	for _, k := range t.KeySchema {
		n := aws.ToString(k.AttributeName)
		s += fmt.Sprintf("(%s %s %s)", k.KeyType, n, typ[n])
	}
	return s
}

// ErrAttributeAbsent: a listed attribute appears in no item of either table.
var ErrAttributeAbsent = errors.New("attribute in no item")

func scanSegment(ctx context.Context, db DynamoDB, opts Options, table string, keyNames []string, seg int, sp *spill, n *atomic.Int64, progress func(), seen map[string]*atomic.Int64) error {
	proj, names := projection(keyNames, opts.Attributes)
	in := &dynamodb.ScanInput{TableName: &table, Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(opts.Segments)),
		ProjectionExpression: proj, ExpressionAttributeNames: names}
	if opts.PageLimit > 0 {
		in.Limit = aws.Int32(opts.PageLimit)
	}
	var key []byte // reused: the spill copies it into its buffer
	// The page's slot (pageSlots) is taken when its response arrives and
	// given back once its items are reduced, whatever happens between.
	slot := &pageSlot{slots: opts.pages}
	defer slot.release()
	withSlot := slot.option()
	for {
		out, err := db.Scan(ctx, in, withSlot)
		if err != nil {
			return fmt.Errorf("scanning %s segment %d/%d: %w", table, seg, opts.Segments, err)
		}
		for _, item := range out.Items {
			if key, err = AppendKey(key[:0], item, keyNames); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
			if err := sp.add(key, Sum(item, opts.Attributes)); err != nil {
				return err
			}
			for _, a := range opts.Attributes {
				if _, ok := lookupAttr(item, a); ok {
					seen[a].Add(1)
				}
			}
		}
		n.Add(int64(len(out.Items)))
		progress()
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		slot.release()
	}
}

// spill is one table's set of bucket files. Records are
// uvarint(len(key)) key sum[16].
type spill struct {
	dir     string
	mu      []sync.Mutex
	files   []*os.File
	writers []*bufio.Writer
}

func newSpill(dir string, buckets int) *spill {
	return &spill{dir: dir, mu: make([]sync.Mutex, buckets), files: make([]*os.File, buckets), writers: make([]*bufio.Writer, buckets)}
}

func (s *spill) path(b int) string { return filepath.Join(s.dir, fmt.Sprintf("%04d", b)) }

// bucketOf is FNV-1a of the key modulo the bucket count.
func bucketOf(key []byte, buckets int) int {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for _, c := range key {
		h ^= uint64(c)
		h *= prime64
	}
	return int(h % uint64(buckets))
}

func (s *spill) add(key []byte, sum [16]byte) error {
	b := bucketOf(key, len(s.files))
	s.mu[b].Lock()
	defer s.mu[b].Unlock()
	if s.writers[b] == nil {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return fmt.Errorf("creating spill dir: %w", err)
		}
		f, err := os.Create(s.path(b))
		if err != nil {
			return fmt.Errorf("creating spill bucket: %w", err)
		}
		s.files[b], s.writers[b] = f, bufio.NewWriterSize(f, 16<<10)
	}
	w := s.writers[b]
	var lenBuf [binary.MaxVarintLen64]byte
	w.Write(lenBuf[:binary.PutUvarint(lenBuf[:], uint64(len(key)))])
	w.Write(key)
	if _, err := w.Write(sum[:]); err != nil {
		return fmt.Errorf("writing spill bucket %s: %w", s.path(b), err)
	}
	return nil
}

func (s *spill) close() error {
	var errs []error
	for b, w := range s.writers {
		if w == nil {
			continue
		}
		errs = append(errs, w.Flush(), s.files[b].Close())
	}
	return errors.Join(errs...)
}

// readBucket calls fn for each record of a bucket file; a missing file is an empty bucket.
func readBucket(path string, fn func(key string, sum [16]byte)) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening spill bucket: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var buf []byte // reused: fn gets the key as a new string
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading spill bucket %s: %w", path, err)
		}
		if n > 1<<20 {
			return fmt.Errorf("reading spill bucket %s: a key of %d bytes: the file is damaged", path, n)
		}
		buf = slices.Grow(buf[:0], int(n)+16)[:int(n)+16]
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("reading spill bucket %s: %w", path, err)
		}
		var sum [16]byte
		copy(sum[:], buf[n:])
		fn(string(buf[:n]), sum)
	}
}

// compareBucket compares one bucket of both sides, adds to rep's counts and
// samples, and writes the differing keys (sorted within the bucket) to keys.
func compareBucket(srcPath, dstPath string, rep *Report, keys *keysWriter, sampleSize int) error {
	srcSums := map[string][16]byte{}
	if err := readBucket(srcPath, func(k string, s [16]byte) { srcSums[k] = s }); err != nil {
		return err
	}
	var diffs []KeyRecord
	err := readBucket(dstPath, func(k string, s [16]byte) {
		ss, ok := srcSums[k]
		switch {
		case !ok:
			diffs = append(diffs, KeyRecord{Kind: OnlyInTarget, Key: json.RawMessage(k), TargetSum: hex.EncodeToString(s[:])})
		case ss != s:
			diffs = append(diffs, KeyRecord{Kind: Changed, Key: json.RawMessage(k), SourceSum: hex.EncodeToString(ss[:]), TargetSum: hex.EncodeToString(s[:])})
		default:
			rep.Same++
		}
		if ok {
			delete(srcSums, k)
		}
	})
	if err != nil {
		return err
	}
	for k, s := range srcSums {
		diffs = append(diffs, KeyRecord{Kind: OnlyInSource, Key: json.RawMessage(k), SourceSum: hex.EncodeToString(s[:])})
	}
	sort.Slice(diffs, func(i, j int) bool { return string(diffs[i].Key) < string(diffs[j].Key) })
	for _, d := range diffs {
		var sample *[]json.RawMessage
		switch d.Kind {
		case OnlyInSource:
			rep.OnlyInSource++
			sample = &rep.Sample.OnlyInSource
		case OnlyInTarget:
			rep.OnlyInTarget++
			sample = &rep.Sample.OnlyInTarget
		case Changed:
			rep.Changed++
			sample = &rep.Sample.Changed
		}
		if len(*sample) < sampleSize {
			*sample = append(*sample, d.Key)
		}
		if keys != nil {
			if err := keys.write(d); err != nil {
				return err
			}
		}
	}
	return nil
}
