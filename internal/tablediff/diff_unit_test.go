package tablediff

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTables is DescribeTable and Scan at the SDK interface, for Diff's
// decision logic: items are dealt to segments by position, pages follow
// Limit (or pageSize) with LastEvaluatedKey, and input DynamoDB refuses is
// refused (Segment outside TotalSegments, Limit below 1).
type fakeTables struct {
	tables   map[string]fakeTable
	pageSize int
	scanErr  error
	mu       sync.Mutex
	scans    []dynamodb.ScanInput
}

type fakeTable struct {
	keys      [][2]string // name, type; hash first
	itemCount int64
	items     []map[string]types.AttributeValue
}

func (f *fakeTables) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	t, ok := f.tables[aws.ToString(in.TableName)]
	if !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Requested resource not found")}
	}
	d := &types.TableDescription{TableName: in.TableName, ItemCount: aws.Int64(t.itemCount)}
	for i, k := range t.keys {
		kt := types.KeyTypeHash
		if i > 0 {
			kt = types.KeyTypeRange
		}
		d.KeySchema = append(d.KeySchema, types.KeySchemaElement{AttributeName: aws.String(k[0]), KeyType: kt})
		d.AttributeDefinitions = append(d.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(k[0]), AttributeType: types.ScalarAttributeType(k[1])})
	}
	return &dynamodb.DescribeTableOutput{Table: d}, nil
}

func (f *fakeTables) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.mu.Lock()
	f.scans = append(f.scans, *in)
	f.mu.Unlock()
	if f.scanErr != nil {
		return nil, f.scanErr
	}
	seg, total := aws.ToInt32(in.Segment), aws.ToInt32(in.TotalSegments)
	if total < 1 || seg < 0 || seg >= total {
		return nil, fmt.Errorf("ValidationException: segment %d of %d", seg, total)
	}
	if in.Limit != nil && *in.Limit < 1 {
		return nil, fmt.Errorf("ValidationException: Limit %d is below 1", *in.Limit)
	}
	t := f.tables[aws.ToString(in.TableName)]
	var mine []map[string]types.AttributeValue
	for i, it := range t.items {
		if int32(i)%total == seg {
			mine = append(mine, it)
		}
	}
	start := 0
	if in.ExclusiveStartKey != nil {
		start = len(mine)
		for i, it := range mine {
			if fmt.Sprint(it[t.keys[0][0]]) == fmt.Sprint(in.ExclusiveStartKey[t.keys[0][0]]) {
				start = i + 1
			}
		}
	}
	page := f.pageSize
	if in.Limit != nil {
		page = int(*in.Limit)
	}
	end := min(start+page, len(mine))
	out := &dynamodb.ScanOutput{Items: mine[start:end]}
	if end < len(mine) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{t.keys[0][0]: mine[end-1][t.keys[0][0]]}
	}
	return out, nil
}

func fakeItem(id int, v string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: fmt.Sprintf("k%03d", id)}, "v": &types.AttributeValueMemberS{Value: v}}
}

// fakePair is a source of n items and a target without the first missing,
// with the next changed ones changed, and with extra items of its own.
func fakePair(n, missing, changed, extra int) *fakeTables {
	var src, dst []map[string]types.AttributeValue
	for i := range n {
		src = append(src, fakeItem(i, "a"))
		switch {
		case i < missing:
		case i < missing+changed:
			dst = append(dst, fakeItem(i, "b"))
		default:
			dst = append(dst, fakeItem(i, "a"))
		}
	}
	for i := range extra {
		dst = append(dst, fakeItem(1000+i, "a"))
	}
	key := [][2]string{{"id", "S"}}
	return &fakeTables{pageSize: 1000, tables: map[string]fakeTable{
		"src": {keys: key, itemCount: int64(len(src)), items: src},
		"dst": {keys: key, itemCount: int64(len(dst)), items: dst}}}
}

