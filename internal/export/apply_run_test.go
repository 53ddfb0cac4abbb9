package export

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/testctx"
)

// applyDB is a table at the SDK interface for ApplyIncrements' decisions:
// its tags (listed one a page), the items written, and faults.
type applyDB struct {
	tags   map[string]string
	items  map[string]string // user_id -> v ("" for an item without v)
	writes int
	mu     sync.Mutex
	tagErr error
	// readBack, when set, is what the checkpoint tag reads back as.
	readBack string
}

func (d *applyDB) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName,
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
		TableArn:  aws.String("arn:aws:dynamodb:eu-west-1:123456789012:table/" + aws.ToString(in.TableName))}}, nil
}

func (d *applyDB) ListTagsOfResource(_ context.Context, in *dynamodb.ListTagsOfResourceInput, _ ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error) {
	names := make([]string, 0, len(d.tags))
	for k := range d.tags {
		names = append(names, k)
	}
	sort.Strings(names)
	at := 0
	if in.NextToken != nil {
		fmt.Sscan(*in.NextToken, &at)
	}
	out := &dynamodb.ListTagsOfResourceOutput{}
	if at < len(names) {
		v := d.tags[names[at]]
		if names[at] == TagAppliedThrough && d.readBack != "" {
			v = d.readBack
		}
		out.Tags = []types.Tag{{Key: aws.String(names[at]), Value: aws.String(v)}}
	}
	if at+1 < len(names) {
		out.NextToken = aws.String(fmt.Sprint(at + 1))
	}
	return out, nil
}

func (d *applyDB) TagResource(_ context.Context, in *dynamodb.TagResourceInput, _ ...func(*dynamodb.Options)) (*dynamodb.TagResourceOutput, error) {
	if d.tagErr != nil {
		return nil, d.tagErr
	}
	for _, t := range in.Tags {
		d.tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return &dynamodb.TagResourceOutput{}, nil
}

func (d *applyDB) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	id := in.Key["user_id"].(*types.AttributeValueMemberS).Value
	v, ok := d.items[id]
	if !ok {
		return &dynamodb.GetItemOutput{}, nil
	}
	item := map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: id}}
	if v != "" {
		item["v"] = &types.AttributeValueMemberS{Value: v}
	}
	return &dynamodb.GetItemOutput{Item: item}, nil
}

func (d *applyDB) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes++
	v := ""
	if s, ok := in.Item["v"].(*types.AttributeValueMemberS); ok {
		v = s.Value
	}
	d.items[in.Item["user_id"].(*types.AttributeValueMemberS).Value] = v
	return &dynamodb.PutItemOutput{}, nil
}

func (d *applyDB) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes++
	delete(d.items, in.Key["user_id"].(*types.AttributeValueMemberS).Value)
	return &dynamodb.DeleteItemOutput{}, nil
}

func hour(n int) time.Time { return time.Date(2026, 3, 1, n, 0, 0, 0, time.UTC) }

// chainOf writes incremental exports of windows hour(i)..hour(i+1) for i in
// hours, each with the records recs(i), and returns the store and the
// increments found.
func chainOf(t *testing.T, hours []int, recs func(i int) []exporttest.Record) (exportverify.Store, []Increment) {
	root := t.TempDir()
	var prefixes []string
	for _, i := range hours {
		prefix := fmt.Sprintf("inc/%02d", i)
		_, err := exporttest.Write(root, exporttest.Spec{Prefix: prefix, ExportID: fmt.Sprintf("0%d-x", i), Incremental: true,
			From: hour(i), To: hour(i + 1), Records: [][]exporttest.Record{recs(i)}})
		require.NoError(t, err)
		prefixes = append(prefixes, prefix)
	}
	store := exportverify.DirStore{Root: root}
	incs, err := FindIncrements(testctx.Bounded(t), store, prefixes)
	require.NoError(t, err)
	return store, incs
}

func userKey(id string) map[string]any { return map[string]any{"user_id": map[string]any{"S": id}} }
func userImg(id, v string) map[string]any {
	return map[string]any{"user_id": map[string]any{"S": id}, "v": map[string]any{"S": v}}
}

