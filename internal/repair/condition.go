package repair

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/tablediff"
)

// UnchangedCondition is the repair conflict model's condition for one item,
// for other writers (dynops item, export revert): a ConditionExpression with
// its placeholders (DDB-API-04) that holds only while the item is still cur
// (every attribute equal), or the key is absent when cur is nil.
func UnchangedCondition(cur map[string]types.AttributeValue, keyNames []string) (expr string, names map[string]string, values map[string]types.AttributeValue, err error) {
	return Lock{KeyNames: keyNames}.Condition(cur)
}

// Lock is how a write over an item read before (repair, export revert,
// dynops item) proves the item is still the one read.
//
// Without a version attribute the condition is the read image attribute by
// attribute (UnchangedCondition). DynamoDB's condition language cannot say
// "no attribute besides these", so an attribute another writer adds between
// the read and a PutItem is not covered: the writes ask for the item they
// replaced (ReturnValues ALL_OLD: strongly consistent, no read capacity) and
// ChangedSinceRead names what the write replaced that was not as read, so
// the caller reports it as a conflict.
//
// With Version (--version-attribute NAME), optimistic locking as the AWS
// SDKs' DynamoDBMapper (@DynamoDBVersionAttribute) and the Enhanced Client's
// VersionedRecordExtension do it: the condition is on the version alone
// (equal to the one read, or absent when the item read had none) and the
// write carries the next version (Next), so every writer that keeps the
// version makes a concurrent write fail.
type Lock struct {
	KeyNames []string
	// Version is the table's version attribute (a number), "" for none.
	Version string
}

// Condition is the ConditionExpression, with its placeholders, that holds
// only while the item is still cur (nil: the key absent).
func (l Lock) Condition(cur map[string]types.AttributeValue) (expr string, names map[string]string, values map[string]types.AttributeValue, err error) {
	var c condition
	switch {
	case l.Version != "" && cur != nil:
		c = condition{expr: "attribute_not_exists(#v)", names: map[string]string{"#v": l.Version}}
		if v, ok := cur[l.Version]; ok {
			if _, err := versionOf(l.Version, v); err != nil {
				return "", nil, nil, err
			}
			c = condition{expr: "#v = :v", names: map[string]string{"#v": l.Version}, values: map[string]types.AttributeValue{":v": v}}
		}
	default:
		if c, err = unchanged(cur, l.KeyNames); err != nil {
			return "", nil, nil, err
		}
	}
	if len(c.values) == 0 {
		c.values = nil // DynamoDB refuses an empty ExpressionAttributeValues
	}
	return c.expr, c.names, c.values, nil
}

// Next is item as the write puts it: with a version attribute, a copy whose
// version is one more than the highest of item's and cur's (1 for an item
// that had none, as the SDKs start); item itself without one.
func (l Lock) Next(item, cur map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	if l.Version == "" || item == nil {
		return item, nil
	}
	top := new(big.Int)
	for _, it := range []map[string]types.AttributeValue{item, cur} {
		if v, ok := it[l.Version]; ok {
			n, err := versionOf(l.Version, v)
			if err != nil {
				return nil, err
			}
			if n.Cmp(top) > 0 {
				top = n
			}
		}
	}
	out := make(map[string]types.AttributeValue, len(item)+1)
	for k, v := range item {
		out[k] = v
	}
	out[l.Version] = &types.AttributeValueMemberN{Value: top.Add(top, big.NewInt(1)).String()}
	return out, nil
}

// Same says whether a and b are the same item leaving the version attribute
// out (both absent counts as the same): a write of this lock changes the
// version, so a re-run compares what it wrote without it.
func (l Lock) Same(a, b map[string]types.AttributeValue) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return tablediff.Checksum(l.strip(a), nil) == tablediff.Checksum(l.strip(b), nil)
}

func (l Lock) strip(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if _, ok := item[l.Version]; l.Version == "" || !ok {
		return item
	}
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		if k != l.Version {
			out[k] = v
		}
	}
	return out
}

// ItemWriter is the part of the API a Lock's write uses.
type ItemWriter interface {
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// ItemReader is the part of the API WrittenMeanwhile uses.
type ItemReader interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// WrittenMeanwhile reads key again after a write's condition failed: when
// the item is already as the write leaves it (want; nil: deleted; the
// version attribute aside), another run of the same write (a duplicate
// shard, a retried run) wrote it first, and the key is done, not a
// conflict. A read that fails says no: the caller reports the conflict.
func (l Lock) WrittenMeanwhile(ctx context.Context, db ItemReader, table string, key, want map[string]types.AttributeValue) bool {
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false
	}
	cur := out.Item
	if len(cur) == 0 {
		cur = nil
	}
	return l.Same(cur, want)
}

// ErrUnlockable is an item the lock cannot put a condition on (a whole
// image past the expression limit, a version that is not a number).
var ErrUnlockable = errors.New("no condition for this item")

// Write puts after in table (deletes key when after is nil) on the
// condition that the item is still cur, and returns the item it replaced
// (ReturnValues ALL_OLD; compare it with cur: ChangedSinceRead). A condition
// that no longer holds is a *types.ConditionalCheckFailedException in the
// error chain; an item no condition can be put on, ErrUnlockable.
func (l Lock) Write(ctx context.Context, db ItemWriter, table string, key, cur, after map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	expr, names, values, err := l.Condition(cur)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnlockable, err)
	}
	if after == nil {
		out, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: key, ReturnValues: types.ReturnValueAllOld,
			ConditionExpression: &expr, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
		if err != nil {
			return nil, fmt.Errorf("deleting an item from %s: %w", table, err)
		}
		return out.Attributes, nil
	}
	out, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: after, ReturnValues: types.ReturnValueAllOld,
		ConditionExpression: &expr, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
	if err != nil {
		return nil, fmt.Errorf("writing an item to %s: %w", table, err)
	}
	return out.Attributes, nil
}

// versionOf reads a version attribute's value: a whole number.
func versionOf(name string, v types.AttributeValue) (*big.Int, error) {
	if n, ok := v.(*types.AttributeValueMemberN); ok {
		if i, ok := new(big.Int).SetString(n.Value, 10); ok {
			return i, nil
		}
	}
	return nil, fmt.Errorf("%w: the version attribute %q is not a whole number in this item, so it cannot be locked on: check --version-attribute", ErrVersion, name)
}

// ErrVersion is a version attribute whose value is not a whole number.
var ErrVersion = errors.New("not a version")

// ChangedSinceRead names the attributes, sorted, in which old (the item a
// write replaced, from ReturnValues ALL_OLD) differs from read (the item
// read before the write): added, changed or removed by another writer in
// between. The write replaced them; nil when old is what was read.
func ChangedSinceRead(read, old map[string]types.AttributeValue) []string {
	var names []string
	for n, v := range old {
		if r, ok := read[n]; !ok || !sameValue(r, v) {
			names = append(names, n)
		}
	}
	for n := range read {
		if _, ok := old[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
