package tablediff

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncodeKeyRoundTrip(t *testing.T) {
	item := map[string]types.AttributeValue{
		"tenant_key": &types.AttributeValueMemberS{Value: "TENANT#t1"},
		"order_key":  &types.AttributeValueMemberN{Value: "42"},
		"blob":       &types.AttributeValueMemberB{Value: []byte{0, 1, 2}},
		"other":      &types.AttributeValueMemberS{Value: "not part of the key"},
	}
	b, err := EncodeKey(item, []string{"tenant_key", "order_key", "blob"})
	require.NoError(t, err)
	assert.Equal(t, `{"blob":{"B":"AAEC"},"order_key":{"N":"42"},"tenant_key":{"S":"TENANT#t1"}}`, string(b),
		"canonical DynamoDB JSON, names sorted, only the key")
	key, err := DecodeKey(b)
	require.NoError(t, err)
	assert.Equal(t, map[string]types.AttributeValue{
		"tenant_key": item["tenant_key"], "order_key": item["order_key"], "blob": item["blob"],
	}, key)
}

func TestEncodeKeyRefusesMissingOrNonScalarKey(t *testing.T) {
	_, err := EncodeKey(map[string]types.AttributeValue{}, []string{"user_id"})
	assert.ErrorContains(t, err, `no key attribute "user_id"`)
	_, err = EncodeKey(map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberBOOL{Value: true}}, []string{"user_id"})
	assert.ErrorContains(t, err, "not S, N or B")
	_, err = DecodeKey([]byte(`{"user_id":{"BOOL":"true"}}`))
	assert.ErrorContains(t, err, `type "BOOL" is not S, N or B`)
}

func TestChecksumIgnoresOrderOfMapsAndSets(t *testing.T) {
	a := map[string]types.AttributeValue{
		"roles": &types.AttributeValueMemberSS{Value: []string{"reader", "writer"}},
		"m":     &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": &types.AttributeValueMemberN{Value: "1"}, "y": &types.AttributeValueMemberBOOL{Value: true}}},
	}
	b := map[string]types.AttributeValue{
		"m":     &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"y": &types.AttributeValueMemberBOOL{Value: true}, "x": &types.AttributeValueMemberN{Value: "1"}}},
		"roles": &types.AttributeValueMemberSS{Value: []string{"writer", "reader"}},
	}
	assert.Equal(t, Checksum(a, nil), Checksum(b, nil))
	assert.Len(t, Checksum(a, nil), 32)
}

func TestChecksumSeesEveryDifference(t *testing.T) {
	base := func() map[string]types.AttributeValue {
		return map[string]types.AttributeValue{
			"s": &types.AttributeValueMemberS{Value: "ab"},
			"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "a"}, &types.AttributeValueMemberS{Value: "b"}}},
			"n": &types.AttributeValueMemberNULL{Value: true},
		}
	}
	want := Checksum(base(), nil)
	cases := map[string]func(m map[string]types.AttributeValue){
		"value changed": func(m map[string]types.AttributeValue) { m["s"] = &types.AttributeValueMemberS{Value: "ac"} },
		"type changed":  func(m map[string]types.AttributeValue) { m["s"] = &types.AttributeValueMemberB{Value: []byte("ab")} },
		"list order changed": func(m map[string]types.AttributeValue) {
			m["l"].(*types.AttributeValueMemberL).Value[0] = &types.AttributeValueMemberS{Value: "b"}
		},
		"attribute added":   func(m map[string]types.AttributeValue) { m["x"] = &types.AttributeValueMemberBOOL{Value: false} },
		"attribute removed": func(m map[string]types.AttributeValue) { delete(m, "n") },
		"boundary moved (ab|c)": func(m map[string]types.AttributeValue) {
			m["s"] = &types.AttributeValueMemberS{Value: "a"}
			m["sb"] = &types.AttributeValueMemberS{Value: ""}
		},
		"set instead of list": func(m map[string]types.AttributeValue) {
			m["l"] = &types.AttributeValueMemberSS{Value: []string{"a", "b"}}
		},
		"number string differs":  func(m map[string]types.AttributeValue) { m["s"] = &types.AttributeValueMemberN{Value: "ab"} },
		"null replaced by false": func(m map[string]types.AttributeValue) { m["n"] = &types.AttributeValueMemberBOOL{Value: false} },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			m := base()
			change(m)
			assert.NotEqual(t, want, Checksum(m, nil))
		})
	}
}

func TestChecksumOverChosenAttributes(t *testing.T) {
	a := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "1"}, "status": &types.AttributeValueMemberS{Value: "ok"}, "seen": &types.AttributeValueMemberN{Value: "1"}}
	b := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "1"}, "status": &types.AttributeValueMemberS{Value: "ok"}, "seen": &types.AttributeValueMemberN{Value: "2"}}
	assert.Equal(t, Checksum(a, []string{"id", "status"}), Checksum(b, []string{"id", "status"}))
	assert.NotEqual(t, Checksum(a, nil), Checksum(b, nil))
}