// Each export's records: hour i puts u<i> and rewrites u0 (hour 0: one
// key, its latest change); hour 2 deletes u1.
func hourly(i int) []exporttest.Record {
	recs := []exporttest.Record{{Keys: userKey(fmt.Sprint("u", i)), New: userImg(fmt.Sprint("u", i), "new"), Micros: int64(10 * i)},
		{Keys: userKey("u0"), New: userImg("u0", fmt.Sprint("h", i)), Micros: int64(10*i + 1)}}
	if i == 2 {
		recs = append(recs, exporttest.Record{Keys: userKey("u1"), Old: userImg("u1", "new"), Micros: 25})
	}
	return recs
}

func TestApplyIncrements(t *testing.T) {
	ctx := testctx.Bounded(t)
	arn := "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user"

	t.Run("applies in order, moves the checkpoint after each, reads it back", func(t *testing.T) {
		store, incs := chainOf(t, []int{0, 1, 2}, hourly)
		db := &applyDB{tags: map[string]string{"a-tag": "x"}, items: map[string]string{}}
		var acts []string
		var progress []string
		rep, err := ApplyIncrements(ctx, db, store, Start{Arn: arn, Base: hour(0), Whole: hour(0)}, incs, ApplyOptions{Table: "dev-hoge-user", Apply: true,
			Act: func(what, _ string, _ any) { acts = append(acts, what) },
			Progress: func(inc Increment, written, total int) {
				progress = append(progress, fmt.Sprintf("%s %d/%d", inc.From.Format("15"), written, total))
			}})
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"u0": "h2", "u2": "new"}, db.items, "u1 put then deleted, u0 last written by hour 2")
		assert.Equal(t, hour(3), rep.Through, "the checkpoint read back")
		assert.Equal(t, stamp(hour(3)), db.tags[TagAppliedThrough])
		assert.False(t, rep.DryRun)
		require.Len(t, rep.Increments, 3)
		for i, r := range rep.Increments {
			assert.False(t, r.Skipped)
			assert.Equal(t, hour(i), r.From)
		}
		assert.Equal(t, []int{1, 2, 2}, []int{rep.Increments[0].Puts, rep.Increments[1].Puts, rep.Increments[2].Puts})
		assert.Equal(t, []int{0, 0, 1}, []int{rep.Increments[0].Deletes, rep.Increments[1].Deletes, rep.Increments[2].Deletes})
		assert.Equal(t, []string{"export.apply", "export.applied-through", "export.apply", "export.applied-through", "export.apply", "export.applied-through"}, acts)
		assert.Equal(t, []string{"00 1/1", "01 1/2", "01 2/2", "02 1/3", "02 2/3", "02 3/3"}, progress)
		assert.Equal(t, []int{1, 2, 3}, []int{rep.Increments[0].Written, rep.Increments[1].Written, rep.Increments[2].Written})
	})

	t.Run("a re-run skips what the checkpoint covers", func(t *testing.T) {
		store, incs := chainOf(t, []int{0, 1, 2}, hourly)
		db := &applyDB{tags: map[string]string{}, items: map[string]string{}}
		rep, err := ApplyIncrements(ctx, db, store, Start{Arn: arn, Base: hour(2), Whole: hour(2)}, incs, ApplyOptions{Table: "t", Apply: true})
		require.NoError(t, err)
		require.Len(t, rep.Increments, 3)
		assert.True(t, rep.Increments[0].Skipped)
		assert.True(t, rep.Increments[1].Skipped, "a window ending exactly at the checkpoint is applied already")
		assert.False(t, rep.Increments[2].Skipped)
		assert.Equal(t, map[string]string{"u0": "h2", "u2": "new"}, db.items, "only hour 2 written")
		assert.Equal(t, hour(3), rep.Through)
	})

	t.Run("a dry run writes and tags nothing", func(t *testing.T) {
		store, incs := chainOf(t, []int{0, 1}, hourly)
		db := &applyDB{tags: map[string]string{}, items: map[string]string{}}
		rep, err := ApplyIncrements(ctx, db, store, Start{Arn: arn, Base: hour(0), Whole: hour(0)}, incs, ApplyOptions{Table: "t"})
		require.NoError(t, err)
		assert.True(t, rep.DryRun)
		assert.Zero(t, db.writes)
		assert.Empty(t, db.tags)
		assert.Equal(t, hour(0), rep.Through, "the checkpoint did not move")
		require.Len(t, rep.Increments, 2)
		assert.Equal(t, 2, rep.Increments[1].Puts)
	})

	t.Run("an export without changes writes nothing, moves the checkpoint", func(t *testing.T) {
		store, incs := chainOf(t, []int{0}, func(int) []exporttest.Record { return nil })
		db := &applyDB{tags: map[string]string{}, items: map[string]string{}}
		var progress int
		rep, err := ApplyIncrements(ctx, db, store, Start{Arn: arn, Base: hour(0), Whole: hour(0)}, incs, ApplyOptions{Table: "t", Apply: true,
			Progress: func(Increment, int, int) { progress++ }})
		require.NoError(t, err)
		assert.Zero(t, db.writes)
		assert.Zero(t, progress)
		assert.Equal(t, hour(1), rep.Through)
	})

	t.Run("a gap refuses before writing", func(t *testing.T) {
		store, incs := chainOf(t, []int{0, 2}, hourly)
		db := &applyDB{tags: map[string]string{}, items: map[string]string{}}
		_, err := ApplyIncrements(ctx, db, store, Start{Arn: arn, Base: hour(0), Whole: hour(0)}, incs, ApplyOptions{Table: "t", Apply: true})
		assert.ErrorIs(t, err, ErrGap)
		assert.Zero(t, db.writes)
	})

	t.Run("the checkpoint not moved: an error, nothing claimed", func(t *testing.T) {
		store, incs := chainOf(t, []int{0}, hourly)
		db := &applyDB{tags: map[string]string{}, items: map[string]string{}, tagErr: errors.New("AccessDenied")}
		rep, err := ApplyIncrements(ctx, db, store, Start{Arn: arn, Base: hour(0), Whole: hour(0)}, incs, ApplyOptions{Table: "t", Apply: true})
		assert.ErrorContains(t, err, "is applied but the checkpoint was not moved")
		assert.Equal(t, hour(0), rep.Through)
		assert.Empty(t, rep.Increments)
	})

	t.Run("the checkpoint reads back otherwise: an error", func(t *testing.T) {
		store, incs := chainOf(t, []int{0}, hourly)
		db := &applyDB{tags: map[string]string{}, items: map[string]string{}, readBack: stamp(hour(5))}
		rep, err := ApplyIncrements(ctx, db, store, Start{Arn: arn, Base: hour(0), Whole: hour(0)}, incs, ApplyOptions{Table: "t", Apply: true})
		assert.ErrorContains(t, err, "the checkpoint reads back")
		assert.Empty(t, rep.Increments)
	})
}

