package ddbjson_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/ddbjson/streamtest"
)

// A stream image becomes the same item, every attribute type and nesting.
func TestFromStreamEveryAttributeType(t *testing.T) {
	in := streamtest.EveryAttributeType()
	want := map[string]types.AttributeValue{
		"s": &types.AttributeValueMemberS{Value: "x"}, "n": &types.AttributeValueMemberN{Value: "1.5"},
		"b": &types.AttributeValueMemberB{Value: []byte("hi")}, "t": &types.AttributeValueMemberBOOL{Value: true},
		"z": &types.AttributeValueMemberNULL{Value: true}, "ss": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}}, "bs": &types.AttributeValueMemberBS{Value: [][]byte{[]byte("a")}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "e"}, &types.AttributeValueMemberN{Value: "2"}}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberBOOL{Value: false}}},
	}
	got, err := ddbjson.FromStream(in)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	for name, bad := range map[string]stypes.AttributeValue{
		"top":       &stypes.UnknownUnionMember{Tag: "X"},
		"in a list": &stypes.AttributeValueMemberL{Value: []stypes.AttributeValue{&stypes.AttributeValueMemberS{Value: "ok"}, &stypes.UnknownUnionMember{Tag: "X"}}},
		"in a map":  &stypes.AttributeValueMemberM{Value: map[string]stypes.AttributeValue{"j": &stypes.UnknownUnionMember{Tag: "X"}}},
	} {
		_, err := ddbjson.FromStream(map[string]stypes.AttributeValue{"k": bad})
		assert.ErrorContains(t, err, "attribute k: ", name)
		assert.ErrorContains(t, err, "unknown attribute value type *types.UnknownUnionMember", name)
	}
}