// returnsWithin runs f and fails the test when it does not return within 30 s
// (Diff and CompareFeeds take milliseconds on these fakes): a loop that
// never ends is a failure, not a wait.
func returnsWithin(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("did not return within 30 s")
	}
}

func diffWithin(t *testing.T, db DynamoDB, opts Options) (rep *Report, err error) {
	t.Helper()
	returnsWithin(t, func() { rep, err = Diff(context.Background(), db, opts) })
	return rep, err
}

func TestDiffFollowsEveryPageOfEverySegment_DDB_API_03(t *testing.T) {
	db := fakePair(50, 3, 4, 2)
	var mu sync.Mutex
	var last [2]int64
	calls := 0
	keysOut := filepath.Join(t.TempDir(), "keys.jsonl")
	now := time.Date(2026, 11, 23, 4, 0, 0, 0, time.FixedZone("x", 3600))
	rep, err := diffWithin(t, db, Options{Source: "src", Target: "dst", Segments: 3, Buckets: 5, PageLimit: 4, SampleSize: 1,
		KeysOut: keysOut, Now: func() time.Time { return now },
		Progress: func(a, b int64) { mu.Lock(); last = [2]int64{a, b}; calls++; mu.Unlock() }})
	require.NoError(t, err)
	assert.Equal(t, [6]int64{50, 49, 43, 3, 2, 4}, [6]int64{rep.SourceItems, rep.TargetItems, rep.Same, rep.OnlyInSource, rep.OnlyInTarget, rep.Changed})
	assert.Equal(t, int64(3+2+4), rep.Differences())
	assert.Equal(t, [3]int{1, 1, 1}, [3]int{len(rep.Sample.OnlyInSource), len(rep.Sample.OnlyInTarget), len(rep.Sample.Changed)}, "the sample is capped at SampleSize")
	assert.Equal(t, [2]int{3, 5}, [2]int{rep.Segments, rep.Buckets})
	assert.Equal(t, [2]int64{50, 49}, last, "the last progress call has every item")
	assert.Greater(t, calls, 2*3, "a call per page")
	assert.Greater(t, rep.Seconds, 0.0)
	assert.InDelta(t, 99/rep.Seconds, rep.ItemsPerSec, 99/rep.Seconds/1e6)
	for _, in := range db.scans {
		assert.EqualValues(t, 3, aws.ToInt32(in.TotalSegments))
		assert.EqualValues(t, 4, aws.ToInt32(in.Limit))
		assert.Nil(t, in.ProjectionExpression, "whole items without --attributes")
	}
	kinds := map[Kind]int{}
	h, err := ReadKeys(keysOut, func(r KeyRecord) error { kinds[r.Kind]++; return nil })
	require.NoError(t, err)
	assert.Equal(t, map[Kind]int{OnlyInSource: 3, OnlyInTarget: 2, Changed: 4}, kinds)
	assert.Equal(t, now.UTC(), h.Time)
	assert.Equal(t, time.UTC, h.Time.Location())
}

func TestDiffDefaults(t *testing.T) {
	db := fakePair(30, 12, 11, 0)
	rep, err := diffWithin(t, db, Options{Source: "src", Target: "dst"})
	require.NoError(t, err)
	assert.Equal(t, [3]int64{7, 12, 11}, [3]int64{rep.Same, rep.OnlyInSource, rep.Changed})
	assert.Equal(t, [2]int{10, 10}, [2]int{len(rep.Sample.OnlyInSource), len(rep.Sample.Changed)}, "10 keys of each kind by default")
	assert.Equal(t, [2]int{4, 16}, [2]int{rep.Segments, rep.Buckets}, "4 segments, buckets sized from ItemCount")
	segs := map[string]map[int32]bool{}
	for _, in := range db.scans {
		assert.EqualValues(t, 4, aws.ToInt32(in.TotalSegments))
		assert.Nil(t, in.Limit, "no Limit without PageLimit: DynamoDB's 1 MB pages")
		if segs[*in.TableName] == nil {
			segs[*in.TableName] = map[int32]bool{}
		}
		segs[*in.TableName][*in.Segment] = true
	}
	all := map[int32]bool{0: true, 1: true, 2: true, 3: true}
	assert.Equal(t, map[string]map[int32]bool{"src": all, "dst": all}, segs)

	big := fakePair(3, 0, 0, 0)
	big.tables["dst"] = fakeTable{keys: big.tables["dst"].keys, itemCount: 10_000_000, items: big.tables["dst"].items}
	rep, err = diffWithin(t, big, Options{Source: "src", Target: "dst"})
	require.NoError(t, err)
	assert.Equal(t, 40, rep.Buckets, "sized from the larger ItemCount")
	assert.Equal(t, int64(3), rep.Same)
}

