package tablediff_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

func user(i int, name, city string, tags []string, note string) map[string]types.AttributeValue {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	var l []types.AttributeValue
	for _, t := range tags {
		l = append(l, s(t))
	}
	return map[string]types.AttributeValue{
		"user_id": s(fmt.Sprintf("u%03d", i)),
		"profile": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"name":    s(name),
			"address": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"city": s(city)}},
		}},
		"tags": &types.AttributeValueMemberL{Value: l},
		"note": s(note),
	}
}

// TestDiffDocumentPaths: --attributes takes document paths (map members and
// list elements) and compares exactly those parts, on the emulator through
// Scan with a placeholder per segment; a listed attribute no item has is an
// error, not "the same". Values include control characters.
func TestDiffDocumentPaths_DDB_API_04(t *testing.T) {
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	src, dst := "dev-"+id+"-user-restored", "dev-"+id+"-user"
	for _, n := range []string{src, dst} {
		fixture.Create(t, db, fixture.Table{Name: n, HashKey: "user_id"})
	}
	var a, b []map[string]types.AttributeValue
	for i := 0; i < 40; i++ {
		name, city, tags, note := fmt.Sprintf("name\x01%d", i), "city\x02\x1f", []string{"t0", "t1\x03"}, "n"
		a = append(a, user(i, name, city, tags, note))
		switch {
		case i < 3: // profile.name differs
			name += "!"
		case i == 3: // profile.address.city differs
			city = "elsewhere"
		case i < 6: // tags[1] differs
			tags = []string{"t0", "other"}
		case i < 10: // note differs
			note = "changed"
		}
		b = append(b, user(i, name, city, tags, note))
	}
	fixture.Put(t, db, src, a)
	fixture.Put(t, db, dst, b)

	cases := []struct {
		attrs   string
		changed int64
		err     string
	}{
		{"profile.name", 3, ""},
		{"profile.address.city", 1, ""},
		{"tags[1]", 2, ""},
		{"tags[0]", 0, ""},
		{"profile", 4, ""},
		{"profile.name,profile", 4, ""},
		{"profile.name,tags[1]", 5, ""},
		{"note", 4, ""},
		{"", 10, ""},
		{"profile.nmae", 0, "profile.nmae: no item of"},
		{"nope,profile.name", 0, "nope: no item of"},
		{"tags[7]", 0, "tags[7]: no item of"},
		{"tags[", 0, "unbalanced ["},
	}
	for _, c := range cases {
		t.Run(c.attrs, func(t *testing.T) {
			var attrs []string
			if c.attrs != "" {
				attrs = strings.Split(c.attrs, ",")
			}
			rep, err := tablediff.Diff(context.Background(), db, tablediff.Options{Source: src, Target: dst, Attributes: attrs, Segments: 2, TempDir: t.TempDir()})
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.changed, rep.Changed)
			assert.Zero(t, rep.OnlyInSource+rep.OnlyInTarget)
		})
	}
}
