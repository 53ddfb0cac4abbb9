package ddbjson

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toJSON is a reference encoder of DynamoDB JSON through encoding/json.
func toJSON(v types.AttributeValue) any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *types.AttributeValueMemberBS:
		var s []string
		for _, b := range v.Value {
			s = append(s, base64.StdEncoding.EncodeToString(b))
		}
		return map[string]any{"BS": s}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": mapJSON(v.Value)}
	case *types.AttributeValueMemberL:
		l := []any{}
		for _, e := range v.Value {
			l = append(l, toJSON(e))
		}
		return map[string]any{"L": l}
	}
	panic(fmt.Sprintf("%T", v))
}

func mapJSON(m map[string]types.AttributeValue) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = toJSON(v)
	}
	return out
}

func randomItem(rnd *rand.Rand, depth int) map[string]types.AttributeValue {
	texts := []string{"", "plain", `q"uote`, `back\slash`, "tab\tline\n", "日本語", "emoji 😀", "<&>", "\u2028", "\x01ctl"}
	txt := func() string { return texts[rnd.IntN(len(texts))] }
	m := map[string]types.AttributeValue{}
	for i := rnd.IntN(7); i >= 0; i-- {
		var v types.AttributeValue
		switch rnd.IntN(10) {
		case 0:
			v = &types.AttributeValueMemberS{Value: txt()}
		case 1:
			v = &types.AttributeValueMemberN{Value: fmt.Sprint(rnd.IntN(1e6) - 5e5)}
		case 2:
			v = &types.AttributeValueMemberB{Value: []byte(txt())}
		case 3:
			v = &types.AttributeValueMemberBOOL{Value: rnd.IntN(2) == 0}
		case 4:
			v = &types.AttributeValueMemberNULL{Value: true}
		case 5:
			v = &types.AttributeValueMemberSS{Value: []string{txt(), "x"}}
		case 6:
			v = &types.AttributeValueMemberNS{Value: []string{"1", "2.5", "-3e10"}}
		case 7:
			v = &types.AttributeValueMemberBS{Value: [][]byte{{0, 1}, []byte(txt())}}
		case 8:
			if depth < 3 {
				v = &types.AttributeValueMemberM{Value: randomItem(rnd, depth+1)}
			} else {
				v = &types.AttributeValueMemberS{Value: "leaf"}
			}
		default:
			l := []types.AttributeValue{}
			if depth < 3 {
				for k := range randomItem(rnd, depth+1) {
					l = append(l, &types.AttributeValueMemberS{Value: k})
				}
			}
			v = &types.AttributeValueMemberL{Value: l}
		}
		m[fmt.Sprintf("%s%d", txt(), i)] = v
	}
	return m
}

func TestDecodeRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 2000; i++ {
		item := randomItem(rnd, 0)
		item["id"] = &types.AttributeValueMemberS{Value: fmt.Sprint(i)}
		full, err := json.Marshal(map[string]any{"Item": mapJSON(item)})
		require.NoError(t, err)
		l, err := Decode(full)
		require.NoError(t, err, "%s", full)
		require.Equal(t, item, l.Item, "%s", full)
		require.NoError(t, Check(full))

		keys := map[string]types.AttributeValue{"id": item["id"]}
		incr, err := json.Marshal(map[string]any{"Metadata": map[string]any{"WriteTimestampMicros": map[string]string{"N": "1"}},
			"Keys": mapJSON(keys), "NewImage": mapJSON(item)})
		require.NoError(t, err)
		l, err = Decode(incr)
		require.NoError(t, err, "%s", incr)
		assert.Equal(t, keys, l.Keys)
		assert.Equal(t, item, l.NewImage)
		assert.Nil(t, l.OldImage)
	}
}