func TestDiffAttributesAbsent(t *testing.T) {
	empty := fakePair(0, 0, 0, 0)
	rep, err := diffWithin(t, empty, Options{Source: "src", Target: "dst", Attributes: []string{"v"}})
	require.NoError(t, err, "two empty tables are the same whatever is compared")
	assert.Zero(t, rep.Differences())

	_, err = diffWithin(t, fakePair(5, 0, 0, 0), Options{Source: "src", Target: "dst", Attributes: []string{"v", "w"}})
	require.ErrorIs(t, err, ErrAttributeAbsent)
	assert.ErrorContains(t, err, "--attributes w: no item of src or dst has it")

	onlyTarget := fakePair(4, 0, 0, 0)
	onlyTarget.tables["dst"].items[2]["w"] = &types.AttributeValueMemberS{Value: "x"}
	rep, err = diffWithin(t, onlyTarget, Options{Source: "src", Target: "dst", Attributes: []string{"w"}})
	require.NoError(t, err, "an attribute one side has is compared")
	assert.Equal(t, [2]int64{1, 3}, [2]int64{rep.Changed, rep.Same})
	for _, in := range onlyTarget.scans {
		assert.Equal(t, "#p0, #p1", aws.ToString(in.ProjectionExpression))
	}

	_, err = diffWithin(t, fakePair(2, 0, 0, 0), Options{Source: "src", Target: "dst", Attributes: []string{"a[x]"}})
	assert.ErrorContains(t, err, `attribute path "a[x]"`)
}

func TestDiffRefusesOnAnyFailure(t *testing.T) {
	db := fakePair(5, 0, 0, 0)
	db.tables["other"] = fakeTable{keys: [][2]string{{"id", "N"}}}
	_, err := diffWithin(t, db, Options{Source: "src", Target: "other"})
	assert.ErrorContains(t, err, "src has key (HASH id S) but other has key (HASH id N)")
	_, err = diffWithin(t, db, Options{Source: "nope", Target: "dst"})
	assert.ErrorContains(t, err, "describing nope")
	_, err = diffWithin(t, db, Options{Source: "src", Target: "nope"})
	assert.ErrorContains(t, err, "describing nope")

	db.scanErr = errors.New("throttled")
	_, err = diffWithin(t, db, Options{Source: "src", Target: "dst", Segments: 2})
	assert.ErrorContains(t, err, "scanning ")
	assert.ErrorContains(t, err, "throttled")

	ok := fakePair(5, 0, 0, 0)
	_, err = diffWithin(t, ok, Options{Source: "src", Target: "dst", KeysOut: filepath.Join(t.TempDir(), "no", "such", "dir", "keys.jsonl")})
	assert.ErrorContains(t, err, "keys file (--keys-out) directory")
	assert.ErrorContains(t, err, "no such file")
	_, err = diffWithin(t, ok, Options{Source: "src", Target: "dst", TempDir: filepath.Join(t.TempDir(), "missing")})
	assert.ErrorContains(t, err, "creating spill dir")
}

