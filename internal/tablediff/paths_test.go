package tablediff

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePath(t *testing.T) {
	good := map[string]string{
		"status": "status", "profile.name": "profile.name", "tags[0]": "tags[0]", "a.b[2].c": "a.b[2].c",
		"m[1][2]": "m[1][2]", "with space.x": "with space.x", "#odd:name": "#odd:name", "\x01ctl.y": "\x01ctl.y",
	}
	for in, want := range good {
		p, err := ParsePath(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, p.String())
	}
	for _, in := range []string{"", ".a", "a.", "a..b", "a[", "a[x]", "a[-1]", "a]", "a[1]b", "[1]"} {
		_, err := ParsePath(in)
		assert.Error(t, err, in)
	}
}

func TestProjectionPlaceholdersPerSegment_DDB_API_04(t *testing.T) {
	cases := []struct {
		attrs []string
		expr  string
		names map[string]string
	}{
		{[]string{"profile.name"}, "#p0, #p1.#p2", map[string]string{"#p0": "id", "#p1": "profile", "#p2": "name"}},
		{[]string{"tags[1]"}, "#p0, #p1", map[string]string{"#p0": "id", "#p1": "tags"}},
		{[]string{"a.b[2].c"}, "#p0, #p1.#p2", map[string]string{"#p0": "id", "#p1": "a", "#p2": "b"}},
		{[]string{"profile.name", "profile"}, "#p0, #p1", map[string]string{"#p0": "id", "#p1": "profile"}},
		{[]string{"profile", "profile.name"}, "#p0, #p1", map[string]string{"#p0": "id", "#p1": "profile"}},
		{[]string{"profile.name", "profile.name"}, "#p0, #p1.#p2", map[string]string{"#p0": "id", "#p1": "profile", "#p2": "name"}},
		{[]string{"id.x"}, "#p0", map[string]string{"#p0": "id"}},
		{[]string{"name.name"}, "#p0, #p1.#p1", map[string]string{"#p0": "id", "#p1": "name"}},
		{[]string{"select", "size"}, "#p0, #p1, #p2", map[string]string{"#p0": "id", "#p1": "select", "#p2": "size"}},
	}
	for _, c := range cases {
		expr, names := projection([]string{"id"}, c.attrs)
		require.NotNil(t, expr)
		assert.Equal(t, c.expr, *expr, "%v", c.attrs)
		assert.Equal(t, c.names, names, "%v", c.attrs)
	}
	expr, _ := projection([]string{"id"}, nil)
	assert.Nil(t, expr, "no attributes: whole items")
}

func TestLookupAndChecksumByPath(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := map[string]types.AttributeValue{
		"profile": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"name": s("ann"), "addr": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"city": s("\x01\x02")}}}},
		"tags":    &types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), s("b")}},
	}
	for path, want := range map[string]string{"profile.name": "ann", "profile.addr.city": "\x01\x02", "tags[1]": "b"} {
		v, ok := lookupAttr(item, path)
		require.True(t, ok, path)
		assert.Equal(t, want, v.(*types.AttributeValueMemberS).Value, path)
	}
	for _, path := range []string{"profile.nmae", "tags[2]", "tags.x", "profile[0]", "nope"} {
		_, ok := lookupAttr(item, path)
		assert.False(t, ok, path)
	}
	other := map[string]types.AttributeValue{
		"profile": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"name": s("bob"), "addr": item["profile"].(*types.AttributeValueMemberM).Value["addr"]}},
		"tags":    item["tags"],
	}
	assert.NotEqual(t, Checksum(item, []string{"profile.name"}), Checksum(other, []string{"profile.name"}))
	assert.Equal(t, Checksum(item, []string{"profile.addr.city", "tags[0]"}), Checksum(other, []string{"profile.addr.city", "tags[0]"}))
}

// TestPathIndexZero: index 0 is a list element like any other (looked up,
// cut from the projection), and an index never reads a map member, even one
// named "" (the name an index segment carries).
func TestPathIndexZero(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := map[string]types.AttributeValue{
		"tags":    &types.AttributeValueMemberL{Value: []types.AttributeValue{s("first"), s("second")}},
		"profile": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"": s("empty name"), "x": s("y")}},
	}
	for path, want := range map[string]string{"tags[0]": "first", "tags[1]": "second"} {
		v, ok := lookupAttr(item, path)
		require.True(t, ok, path)
		assert.Equal(t, want, v.(*types.AttributeValueMemberS).Value, path)
	}
	for _, path := range []string{"profile[0]", "profile[1]", "tags[2]", "tags[0].x", "tags[0][0]"} {
		v, ok := lookupAttr(item, path)
		assert.False(t, ok, "%s found %v", path, v)
	}

	for _, c := range []struct {
		attrs []string
		expr  string
		names map[string]string
	}{
		{[]string{"tags[0]"}, "#p0, #p1", map[string]string{"#p0": "id", "#p1": "tags"}},
		{[]string{"a[0].b"}, "#p0, #p1", map[string]string{"#p0": "id", "#p1": "a"}},
		{[]string{"m.n[0][1]"}, "#p0, #p1.#p2", map[string]string{"#p0": "id", "#p1": "m", "#p2": "n"}},
		// A name ParsePath refuses is read as one top-level name (Diff refuses it before).
		{[]string{"a[x]"}, "#p0, #p1", map[string]string{"#p0": "id", "#p1": "a[x]"}},
		{[]string{"b]", "c"}, "#p0, #p1, #p2", map[string]string{"#p0": "id", "#p1": "b]", "#p2": "c"}},
	} {
		expr, names := projection([]string{"id"}, c.attrs)
		require.NotNil(t, expr)
		assert.Equal(t, c.expr, *expr, "%v", c.attrs)
		assert.Equal(t, c.names, names, "%v", c.attrs)
	}
}
