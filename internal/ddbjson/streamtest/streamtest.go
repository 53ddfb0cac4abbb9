// Package streamtest holds test fixtures of DynamoDB Streams images, shared by
// the packages that read stream records (redrive, migrate).
package streamtest

import "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

// EveryAttributeType is a stream image with one attribute of every type
// (S, N, B, BOOL, NULL, SS, NS, BS) and a nested list and map.
func EveryAttributeType() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"s": &types.AttributeValueMemberS{Value: "x"}, "n": &types.AttributeValueMemberN{Value: "1.5"},
		"b": &types.AttributeValueMemberB{Value: []byte("hi")}, "t": &types.AttributeValueMemberBOOL{Value: true},
		"z": &types.AttributeValueMemberNULL{Value: true}, "ss": &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}}, "bs": &types.AttributeValueMemberBS{Value: [][]byte{[]byte("a")}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "e"}, &types.AttributeValueMemberN{Value: "2"}}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberBOOL{Value: false}}},
	}
}