func TestKeySignatureNamesTypes(t *testing.T) {
	db := &fakeTables{tables: map[string]fakeTable{
		"a": {keys: [][2]string{{"pk", "S"}, {"sk", "N"}}, itemCount: 3},
		"b": {keys: [][2]string{{"pk", "S"}, {"sk", "N"}}, itemCount: 9},
		"c": {keys: [][2]string{{"pk", "S"}, {"sk", "S"}}},
	}}
	names, n, err := SameKey(context.Background(), db, "a", "b")
	require.NoError(t, err)
	assert.Equal(t, []string{"pk", "sk"}, names)
	assert.Equal(t, int64(9), n, "the larger ItemCount")
	names, n, err = SameKey(context.Background(), db, "b", "a")
	require.NoError(t, err)
	assert.Equal(t, int64(9), n)
	assert.Len(t, names, 2)
	_, _, err = SameKey(context.Background(), db, "a", "c")
	assert.ErrorContains(t, err, "a has key (HASH pk S)(RANGE sk N) but c has key (HASH pk S)(RANGE sk S)")
}

// writeRecord appends one spill record with a key of n bytes.
func writeRecord(t *testing.T, f *os.File, n int) {
	t.Helper()
	b := binary.AppendUvarint(nil, uint64(n))
	b = append(b, make([]byte, n+16)...)
	_, err := f.Write(b)
	require.NoError(t, err)
}

func TestReadBucketRefusesDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	count := func(path string) (int, error) {
		n := 0
		err := readBucket(path, func(string, [16]byte) { n++ })
		return n, err
	}
	n, err := count(filepath.Join(dir, "absent"))
	assert.NoError(t, err, "a bucket no item reached is empty")
	assert.Zero(t, n)

	f, err := os.Create(filepath.Join(dir, "limit"))
	require.NoError(t, err)
	writeRecord(t, f, 3)
	writeRecord(t, f, 1<<20) // the largest key read
	require.NoError(t, f.Close())
	n, err = count(f.Name())
	assert.NoError(t, err)
	assert.Equal(t, 2, n)

	f, err = os.Create(filepath.Join(dir, "huge"))
	require.NoError(t, err)
	writeRecord(t, f, 1<<20+1)
	require.NoError(t, f.Close())
	_, err = count(f.Name())
	assert.ErrorContains(t, err, "the file is damaged")

	cut := filepath.Join(dir, "cut")
	require.NoError(t, os.WriteFile(cut, append(binary.AppendUvarint(nil, 5), "abc"...), 0o600))
	_, err = count(cut)
	assert.ErrorContains(t, err, "reading spill bucket")

	badLen := filepath.Join(dir, "badlen")
	require.NoError(t, os.WriteFile(badLen, []byte{0x80}, 0o600)) // a uvarint cut short
	_, err = count(badLen)
	assert.ErrorContains(t, err, "reading spill bucket")
}

func TestCompareFeedsDefaults(t *testing.T) {
	var src, dst []map[string]types.AttributeValue
	for i := range 15 {
		src = append(src, fakeItem(i, "a"))
		dst = append(dst, fakeItem(i, "b"))
	}
	var rep *Report
	var err error
	returnsWithin(t, func() {
		rep, err = CompareFeeds(context.Background(), FeedOptions{KeyNames: []string{"id"}, ItemsHint: 10_000_000},
			[]Feed{feedOf(src...)}, []Feed{feedOf(dst...)})
	})
	require.NoError(t, err)
	assert.Equal(t, int64(15), rep.Changed)
	assert.Len(t, rep.Sample.Changed, 10, "10 keys of each kind by default")
	assert.Equal(t, 40, rep.Buckets, "sized from ItemsHint")
	assert.Greater(t, rep.Seconds, 0.0)
	assert.InDelta(t, 30/rep.Seconds, rep.ItemsPerSec, 30/rep.Seconds/1e6)
}

