package ddbjson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every attribute type survives DynamoDB JSON both ways, as exports write it.
func TestRoundTripEveryType(t *testing.T) {
	in := `{"b":{"B":"AAEC"},"bool":{"BOOL":true},"bs":{"BS":["AQ==","Ag=="]},"l":{"L":[{"S":"x"},{"N":"1"},{"M":{"k":{"NULL":true}}}]},` +
		`"m":{"M":{"inner":{"SS":["a","b"]}}},"n":{"N":"-1.5e3"},"ns":{"NS":["1","2"]},"null":{"NULL":true},"s":{"S":"ctl\u0001 \"q\" 日本"},"ss":{"SS":["x"]}}`
	item, err := DecodeItem(json.RawMessage(in))
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 2}, item["b"].(*types.AttributeValueMemberB).Value)
	assert.Equal(t, "ctl\x01 \"q\" 日本", item["s"].(*types.AttributeValueMemberS).Value)
	out, err := EncodeItem(item)
	require.NoError(t, err)
	back, err := DecodeItem(out)
	require.NoError(t, err)
	assert.Equal(t, item, back)
}

func TestDecodeRefusesBadValues(t *testing.T) {
	for _, in := range []string{`{"a":"plain"}`, `{"a":{"S":"x","N":"1"}}`, `{"a":{"X":"1"}}`, `{"a":{"L":[{"Q":1}]}}`, `[1]`, `{"a":{"B":"not base64!"}}`} {
		_, err := DecodeItem(json.RawMessage(in))
		assert.Error(t, err, in)
	}
}

func TestMicros(t *testing.T) {
	n, err := Micros(json.RawMessage(`{"N":"1772323200000001"}`))
	require.NoError(t, err)
	assert.EqualValues(t, 1772323200000001, n)
	for _, in := range []string{`1772323200000001`, `{"S":"1"}`, `{"N":"x"}`} {
		_, err := Micros(json.RawMessage(in))
		assert.Error(t, err, in)
	}
}

// TestAbbrev: values of up to 60 bytes are quoted whole in errors, longer
// ones cut at 60 with "...".
func TestAbbrev(t *testing.T) {
	for n, want := range map[int]string{59: strings.Repeat("x", 59), 60: strings.Repeat("x", 60), 61: strings.Repeat("x", 60) + "..."} {
		if got := abbrev([]byte(strings.Repeat("x", n))); got != want {
			t.Errorf("abbrev(%d bytes) = %q, want %q", n, got, want)
		}
	}
}
