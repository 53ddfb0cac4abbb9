package failover

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CanaryPrefix starts the partition key of every canary item; the failover
// role of modules/dr may write only items whose partition key starts with it
// (a dynamodb:LeadingKeys condition).
const CanaryPrefix = "dynops-dr-canary#"

// canary is the item a switch writes in the new region to prove it takes writes.
type canary struct {
	hashKey string
	key     map[string]types.AttributeValue
	keyID   string // the key's part after CanaryPrefix
	nonce   string // this run's value, in the item
}

// newCanary builds the canary item's key for a table with the given key
// schema. The partition key must be a string (see CanaryPrefix).
func newCanary(hash KeyAttr, rng *KeyAttr, runID string) (canary, error) {
	if hash.Type != "S" {
		return canary{}, fmt.Errorf("the canary needs a string partition key; %s is of type %q", hash.Name, hash.Type)
	}
	c := canary{hashKey: hash.Name, keyID: runID, nonce: runID, key: map[string]types.AttributeValue{
		hash.Name: &types.AttributeValueMemberS{Value: CanaryPrefix + runID},
	}}
	if rng != nil {
		switch rng.Type {
		case "S":
			c.key[rng.Name] = &types.AttributeValueMemberS{Value: CanaryPrefix + runID}
		case "N":
			c.key[rng.Name] = &types.AttributeValueMemberN{Value: "0"}
		case "B":
			c.key[rng.Name] = &types.AttributeValueMemberB{Value: []byte(CanaryPrefix)}
		default:
			return canary{}, fmt.Errorf("sort key %s has unknown type %q", rng.Name, rng.Type)
		}
	}
	return c, nil
}

func (c canary) describe() string { return c.hashKey + "=" + CanaryPrefix + c.keyID }

// write puts the canary (a new item only, DDB-API-01) with a TTL of an hour,
// so that a canary a failed run leaves behind expires.
func (c canary) write(ctx context.Context, db DynamoDB, table string, now time.Time) error {
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                &table,
		Item:                     c.item(now),
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": c.hashKey},
	})
	return c.wrote(ctx, db, table, err)
}

// put writes the canary over any item of its key (the drain canary, whose
// key is the same for every run: one a killed run left is replaced).
func (c canary) put(ctx context.Context, db DynamoDB, table string, now time.Time) error {
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: c.item(now)})
	if err != nil {
		return fmt.Errorf("writing the canary item: %w", err)
	}
	return nil
}

func (c canary) item(now time.Time) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		"dynops_canary": &types.AttributeValueMemberS{Value: c.nonce},
		"written_at":    &types.AttributeValueMemberS{Value: now.UTC().Format(time.RFC3339Nano)},
		"ttl":           &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(time.Hour).Unix(), 10)},
	}
	for k, v := range c.key {
		item[k] = v
	}
	return item
}

func (c canary) wrote(ctx context.Context, db DynamoDB, table string, err error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		// The SDK retries a put whose answer was lost; when the first attempt
		// had landed, the retry fails its own condition. The item is this
		// run's when it carries this run's nonce (read back, strongly
		// consistent): the write took.
		ours, rerr := c.read(ctx, db, table, true)
		if rerr == nil && ours {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("writing the canary item: %w; and reading it back: %v", err, rerr)
		}
	}
	if err != nil {
		return fmt.Errorf("writing the canary item: %w", err)
	}
	return nil
}

// read reports whether the canary is in the table. consistent asks for a
// strongly consistent read (write-then-read in one region, DDB-API-05).
func (c canary) read(ctx context.Context, db DynamoDB, table string, consistent bool) (bool, error) {
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: c.key, ConsistentRead: aws.Bool(consistent)})
	if err != nil {
		return false, fmt.Errorf("reading the canary item: %w", err)
	}
	v, ok := out.Item["dynops_canary"].(*types.AttributeValueMemberS)
	return ok && v.Value == c.nonce, nil
}

func (c canary) delete(ctx context.Context, db DynamoDB, table string) error {
	if _, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: c.key}); err != nil {
		return fmt.Errorf("deleting the canary item: %w", err)
	}
	return nil
}

// found reads the item at the canary's key (strongly consistent) and
// returns its nonce and when it was written; ok is false when there is none.
func (c canary) found(ctx context.Context, db DynamoDB, table string) (nonce string, at time.Time, ok bool, err error) {
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: c.key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", time.Time{}, false, fmt.Errorf("reading the canary item: %w", err)
	}
	n, ok := out.Item["dynops_canary"].(*types.AttributeValueMemberS)
	if !ok {
		return "", time.Time{}, false, nil
	}
	if w, isS := out.Item["written_at"].(*types.AttributeValueMemberS); isS {
		at, _ = time.Parse(time.RFC3339Nano, w.Value)
	}
	return n.Value, at, true, nil
}