// TestDiffSampleAndKeysInKeyOrder: within a bucket the differing keys are
// sorted, so with one bucket the sample is the smallest keys and the keys
// file lists them in order.
func TestDiffSampleAndKeysInKeyOrder(t *testing.T) {
	db := fakePair(9, 0, 9, 0)
	// The fake deals items to segments by position: reverse the target so order is not given.
	d := db.tables["dst"]
	slices.Reverse(d.items)
	keysOut := filepath.Join(t.TempDir(), "keys.jsonl")
	rep, err := diffWithin(t, db, Options{Source: "src", Target: "dst", Buckets: 1, SampleSize: 2, KeysOut: keysOut})
	require.NoError(t, err)
	require.Len(t, rep.Sample.Changed, 2)
	assert.JSONEq(t, `{"id":{"S":"k000"}}`, string(rep.Sample.Changed[0]))
	assert.JSONEq(t, `{"id":{"S":"k001"}}`, string(rep.Sample.Changed[1]))
	var got []string
	_, err = ReadKeys(keysOut, func(r KeyRecord) error { got = append(got, string(r.Key)); return nil })
	require.NoError(t, err)
	assert.Len(t, got, 9)
	assert.True(t, slices.IsSorted(got), "keys in order: %v", got)
}

func TestReadKeysStopsAtTheFirstError(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	_, err := readKeys(strings.NewReader(`{"diff":{"source":"a","target":"b"}}
{"kind":"changed","key":{"id":{"S":"1"}}}
{"kind":"changed","key":{"id":{"S":"2"}}}
{"kind":"changed","key":{"id":{"S":"3"}}}`), "x.jsonl", func(KeyRecord) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 2, calls)
	_, err = readKeys(strings.NewReader(`{"diff":{"source":"a","target":"b"}}
{"kind":"changed","key":{"id":{"S":"1"}}}
{"kind":`), "x.jsonl", func(KeyRecord) error { return nil })
	assert.ErrorContains(t, err, "x.jsonl line 3")
}

// TestDiffFailsWhenTheKeysFileCannotBeWritten: a keys file that cannot be
// written (/dev/full: not a regular file, refused by the safefile
// discipline before the scans) fails the diff; it reports nothing.
func TestDiffFailsWhenTheKeysFileCannotBeWritten(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system:", err)
	}
	rep, err := diffWithin(t, fakePair(5, 1, 1, 1), Options{Source: "src", Target: "dst", KeysOut: "/dev/full"})
	assert.ErrorContains(t, err, "keys file (--keys-out) /dev/full is not a regular file")
	assert.Nil(t, rep)
}

// TestKeysOutFileDiscipline: --keys-out is refused before any scan when the
// file exists (unless --force) or is a symlink; a new one is 0600.
func TestKeysOutFileDiscipline(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "keys.jsonl")
	require.NoError(t, os.WriteFile(existing, []byte("old"), 0o644))
	db := fakePair(5, 1, 1, 1)
	_, err := diffWithin(t, db, Options{Source: "src", Target: "dst", KeysOut: existing})
	assert.ErrorContains(t, err, "already exists: pass --force")
	b, _ := os.ReadFile(existing)
	assert.Equal(t, "old", string(b), "nothing overwritten")

	_, err = diffWithin(t, fakePair(5, 1, 1, 1), Options{Source: "src", Target: "dst", KeysOut: existing, KeysForce: true})
	require.NoError(t, err)
	fi, err := os.Stat(existing)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(filepath.Join(dir, "elsewhere"), link))
	_, err = diffWithin(t, fakePair(5, 1, 1, 1), Options{Source: "src", Target: "dst", KeysOut: link, KeysForce: true})
	assert.ErrorContains(t, err, "symlink")
	_, statErr := os.Stat(filepath.Join(dir, "elsewhere"))
	assert.True(t, os.IsNotExist(statErr), "nothing written through the symlink")
}