func TestReadKeysRefusesOtherFiles(t *testing.T) {
	_, err := readKeys(strings.NewReader(`{"kind":"changed","key":{}}`), "x.jsonl", func(KeyRecord) error { return nil })
	assert.ErrorContains(t, err, "not a keys file")
	_, err = readKeys(strings.NewReader(`{"diff":{"source":"a","target":"b"}}
{"kind":"deleted","key":{}}`), "x.jsonl", func(KeyRecord) error { return nil })
	assert.ErrorContains(t, err, `line 2: unknown kind "deleted"`)
}

func TestBucketsFor(t *testing.T) {
	assert.Equal(t, 16, bucketsFor(0))
	assert.Equal(t, 16, bucketsFor(1_000_000))
	assert.Equal(t, 40, bucketsFor(10_000_000))
	// 250,000 items a bucket, rounded up: the edges of a bucket.
	assert.Equal(t, 40, bucketsFor(9_999_999))
	assert.Equal(t, 41, bucketsFor(10_000_001))
	assert.Equal(t, 16, bucketsFor(4_000_000))
	assert.Equal(t, 17, bucketsFor(4_000_001))
	assert.Equal(t, 512, bucketsFor(1_000_000_000))
}

func TestProjectionUsesPlaceholders_DDB_API_04(t *testing.T) {
	expr, names := projection([]string{"user_id"}, []string{"status", "size", "user_id", "a.b"})
	require.NotNil(t, expr)
	assert.Equal(t, "#p0, #p1, #p2, #p3.#p4", *expr, "no raw names in the expression, the key once, a.b a document path")
	assert.Equal(t, map[string]string{"#p0": "user_id", "#p1": "status", "#p2": "size", "#p3": "a", "#p4": "b"}, names)
	expr, names = projection([]string{"user_id"}, nil)
	assert.Nil(t, expr)
	assert.Nil(t, names)
}

