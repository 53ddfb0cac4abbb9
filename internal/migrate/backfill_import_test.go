package migrate

import (
	"bytes"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/ddbjson"
)

// Each staged line is one item of ImportTable's DYNAMODB_JSON input:
// {"Item": {...}} and a newline, read back by the export-line decoder
// with every attribute type intact.
func TestEncodeImportLineRoundTrips(t *testing.T) {
	item := map[string]types.AttributeValue{
		"PK":  &types.AttributeValueMemberS{Value: "TENANT#1 \"quoted\" é"},
		"SK":  &types.AttributeValueMemberS{Value: "USER#2"},
		"n":   &types.AttributeValueMemberN{Value: "-12.5e3"},
		"b":   &types.AttributeValueMemberB{Value: []byte{0, 1, 2}},
		"ok":  &types.AttributeValueMemberBOOL{Value: true},
		"nil": &types.AttributeValueMemberNULL{Value: true},
		"l":   &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}}},
		"m":   &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberN{Value: "1"}}},
		"ss":  &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
	}
	line, err := encodeImportLine(item)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(line, []byte(`{"Item":{`)), "%s", line)
	assert.True(t, bytes.HasSuffix(line, []byte("}\n")), "%s", line)
	assert.Equal(t, 1, bytes.Count(line, []byte("\n")), "one item per line")
	got, err := ddbjson.Decode(bytes.TrimSuffix(line, []byte("\n")))
	require.NoError(t, err)
	assert.Equal(t, item, got.Item)
}
