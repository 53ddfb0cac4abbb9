package routes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

const good = `version: 1
routes:
  - name: tenants
    table: dev-x-tenants
    match: { PK: "TENANT#*", SK: "TENANT#*" }
    rename: { GSI1PK: tenant_list_pk }
    drop: [GSI2PK]
  - table: dev-x-users
    match:
      PK: "TENANT#*"
      SK: "USER#*"
  - table: dev-x-notices
    match: { PK: GLOBAL }
`

func TestParseGood(t *testing.T) {
	r, err := Parse("routes.yaml", []byte(good))
	require.NoError(t, err)
	assert.Equal(t, []string{"PK", "SK"}, r.SourceKey)
	require.Len(t, r.Routes, 3)
	assert.Equal(t, "tenants", r.Routes[0].Name)
	assert.Equal(t, "dev-x-users", r.Routes[1].Name)
	assert.Equal(t, []int{3, 8, 12}, []int{r.Routes[0].Line, r.Routes[1].Line, r.Routes[2].Line})
	assert.Equal(t, []string{"dev-x-tenants", "dev-x-users", "dev-x-notices"}, r.Tables())
}

// Every kind of bad file is refused with the line and the field.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string // substrings of the error
	}{
		{"empty", "", []string{"routes.yaml: the file is empty"}}, // no line: "routes.yaml:0:" is no place
		{"not yaml", "version: [1\n", []string{"routes.yaml:1:", "did not find expected"}},
		{"no version", "routes:\n  - table: a\n    match: {PK: x}\n", []string{"version", "is 0"}},
		{"version 2", "version: 2\nroutes:\n  - table: a\n    match: {PK: x}\n", []string{":1:", "version", "is 2"}},
		{"no routes", "version: 1\n", []string{"routes", "no rules"}},
		{"empty routes list", "version: 1\nroutes: []\n", []string{"routes.yaml:2: routes: no rules"}},
		{"unclosed [ on line 5", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    drop: [GSI1PK\n  - table: b\n", []string{"routes.yaml:5:", "did not find expected ',' or ']'"}},
		{"mis-indented key on line 6", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n  - table: b\n   match: {PK: y}\n", []string{"routes.yaml:6:"}},
		{"unknown top field", "version: 1\nroute:\n  - table: a\n", []string{"line 2", "route", "not a top-level field"}},
		{"unknown rule field", "version: 1\nroutes:\n  - table: a\n    tabel: b\n    match: {PK: x}\n", []string{"line 4", "tabel", "not a rule field"}},
		{"wrong type", "version: 1\nroutes:\n  - table: a\n    match: [PK]\n", []string{"line 4"}},
		{"missing table", "version: 1\nroutes:\n  - match: {PK: x}\n", []string{":3:", "routes[0].table", "missing"}},
		{"missing match", "version: 1\nroutes:\n  - table: a\n", []string{":3:", "routes[0].match", "missing"}},
		{"empty prefix", "version: 1\nroutes:\n  - table: a\n    match:\n      PK: \"\"\n", []string{":5:", "routes[0].match.PK", "empty pattern"}},
		{"star inside", "version: 1\nroutes:\n  - table: a\n    match: {PK: \"A*B\"}\n", []string{":4:", "match.PK", "may only end"}},
		{"non-key match", "version: 1\nroutes:\n  - table: a\n    match: {type: user}\n", []string{"match.type", "not a key attribute", "PK, SK"}},
		{"rename key", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    rename: {SK: sort}\n", []string{":5:", "rename.SK", "key attribute"}},
		{"rename onto key", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    rename:\n      GSI1PK: PK\n", []string{":6:", "rename.GSI1PK", "onto PK"}},
		{"rename onto seq", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    rename: {a: dynops_migrate_seq}\n", []string{"rename.a", "orders changes"}},
		{"rename onto itself", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    rename: {a: a}\n", []string{"onto itself"}},
		{"two renames same target", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    rename: {a: c, b: c}\n", []string{"both rename onto c"}},
		{"rename chain", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    rename: {a: b, b: c}\n", []string{"chains"}},
		{"rename and drop", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    rename: {a: b}\n    drop: [a]\n", []string{"also in drop"}},
		{"rename onto dropped", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    rename: {a: b}\n    drop: [b]\n", []string{"drop removes"}},
		{"drop key", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    drop: [PK]\n", []string{"routes[0].drop", "key attribute"}},
		{"drop twice", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    drop: [a, a]\n", []string{"twice"}},
		{"drop empty", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    drop: [\"\"]\n", []string{"empty attribute"}},
		{"shadowed same", "version: 1\nroutes:\n  - table: a\n    match: {PK: \"T#*\"}\n  - table: b\n    match: {PK: \"T#*\"}\n", []string{":6:", "rule 2", "never match", "rule 1", "line 3"}},
		{"shadowed, block match", "version: 1\nroutes:\n  - table: a\n    match: {PK: \"T#*\"}\n  - table: b\n    match:\n      PK: \"T#1\"\n", []string{"routes.yaml:6: routes[1].match: rule 2"}},
		{"shadowed exact", "version: 1\nroutes:\n  - table: a\n    match: {PK: A}\n  - table: b\n    match: {PK: A}\n", []string{"rule 2", "never match"}},
		{"drop key, block list", "version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    drop:\n      - PK\n", []string{"routes.yaml:5: routes[0].drop"}},
		{"shadowed by wider prefix", "version: 1\nroutes:\n  - table: a\n    match: {PK: \"T#*\"}\n  - table: b\n    match: {PK: \"T#1*\", SK: \"U#*\"}\n", []string{"rule 2", "never match"}},
		{"shadowed exact by prefix", "version: 1\nroutes:\n  - table: a\n    match: {SK: \"U#*\"}\n  - table: b\n    match: {PK: GLOBAL, SK: \"U#1\"}\n", []string{"never match"}},
		{"shadowed by catch-all", "version: 1\nroutes:\n  - table: a\n    match: {PK: \"*\"}\n  - table: b\n    match: {SK: \"X\"}\n", []string{"never match"}},
		{"source key three", "version: 1\nsource_key: [a, b, c]\nroutes:\n  - table: a\n    match: {a: x}\n", []string{":2:", "source_key"}},
		{"source key dup", "version: 1\nsource_key: [a, a]\nroutes:\n  - table: a\n    match: {a: x}\n", []string{"source_key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("routes.yaml", []byte(c.text))
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// Overlapping rules that do not shadow each other are fine: first match wins.
func TestFirstMatchWins(t *testing.T) {
	r, err := Parse("r.yaml", []byte(`version: 1
routes:
  - table: prefs
    match: { SK: "USER_PREFS#*" }
  - table: users
    match: { PK: "TENANT#*", SK: "USER*" }
  - table: exact
    match: { PK: GLOBAL, SK: "NOTICE#1" }
  - table: notices
    match: { PK: GLOBAL }
  - table: rest
    match: { PK: "*" }
`))
	require.NoError(t, err)
	cases := []struct{ pk, sk, want string }{
		{"TENANT#1", "USER_PREFS#USER#1", "prefs"},
		{"TENANT#1", "USER#1", "users"},
		{"TENANT#1", "USERX", "users"},
		{"GLOBAL", "NOTICE#1", "exact"},
		{"GLOBAL", "NOTICE#10", "notices"},
		{"GLOBALX", "NOTICE#1", "rest"},
		{"X", "Y", "rest"},
	}
	for _, c := range cases {
		got := r.Find(map[string]types.AttributeValue{"PK": s(c.pk), "SK": s(c.sk)})
		require.NotNil(t, got, c.pk+"/"+c.sk)
		assert.Equal(t, c.want, got.Table, c.pk+"/"+c.sk)
	}
	// A number key or a missing key attribute matches no string pattern.
	assert.Nil(t, r.Find(map[string]types.AttributeValue{"PK": &types.AttributeValueMemberN{Value: "1"}, "SK": s("x")}))
}

func TestNoMatch(t *testing.T) {
	r, err := Parse("r.yaml", []byte(good))
	require.NoError(t, err)
	for _, k := range [][2]string{{"JUNK#1", "USER#1"}, {"TENANT#1", "JUNK"}, {"GLOBALX", "NOTICE#1"}, {"tenant#1", "user#1"}} {
		assert.Nil(t, r.Find(map[string]types.AttributeValue{"PK": s(k[0]), "SK": s(k[1])}), k)
	}
}

func TestTransform(t *testing.T) {
	r, err := Parse("r.yaml", []byte(good))
	require.NoError(t, err)
	rt := r.Routes[0]
	out, err := rt.Transform(map[string]types.AttributeValue{"PK": s("TENANT#1"), "SK": s("TENANT#1"), "GSI1PK": s("TENANT"), "GSI2PK": s("x"), "name": s("n")})
	require.NoError(t, err)
	assert.Equal(t, map[string]types.AttributeValue{"PK": s("TENANT#1"), "SK": s("TENANT#1"), "tenant_list_pk": s("TENANT"), "name": s("n")}, out)
	// Absent attributes are simply absent.
	out, err = rt.Transform(map[string]types.AttributeValue{"PK": s("TENANT#1"), "SK": s("TENANT#1")})
	require.NoError(t, err)
	assert.Len(t, out, 2)
	// A rename onto an attribute the item has would lose a value.
	_, err = rt.Transform(map[string]types.AttributeValue{"PK": s("TENANT#1"), "SK": s("TENANT#1"), "GSI1PK": s("a"), "tenant_list_pk": s("b")})
	require.ErrorContains(t, err, "already has tenant_list_pk")
}

func TestSwapRenameIsAllowed(t *testing.T) {
	// a->b and b->a would be a chain; refused as ambiguous.
	_, err := Parse("r.yaml", []byte("version: 1\nroutes:\n  - table: a\n    match: {PK: x}\n    rename: {a: b, b: a}\n"))
	require.ErrorContains(t, err, "chains")
}

func TestLoad(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorContains(t, err, "reading routes file")
	p := filepath.Join(t.TempDir(), "r.yaml")
	require.NoError(t, os.WriteFile(p, []byte(good), 0o600))
	r, err := Load(p)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(r.Path, "r.yaml"))
}

// An exact pattern covers only the same exact value: rules on other values,
// or a prefix of the same value after the exact one, are not shadowed.
func TestExactRulesShadowOnlyTheSameValue(t *testing.T) {
	for _, second := range []string{"B", "AB", "A*", "a"} {
		t.Run(second, func(t *testing.T) {
			r, err := Parse("r.yaml", []byte("version: 1\nroutes:\n  - table: a\n    match: {PK: A}\n  - table: b\n    match: {PK: \""+second+"\"}\n"))
			require.NoError(t, err)
			assert.Len(t, r.Routes, 2)
		})
	}
}