func TestCheckRefusesWhatIsNotDynamoDBJSON(t *testing.T) {
	cases := map[string]struct{ line, err string }{
		"not JSON":               {`hello`, "invalid JSON"},
		"truncated":              {`{"Item":{"id":{"S":"a"}}`, "invalid JSON"},
		"text after":             {`{"Item":{"id":{"S":"a"}}} x`, "text after"},
		"empty object":           {`{}`, "neither"},
		"empty item":             {`{"Item":{}}`, "neither"},
		"only metadata":          {`{"Metadata":{"x":1}}`, "neither"},
		"untyped attribute":      {`{"Item":{"id":"a"}}`, `attribute "id" is not one typed`},
		"two types":              {`{"Item":{"id":{"S":"a","N":"1"}}}`, `attribute "id" is not one typed`},
		"no type":                {`{"Item":{"id":{}}}`, `attribute "id" is not one typed`},
		"unknown type":           {`{"Item":{"id":{"STR":"a"}}}`, `unknown type "STR"`},
		"bad nested type":        {`{"Item":{"m":{"M":{"x":{"Q":1}}}}}`, `unknown type "Q"`},
		"bad string escape":      {`{"Item":{"id":{"S":"a\q"}}}`, "bad escape"},
		"control char in string": {"{\"Item\":{\"id\":{\"S\":\"a\x01\"}}}", "control character"},
		"bad number in metadata": {`{"Metadata":{"n":01},"Keys":{"id":{"S":"a"}}}`, "invalid JSON"},
		"keys not an object":     {`{"Keys":5}`, "invalid JSON"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			assert.ErrorContains(t, Check([]byte(c.line)), c.err)
			_, err := Decode([]byte(c.line))
			assert.ErrorContains(t, err, c.err)
		})
	}
}

func TestLineDecodeRefusesBadValues(t *testing.T) {
	for _, line := range []string{
		`{"Item":{"b":{"B":"not base64!"}}}`,
		`{"Item":{"b":{"BOOL":"yes"}}}`,
		`{"Item":{"b":{"NULL":false}}}`,
		`{"Item":{"b":{"SS":"a"}}}`,
		`{"Item":{"b":{"SS":[1]}}}`,
		`{"Item":{"b":{"M":null}}}`,
	} {
		_, err := Decode([]byte(line))
		assert.Error(t, err, line)
	}
}

