package tablediff

import (
	"strings"
	"testing"

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
