package repair

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// UnchangedCondition is the repair conflict model's condition for one item,
// for other writers (dynops item, export revert): a ConditionExpression with
// its placeholders (DDB-API-04) that holds only while the item is still cur
// (every attribute equal), or the key is absent when cur is nil.
func UnchangedCondition(cur map[string]types.AttributeValue, keyNames []string) (expr string, names map[string]string, values map[string]types.AttributeValue, err error) {
	c, err := unchanged(cur, keyNames)
	if err != nil {
		return "", nil, nil, err
	}
	if len(c.values) == 0 {
		c.values = nil // DynamoDB refuses an empty ExpressionAttributeValues
	}
	return c.expr, c.names, c.values, nil
}