// Where a table's history starts: its checkpoint tag first, then --since,
// then the full export it was imported from.
func TestBaseline(t *testing.T) {
	ctx := testctx.Bounded(t)
	root := t.TempDir()
	full := time.Date(2026, 3, 1, 4, 30, 0, 0, time.UTC)
	_, err := exporttest.Write(root, exporttest.Spec{Prefix: "full", ExportID: "01-f", FileItems: []int{1}, ExportTime: full})
	require.NoError(t, err)
	store := exportverify.DirStore{Root: root}
	imported := "s3://bkt/full/AWSDynamoDB/01-f/data/"
	cases := []struct {
		name  string
		tags  map[string]string
		since time.Time
		want  time.Time
		from  string
		err   string
	}{
		{"checkpoint tag", map[string]string{TagAppliedThrough: stamp(hour(7)), TagImportedFrom: imported}, hour(1), hour(7), "the table's dynops:applied-through tag", ""},
		{"--since", map[string]string{TagImportedFrom: imported}, hour(1), hour(1), "--since", ""},
		{"the import's full export", map[string]string{TagImportedFrom: imported}, time.Time{}, full, "the exportTime of " + imported + " (the dynops:imported-from tag)", ""},
		{"an unreadable checkpoint", map[string]string{TagAppliedThrough: "yesterday"}, hour(1), time.Time{}, "", `tag dynops:applied-through: time "yesterday" is not RFC 3339`},
		{"imported from another bucket", map[string]string{TagImportedFrom: "s3://other/full/AWSDynamoDB/01-f/data/"}, time.Time{}, time.Time{}, "", "cannot tell where t's history starts"},
		{"no tags", map[string]string{}, time.Time{}, time.Time{}, "", "pass --since with the full export's exportTime"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := &applyDB{tags: c.tags}
			st, err := Baseline(ctx, db, store, "bkt", "t", c.since, engine.Shard{})
			base, from := st.Base, st.From
			assert.Equal(t, "arn:aws:dynamodb:eu-west-1:123456789012:table/t", st.Arn)
			if c.err != "" {
				assert.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, base)
			assert.Equal(t, c.from, from)
		})
	}
}
