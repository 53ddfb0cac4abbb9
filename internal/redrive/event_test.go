package redrive

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/ddbjson/streamtest"
)

// The rebuilt event carries every attribute type as the event source
// mapping delivers it, the record's metadata, and the TTL identity.
func TestBuildEventEveryAttributeType(t *testing.T) {
	created := time.Unix(1700000000, 0)
	img := streamtest.EveryAttributeType()
	keys := map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: "u1"}, "sk": &types.AttributeValueMemberN{Value: "2"}}
	recs := []types.Record{
		{EventID: aws.String("e1"), EventName: types.OperationTypeModify, EventSource: aws.String("aws:dynamodb"), EventVersion: aws.String("1.1"), AwsRegion: aws.String("eu-west-1"),
			Dynamodb: &types.StreamRecord{Keys: keys, NewImage: img, OldImage: keys, SequenceNumber: aws.String("100"), SizeBytes: aws.Int64(42),
				StreamViewType: types.StreamViewTypeNewAndOldImages, ApproximateCreationDateTime: &created}},
		{EventID: aws.String("e2"), EventName: types.OperationTypeRemove, Dynamodb: &types.StreamRecord{Keys: keys, SequenceNumber: aws.String("101")},
			UserIdentity: &types.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")}},
	}
	ev, err := BuildEvent("arn:stream", recs)
	require.NoError(t, err)
	got, err := json.Marshal(ev)
	require.NoError(t, err)
	var decoded struct {
		Records []map[string]any `json:"Records"`
	}
	require.NoError(t, json.Unmarshal(got, &decoded))
	require.Len(t, decoded.Records, 2)
	r := decoded.Records[0]
	assert.Equal(t, "e1", r["eventID"])
	assert.Equal(t, "MODIFY", r["eventName"])
	assert.Equal(t, "aws:dynamodb", r["eventSource"])
	assert.Equal(t, "1.1", r["eventVersion"])
	assert.Equal(t, "eu-west-1", r["awsRegion"])
	assert.Equal(t, "arn:stream", r["eventSourceARN"])
	d := r["dynamodb"].(map[string]any)
	assert.Equal(t, float64(1700000000), d["ApproximateCreationDateTime"])
	assert.Equal(t, "100", d["SequenceNumber"])
	assert.Equal(t, float64(42), d["SizeBytes"])
	assert.Equal(t, "NEW_AND_OLD_IMAGES", d["StreamViewType"])
	assert.Equal(t, map[string]any{"user_id": map[string]any{"S": "u1"}, "sk": map[string]any{"N": "2"}}, d["Keys"])
	assert.Equal(t, d["Keys"], d["OldImage"])
	assert.Equal(t, map[string]any{
		"s": map[string]any{"S": "x"}, "n": map[string]any{"N": "1.5"}, "b": map[string]any{"B": "aGk="},
		"t": map[string]any{"BOOL": true}, "z": map[string]any{"NULL": true}, "ss": map[string]any{"SS": []any{"a", "b"}},
		"ns": map[string]any{"NS": []any{"1", "2"}}, "bs": map[string]any{"BS": []any{"YQ=="}},
		"l": map[string]any{"L": []any{map[string]any{"S": "e"}, map[string]any{"N": "2"}}},
		"m": map[string]any{"M": map[string]any{"k": map[string]any{"BOOL": false}}},
	}, d["NewImage"])
	assert.Nil(t, r["userIdentity"])

	r = decoded.Records[1]
	assert.Equal(t, map[string]any{"type": "Service", "principalId": "dynamodb.amazonaws.com"}, r["userIdentity"], "a TTL delete says so")
	d = r["dynamodb"].(map[string]any)
	assert.NotContains(t, d, "NewImage")
}

func TestBuildEventRefuses(t *testing.T) {
	_, err := BuildEvent("arn:stream", []types.Record{{EventID: aws.String("e9")}})
	assert.ErrorContains(t, err, "stream record e9 has no dynamodb section")
	for name, sr := range map[string]*types.StreamRecord{
		"Keys":      {Keys: map[string]types.AttributeValue{"k": &types.UnknownUnionMember{Tag: "X"}}},
		"NewImage":  {NewImage: map[string]types.AttributeValue{"k": &types.UnknownUnionMember{Tag: "X"}}},
		"OldImage":  {OldImage: map[string]types.AttributeValue{"k": &types.UnknownUnionMember{Tag: "X"}}},
		"in a list": {NewImage: map[string]types.AttributeValue{"k": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.UnknownUnionMember{Tag: "X"}}}}},
		"in a map":  {NewImage: map[string]types.AttributeValue{"k": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"j": &types.UnknownUnionMember{Tag: "X"}}}}},
	} {
		_, err := BuildEvent("arn:stream", []types.Record{{EventID: aws.String("e1"), Dynamodb: sr}})
		assert.ErrorContains(t, err, "attribute k: ", name)
		assert.ErrorContains(t, err, "unknown attribute value type *types.UnknownUnionMember", name)
	}
}

func TestKeyString(t *testing.T) {
	assert.Equal(t, `sk=2, user_id="u\"1"`, KeyString(map[string]types.AttributeValue{
		"user_id": &types.AttributeValueMemberS{Value: `u"1`}, "sk": &types.AttributeValueMemberN{Value: "2"}}))
	assert.Equal(t, "b=b64:aGk=, z=*types.AttributeValueMemberBOOL", KeyString(map[string]types.AttributeValue{
		"b": &types.AttributeValueMemberB{Value: []byte("hi")}, "z": &types.AttributeValueMemberBOOL{Value: true}}))
	assert.Equal(t, "", KeyString(nil))
}