// jsonKey is EncodeKey as first written (maps through encoding/json): the
// fast encoder must give the same bytes, or keys written before would not
// match keys read now.
func jsonKey(t testing.TB, item map[string]types.AttributeValue, keyNames []string) []byte {
	m := map[string]map[string]string{}
	for _, k := range keyNames {
		switch v := item[k].(type) {
		case *types.AttributeValueMemberS:
			m[k] = map[string]string{"S": v.Value}
		case *types.AttributeValueMemberN:
			m[k] = map[string]string{"N": v.Value}
		case *types.AttributeValueMemberB:
			m[k] = map[string]string{"B": base64.StdEncoding.EncodeToString(v.Value)}
		}
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

func TestEncodeKeyMatchesEncodingJSON(t *testing.T) {
	strs := []string{"", "u1", "TENANT#t1", `q"uote`, `back\slash`, "<tag>&amp;", "tab\tnew\nline\rcr", "\b\f\x00\x01\x1f\x7f",
		"日本語", "emoji 😀", "line\u2028sep\u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80 surrogate", strings.Repeat("x", 2048)}
	for b := 0; b < 256; b++ { // every byte alone and inside text
		strs = append(strs, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ { // random bytes, random runes
		raw := make([]byte, rnd.IntN(40))
		for j := range raw {
			raw[j] = byte(rnd.IntN(256))
		}
		strs = append(strs, string(raw), string([]rune{rune(rnd.IntN(0x10FFFF)), rune(rnd.IntN(0x3000))}))
	}
	for i, s := range strs {
		cases := []struct {
			item  map[string]types.AttributeValue
			names []string
		}{
			{map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: s}}, []string{"id"}},
			{map[string]types.AttributeValue{s: &types.AttributeValueMemberS{Value: "v"}, "sk": &types.AttributeValueMemberN{Value: "1"}}, []string{s, "sk"}},
			{map[string]types.AttributeValue{"pk": &types.AttributeValueMemberB{Value: []byte(s)}, "a": &types.AttributeValueMemberS{Value: s}}, []string{"pk", "a"}},
			{map[string]types.AttributeValue{"z": &types.AttributeValueMemberN{Value: "-1.5e10"}, "a": &types.AttributeValueMemberS{Value: s}}, []string{"z", "a"}},
		}
		for j, c := range cases {
			if c.names[0] == "sk" { // a name equal to the other key name is no key
				continue
			}
			got, err := EncodeKey(c.item, c.names)
			require.NoError(t, err)
			require.Equal(t, string(jsonKey(t, c.item, c.names)), string(got), "string %d case %d: %q", i, j, s)
			back, err := DecodeKey(got)
			require.NoError(t, err, "round trip of %q", s)
			for _, n := range c.names {
				if utf8.ValidString(n) {
					assert.Contains(t, back, n)
				}
			}
		}
	}
}

// variedItems returns n items of varied shape: nested maps and lists, sets
// in any order, every attribute type.
func variedItems(n int) []map[string]types.AttributeValue {
	rnd := rand.New(rand.NewPCG(3, 4))
	str := func() string { return fmt.Sprintf("v%d", rnd.IntN(50)) }
	var value func(depth int) types.AttributeValue
	value = func(depth int) types.AttributeValue {
		switch k := rnd.IntN(11); {
		case k == 0 && depth < 3:
			m := map[string]types.AttributeValue{}
			for i := rnd.IntN(5); i > 0; i-- {
				m[fmt.Sprintf("k%d", rnd.IntN(10))] = value(depth + 1)
			}
			return &types.AttributeValueMemberM{Value: m}
		case k == 1 && depth < 3:
			var l []types.AttributeValue
			for i := rnd.IntN(4); i > 0; i-- {
				l = append(l, value(depth+1))
			}
			return &types.AttributeValueMemberL{Value: l}
		case k == 2:
			var ss []string
			for _, i := range rnd.Perm(6)[:1+rnd.IntN(5)] {
				ss = append(ss, fmt.Sprintf("m%d", i))
			}
			return &types.AttributeValueMemberSS{Value: ss}
		case k == 3:
			var ns []string
			for _, i := range rnd.Perm(6)[:1+rnd.IntN(5)] {
				ns = append(ns, fmt.Sprint(i*10))
			}
			return &types.AttributeValueMemberNS{Value: ns}
		case k == 4:
			var bs [][]byte
			for _, i := range rnd.Perm(6)[:1+rnd.IntN(5)] {
				bs = append(bs, []byte{byte(i), 0xff})
			}
			return &types.AttributeValueMemberBS{Value: bs}
		case k == 5:
			return &types.AttributeValueMemberB{Value: []byte(str())}
		case k == 6:
			return &types.AttributeValueMemberBOOL{Value: rnd.IntN(2) == 0}
		case k == 7:
			return &types.AttributeValueMemberNULL{Value: true}
		case k == 8:
			return &types.AttributeValueMemberN{Value: fmt.Sprint(rnd.IntN(1000))}
		}
		return &types.AttributeValueMemberS{Value: str()}
	}
	items := make([]map[string]types.AttributeValue, n)
	for i := range items {
		it := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: fmt.Sprintf("item-%d", i)}}
		for j := rnd.IntN(8); j > 0; j-- {
			it[fmt.Sprintf("a%d", rnd.IntN(12))] = value(0)
		}
		items[i] = it
	}
	return items
}

func TestSumMatchesFirstChecksum(t *testing.T) {
	attrSets := [][]string{nil, {"a1"}, {"a2", "a1", "a2", "missing"}, {"id", "a3", "a5", "a7", "a9"}}
	for i, it := range variedItems(3000) {
		for _, attrs := range attrSets {
			want := refChecksum(it, attrs)
			s := Sum(it, attrs)
			require.Equal(t, want, hex.EncodeToString(s[:]), "item %d attrs %v", i, attrs)
			require.Equal(t, want, Checksum(it, attrs))
		}
	}
}

// BenchmarkReduce is the work diff does per scanned item beyond the SDK's
// decoding: the canonical key and the checksum (200-byte items of the
// pitr suite's shape).
func BenchmarkReduce(b *testing.B) {
	items := make([]map[string]types.AttributeValue, 1000)
	for i := range items {
		items[i] = map[string]types.AttributeValue{
			"user_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("user_%05d", i)},
			"email":   &types.AttributeValueMemberS{Value: fmt.Sprintf("u%d@example.com", i)},
			"status":  &types.AttributeValueMemberS{Value: "active"},
			"score":   &types.AttributeValueMemberN{Value: fmt.Sprint(i * 7)},
			"roles":   &types.AttributeValueMemberSS{Value: []string{"reader", "writer"}},
			"profile": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"display_name": &types.AttributeValueMemberS{Value: fmt.Sprintf("User %d", i)},
				"langs":        &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "ja"}}},
			}},
			"padding": &types.AttributeValueMemberS{Value: fmt.Sprintf("%0150d", i)},
		}
	}
	keyNames := []string{"user_id"}
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			it := items[i%len(items)]
			_ = jsonKey(b, it, keyNames)
			_ = refChecksum(it, nil)
		}
	})
	b.Run("now", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for i := 0; b.Loop(); i++ {
			it := items[i%len(items)]
			var err error
			if buf, err = AppendKey(buf[:0], it, keyNames); err != nil {
				b.Fatal(err)
			}
			_ = Sum(it, nil)
		}
	})
}
