package item

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestParseFormats(t *testing.T) {
	cases := []struct {
		raw    string
		format Format
		types  map[string]string
	}{
		{`{"id": "u1", "n": 3, "ok": true, "x": null, "l": [1, "a"], "m": {"a": 1}}`, FormatPlain,
			map[string]string{"id": "S", "n": "N", "ok": "BOOL", "x": "NULL", "l": "L", "m": "M"}},
		{`{"id": {"S": "u1"}, "n": {"N": "3"}, "s": {"SS": ["a"]}}`, FormatDynamoDB, map[string]string{"id": "S", "n": "N", "s": "SS"}},
		// one plain value makes the whole object plain: {"S": "x"} is then a map
		{`{"id": {"S": "u1"}, "n": 3}`, FormatPlain, map[string]string{"id": "M", "n": "N"}},
		{`{"a.b": "dots", "size": 1}`, FormatPlain, map[string]string{"a.b": "S", "size": "N"}},
	}
	for _, c := range cases {
		p, err := Parse("--item", c.raw)
		if err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		if p.Format != c.format {
			t.Errorf("%s: format %s, want %s", c.raw, p.Format, c.format)
		}
		for n, want := range c.types {
			if p.Types[n] != want {
				t.Errorf("%s: %s is %s, want %s", c.raw, n, p.Types[n], want)
			}
		}
		if !strings.Contains(p.Describe(), string(c.format)) {
			t.Errorf("Describe %q does not say the format", p.Describe())
		}
	}
	// numbers keep their text (no float rounding)
	p, _ := Parse("--key", `{"n": 12345678901234567890.5}`)
	if got := p.Attrs["n"].(*types.AttributeValueMemberN).Value; got != "12345678901234567890.5" {
		t.Errorf("number read as %s", got)
	}
}

func TestParseRefusals(t *testing.T) {
	for _, raw := range []string{``, `[]`, `"x"`, `{}`, `{"id": `, `{"": "x"}`, `{"id": {"N": 3}}`} {
		_, err := Parse("--key", raw)
		if err == nil {
			t.Errorf("%q accepted", raw)
			continue
		}
		if !strings.Contains(err.Error(), "--key") {
			t.Errorf("%q: error %q does not name the flag", raw, err)
		}
	}
}

func TestSchemaCheckKey(t *testing.T) {
	s := Schema{Hash: "pk", HashType: "S", Range: "sk", RangeType: "N"}
	good := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberN{Value: "1"}}
	if err := s.CheckKey("--key", good); err != nil {
		t.Fatal(err)
	}
	bad := []map[string]types.AttributeValue{
		{"pk": &types.AttributeValueMemberS{Value: "a"}},
		{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "1"}},
		{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberN{Value: "1"}, "x": &types.AttributeValueMemberN{Value: "1"}},
	}
	for i, k := range bad {
		if err := s.CheckKey("--key", k); err == nil {
			t.Errorf("bad key %d accepted", i)
		}
	}
}

func TestBuildUpdatePlaceholders(t *testing.T) {
	s := Schema{Hash: "pk", HashType: "S"}
	set := map[string]types.AttributeValue{"size": &types.AttributeValueMemberN{Value: "1"}, "a.b": &types.AttributeValueMemberS{Value: "x"}}
	u, err := BuildUpdate(s, set, []string{"ttl"})
	if err != nil {
		t.Fatal(err)
	}
	if u.Expr != "SET #s0 = :s0, #s1 = :s1 REMOVE #r0" {
		t.Errorf("expression %q", u.Expr)
	}
	if u.Names["#s0"] != "a.b" || u.Names["#s1"] != "size" || u.Names["#r0"] != "ttl" {
		t.Errorf("names %v", u.Names)
	}
	for _, c := range []struct {
		set    map[string]types.AttributeValue
		remove []string
	}{
		{nil, nil},
		{map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}}, nil},
		{nil, []string{"pk"}},
		{set, []string{"size"}},
		{nil, []string{""}},
	} {
		if _, err := BuildUpdate(s, c.set, c.remove); err == nil {
			t.Errorf("update %v / %v accepted", c.set, c.remove)
		}
	}
}

func TestHash(t *testing.T) {
	a := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}}
	b := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "b"}}
	if Hash(a) == Hash(b) || Hash(a) != Hash(map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}}) {
		t.Error("hash does not tell images apart")
	}
	if Hash(nil) != "absent" {
		t.Error("absent item")
	}
}

func TestCheckHashTakesWhatHashWrites(t *testing.T) {
	for _, ok := range []string{"absent", Hash(map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "u1"}})} {
		if err := CheckHash(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"sha256:nothex!", "sha256:0123", "sha256:0123456789ABCDEF", "0123456789abcdef", "sha256:0123456789abcdef0", "Absent", ""} {
		if err := CheckHash(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
