package export

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/testctx"
)

func TestCheckChain(t *testing.T) {
	h := func(n int) time.Time { return time.Date(2026, 3, 1, n, 0, 0, 0, time.UTC) }
	inc := func(a, b int) Increment { return Increment{Dir: "d", From: h(a), To: h(b)} }
	cases := []struct {
		name  string
		incs  []Increment
		since time.Time
		err   string
	}{
		{"one window from the baseline", []Increment{inc(0, 1)}, h(0), ""},
		{"three in a row", []Increment{inc(0, 1), inc(1, 2), inc(2, 5)}, h(0), ""},
		{"no baseline: only the links", []Increment{inc(3, 4), inc(4, 5)}, time.Time{}, ""},
		{"nothing to apply", nil, h(0), ""},
		{"first starts late", []Increment{inc(1, 2)}, h(0), "gap between"},
		{"first starts early", []Increment{inc(0, 2)}, h(1), "overlap between"},
		{"hole in the middle", []Increment{inc(0, 1), inc(2, 3)}, h(0), "gap between"},
		{"overlap in the middle", []Increment{inc(0, 2), inc(1, 3)}, h(0), "overlap between"},
		{"duplicate window", []Increment{inc(0, 1), inc(0, 1)}, h(0), "overlap between"},
		{"empty window", []Increment{inc(1, 1)}, h(1), "empty or inverted"},
	}
	for _, c := range cases {
		err := CheckChain(c.incs, c.since)
		if c.err == "" {
			assert.NoError(t, err, c.name)
			continue
		}
		assert.ErrorIs(t, err, ErrGap, c.name)
		assert.ErrorContains(t, err, c.err, c.name)
	}
}

// readChanges keeps each key's latest change by WriteTimestampMicros, in
// whatever file and order it comes, and turns a change without NewImage into
// a delete, in both views.
func TestReadChangesLatestWins(t *testing.T) {
	key := func(id string) map[string]any { return map[string]any{"user_id": map[string]any{"S": id}} }
	img := func(id, v string) map[string]any {
		return map[string]any{"user_id": map[string]any{"S": id}, "v": map[string]any{"S": v}}
	}
	for _, view := range []string{"NEW_AND_OLD_IMAGES", "NEW_IMAGE"} {
		root := t.TempDir()
		_, err := exporttest.Write(root, exporttest.Spec{Prefix: "p", ExportID: "01-x", Incremental: true, View: view, Records: [][]exporttest.Record{
			{{Keys: key("a"), New: img("a", "late"), Old: img("a", "mid"), Micros: 30}, {Keys: key("b"), Old: img("b", "x"), Micros: 5}},
			{{Keys: key("a"), New: img("a", "early"), Micros: 10}, {Keys: key("c"), New: img("c", "new"), Micros: 7}},
			{},
		}})
		require.NoError(t, err)
		store := exportverify.DirStore{Root: root}
		incs, err := FindIncrements(testctx.Bounded(t), store, []string{"p"})
		require.NoError(t, err)
		require.Len(t, incs, 1)
		assert.Equal(t, view, incs[0].View)
		changes, err := readChanges(testctx.Bounded(t), store, incs[0])
		require.NoError(t, err)
		require.Len(t, changes, 3, view)
		got := map[string]string{}
		for _, c := range changes {
			id := c.keys["user_id"].(*types.AttributeValueMemberS).Value
			got[id] = "deleted"
			if c.image != nil {
				got[id] = c.image["v"].(*types.AttributeValueMemberS).Value
			}
		}
		assert.Equal(t, map[string]string{"a": "late", "b": "deleted", "c": "new"}, got, view)
		assert.Equal(t, "b", changes[0].keys["user_id"].(*types.AttributeValueMemberS).Value, "ordered by WriteTimestampMicros")
	}
}