// TestCheckAgreesWithEncodingJSON: the hand-written scanner accepts exactly
// the JSON that encoding/json accepts, for values it only validates (an
// export's "Metadata" member): numbers, literals, strings with every escape,
// whitespace, nesting; the class of grammar slips, not one example.
func TestCheckAgreesWithEncodingJSON(t *testing.T) {
	values := []string{
		`0`, `-0`, `7`, `10`, `19`, `90`, `-9`, `0.5`, `9.09`, `1e9`, `1E+0`, `2e-09`, `123456789`, `0.0`,
		`01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `--1`, `0x10`, `1.e3`, `/`, `:`,
		`true`, `false`, `null`, `tru`, `nul`, `fals`, `True`, `nulll`,
		`""`, `"a b"`, `" "`, `"~"`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`,
		`"\u0041"`, `"\u09aF"`, `"\uAbCd"`, `"\u0000"`, `"\ufFfF"`,
		`"\u004"`, `"\u00G1"`, `"\u00g1"`, `"\u/000"`, `"\u:000"`, `"\u@000"`, `"\u` + "`" + `000"`, `"\x41"`, `"\q"`, `"a`, "\"\x1f\"", "\"\x7f\"",
		`[]`, `[0]`, `[0,9]`, `[ 1 , [ 2 ] ]`, `[1,]`, `[,1]`, `[1 2]`, `{}`, `{"a":0}`, `{ "a" : [ ] , "b" : { } }`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1,}`,
		" \t\n\r[\n 1,\t2\r]\n ",
	}
	for _, v := range values {
		line := `{"Metadata":` + v + `,"Keys":{"id":{"S":"a"}}}`
		want := json.Valid([]byte(line))
		if err := Check([]byte(line)); (err == nil) != want {
			t.Errorf("Check(%s) = %v; encoding/json valid: %v", line, err, want)
		}
		if _, err := Decode([]byte(line)); (err == nil) != want {
			t.Errorf("Decode(%s) = %v; encoding/json valid: %v", line, err, want)
		}
	}
}

// TestCheckAtTheEndOfTheLine: a line cut anywhere inside a value is refused
// with an error (never a panic, never accepted), and the error names the
// byte where the line went wrong, 1-based.
func TestCheckAtTheEndOfTheLine(t *testing.T) {
	for _, line := range []string{
		`{"Metadata":"\u0041`, `{"Metadata":"\u1`, `{"Metadata":"\u`, `{"Metadata":"abc`, `{"Metadata":"a\`,
		`{"Metadata":tru`, `{"Metadata":true`, `{"Metadata":nul`, `{"Metadata":1e`, `{"Metadata":[1,`,
		`{"Item":{"id":{"S":"abc`, `{"Item":{"id":{"S":"abc"`, `{"Item":{"id":{"S"`, `{"Item":nul`,
	} {
		// Capacity = length: a read past the end panics instead of
		// reading the slack of a rounded-up allocation.
		b := []byte(line)
		b = b[:len(b):len(b)]
		require.NotPanics(t, func() {
			assert.Error(t, Check(b), line)
			_, err := Decode(b)
			assert.Error(t, err, line)
		}, line)
	}
	for line, want := range map[string]string{
		`{"Item":x}`:          `invalid JSON at byte 9: expected '{', found 'x'`,
		`{"Metadata":"\u0041`: `invalid JSON at byte 20: unterminated string`,
		`{"Metadata":"\u1`:    `invalid JSON at byte 15: bad \u escape`,
		`{"Metadata":true`:    `invalid JSON at byte 17: expected '}', found the end of the line`,
		`{"Metadata":tru`:     `invalid JSON at byte 13: unexpected 't'`,
		`{"Metadata":0`:       `invalid JSON at byte 14: expected '}', found the end of the line`,
	} {
		assert.EqualError(t, Check([]byte(line)), want, line)
	}
}

// TestCheckNesting: encoding/json's limit of 10,000 levels, counted per
// level and not per value: 10,000 nested arrays pass, 10,001 do not, and
// any number of siblings pass.
func TestCheckNesting(t *testing.T) {
	nested := func(n int) []byte {
		return []byte(`{"Metadata":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `,"Keys":{"id":{"S":"a"}}}`)
	}
	require.NoError(t, Check(nested(maxDepth)))
	assert.ErrorContains(t, Check(nested(maxDepth+1)), "nested too deep")
	siblings := []byte(`{"Metadata":[` + strings.Repeat(`[],{},`, maxDepth) + `[]],"Keys":{"id":{"S":"a"}}}`)
	require.NoError(t, Check(siblings))
}

// TestDecodeWhitespaceAndEscapes: a pretty-printed line decodes to the same
// item as a compact one, and escaped strings decode to their value (a
// string of escapes only included).
func TestDecodeWhitespaceAndEscapes(t *testing.T) {
	item := map[string]types.AttributeValue{
		"id":  &types.AttributeValueMemberS{Value: `\`},
		"two": &types.AttributeValueMemberS{Value: `\\`},
		"q":   &types.AttributeValueMemberS{Value: `"a" b`},
		"l":   &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: "09"}, &types.AttributeValueMemberBOOL{Value: true}}},
		"m":   &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": &types.AttributeValueMemberNULL{Value: true}}},
	}
	for _, indent := range []string{"", " ", "\t", "\r\n"} {
		b, err := json.MarshalIndent(map[string]any{"Item": mapJSON(item)}, indent, indent)
		require.NoError(t, err)
		b = append(append([]byte(" \n"), b...), "\t\r\n"...)
		l, err := Decode(b)
		require.NoError(t, err, "%q", b)
		assert.Equal(t, item, l.Item, "%q", b)
		require.NoError(t, Check(b))
	}
}

// TestCheckListElementsAreTyped: Check (which builds nothing) still
// requires every element of an L and every member of an M to be typed.
func TestCheckListElementsAreTyped(t *testing.T) {
	for _, line := range []string{
		`{"Item":{"l":{"L":[1]}}}`,
		`{"Item":{"l":{"L":[{"S":"a"},"b"]}}}`,
		`{"Item":{"l":{"L":[{"Q":"a"}]}}}`,
		`{"Item":{"m":{"M":{"x":1}}}}`,
	} {
		assert.Error(t, Check([]byte(line)), line)
	}
	require.NoError(t, Check([]byte(`{"Item":{"l":{"L":[{"S":"a"},{"L":[]}]}}}`)))
}
