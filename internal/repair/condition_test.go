package repair

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sv(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func nv(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// TestLockWithAVersionAttribute: optimistic locking as the SDKs' mappers do
// it: the condition is on the version read (absent when the item had none,
// the key absent for no item), the write carries one more than the highest
// version seen (1 to start), a version that is not a whole number is
// refused, and Same leaves the version out.
func TestLockWithAVersionAttribute(t *testing.T) {
	l := Lock{KeyNames: []string{"id"}, Version: "ver"}
	cur := map[string]types.AttributeValue{"id": sv("a"), "size": nv("1"), "ver": nv("7")}
	expr, names, values, err := l.Condition(cur)
	require.NoError(t, err)
	assert.Equal(t, "#v = :v", expr, "the version alone, not the whole image")
	assert.Equal(t, map[string]string{"#v": "ver"}, names)
	assert.Equal(t, nv("7"), values[":v"])

	expr, _, values, err = l.Condition(map[string]types.AttributeValue{"id": sv("a")})
	require.NoError(t, err)
	assert.Equal(t, "attribute_not_exists(#v)", expr)
	assert.Nil(t, values, "no empty ExpressionAttributeValues")
	expr, names, _, err = l.Condition(nil)
	require.NoError(t, err)
	assert.Equal(t, "attribute_not_exists(#k0)", expr)
	assert.Equal(t, map[string]string{"#k0": "id"}, names)

	next, err := l.Next(map[string]types.AttributeValue{"id": sv("a"), "ver": nv("3")}, cur)
	require.NoError(t, err)
	assert.Equal(t, nv("8"), next["ver"], "one more than the highest seen")
	next, err = l.Next(map[string]types.AttributeValue{"id": sv("a")}, nil)
	require.NoError(t, err)
	assert.Equal(t, nv("1"), next["ver"], "a first version is 1")
	big, err := l.Next(map[string]types.AttributeValue{"id": sv("a")}, map[string]types.AttributeValue{"ver": nv("99999999999999999999999999999999999999")})
	require.NoError(t, err)
	assert.Equal(t, nv("100000000000000000000000000000000000000"), big["ver"], "DynamoDB numbers have 38 digits")
	_, err = l.Next(map[string]types.AttributeValue{"id": sv("a")}, map[string]types.AttributeValue{"ver": sv("7")})
	assert.ErrorContains(t, err, `version attribute "ver" is not a whole number`)
	_, _, _, err = l.Condition(map[string]types.AttributeValue{"ver": nv("1.5")})
	assert.ErrorContains(t, err, "--version-attribute")

	assert.True(t, l.Same(next, map[string]types.AttributeValue{"id": sv("a"), "ver": nv("5")}), "the version left out")
	assert.False(t, l.Same(next, map[string]types.AttributeValue{"id": sv("b")}))
	assert.True(t, l.Same(nil, nil))
	assert.False(t, Lock{}.Same(next, map[string]types.AttributeValue{"id": sv("a"), "ver": nv("5")}), "without a version attribute every attribute counts")
	same, err := Lock{}.Next(cur, nil)
	require.NoError(t, err)
	assert.Equal(t, cur, same, "without a version attribute the item is written as it is")
}

// TestChangedSinceRead: what a write replaced (ALL_OLD) compared with what
// was read: an attribute added, changed or removed in between is named.
func TestChangedSinceRead(t *testing.T) {
	read := map[string]types.AttributeValue{"id": sv("a"), "n": nv("1"), "gone": sv("g")}
	assert.Nil(t, ChangedSinceRead(read, read))
	old := map[string]types.AttributeValue{"id": sv("a"), "n": nv("2"), "x": sv("added")}
	assert.Equal(t, []string{"gone", "n", "x"}, ChangedSinceRead(read, old))
	assert.Equal(t, []string{"gone", "id", "n"}, ChangedSinceRead(read, nil), "deleted in between")
	assert.Nil(t, ChangedSinceRead(nil, nil))
}
