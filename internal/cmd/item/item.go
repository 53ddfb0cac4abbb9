// Package item implements `dynops item get|query|put|update|delete`: one
// item read or changed with protection, typed confirmation, a condition on
// the image read before the write, and an audit record of every write.
package item

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/item"
	"github.com/dynops/dynops/internal/throttle"
)

// Interrupted is what an interrupt of a writing item command leaves behind:
// one conditional PutItem, UpdateItem or DeleteItem either happened whole or
// not at all; the audit's `started` record (with the before image's hash) is
// written before it. Undo: `dynops item get` shows the image now; put the
// before image back with `dynops item put` (its hash is in the audit).
const Interrupted = "one conditional write, applied whole or not at all; undo with dynops item put of the before image"

// NewCmdItem returns `dynops item`.
func NewCmdItem(f *factory.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "item <command>",
		Short: "Read or fix single items: get, query, put, update, delete (audited, conditional)",
		Long: `Read or fix single items on a bad day, with what the AWS CLI lacks:
writes are dry runs unless --yes, conditional on the image read just before
(or --condition), protected tables need their name typed (--confirm) and a
--reason, and every write is audited with the before and after images'
hashes (the images themselves are redacted).

--key, --item and --set take a JSON object in DynamoDB JSON
('{"id": {"S": "u1"}}') or plain JSON ('{"id": "u1", "n": 3}', types
inferred: string S, number N, bool BOOL, null NULL, array L, object M); the
output says which was read. Attribute names are taken literally: a dot or a
reserved word is part of the name (every name is a placeholder, DDB-API-04).
See docs/item.md.`,
	}
	cmd.AddCommand(newCmdGet(f), newCmdQuery(f), newCmdPut(f), newCmdUpdate(f), newCmdDelete(f))
	return cmd
}

// table is what the commands know of a table: its client and key.
type table struct {
	db     *dynamodb.Client
	name   string
	schema item.Schema
	// indexes are the key schemas of the table's indexes by name.
	indexes map[string]item.Schema
}

func openTable(ctx context.Context, f *factory.Factory, name string) (*table, error) {
	clients, err := f.AWS(ctx)
	if err != nil {
		return nil, err
	}
	db := clients.DynamoDB()
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &name})
	if err != nil {
		var nf *types.ResourceNotFoundException
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("table %q not found in %s: check --table and --region: %w", name, clients.Region(), err)
		}
		return nil, fmt.Errorf("describing table %q: %w", name, err)
	}
	td := out.Table
	attrTypes := map[string]string{}
	for _, a := range td.AttributeDefinitions {
		attrTypes[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	t := &table{db: db, name: name, schema: schemaOf(td.KeySchema, attrTypes), indexes: map[string]item.Schema{}}
	for _, g := range td.GlobalSecondaryIndexes {
		t.indexes[aws.ToString(g.IndexName)] = schemaOf(g.KeySchema, attrTypes)
	}
	for _, l := range td.LocalSecondaryIndexes {
		t.indexes[aws.ToString(l.IndexName)] = schemaOf(l.KeySchema, attrTypes)
	}
	return t, nil
}

func schemaOf(ks []types.KeySchemaElement, attrTypes map[string]string) item.Schema {
	var s item.Schema
	for _, k := range ks {
		n := aws.ToString(k.AttributeName)
		if k.KeyType == types.KeyTypeHash {
			s.Hash, s.HashType = n, attrTypes[n]
		} else {
			s.Range, s.RangeType = n, attrTypes[n]
		}
	}
	return s
}

// read is a strongly consistent GetItem: the image a write is conditional on.
func (t *table) read(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("reading the item from %s: %w", t.name, throttle.WithKey(err, string(image(key))))
	}
	return out.Item, nil
}

// image is an item as DynamoDB JSON for output (null when absent).
func image(it map[string]types.AttributeValue) json.RawMessage {
	if it == nil {
		return json.RawMessage("null")
	}
	raw, err := ddbjson.EncodeItem(it)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", "unencodable: "+err.Error()))
	}
	return raw
}

func parseUsage(flag, raw string) (item.Parsed, error) {
	if raw == "" {
		return item.Parsed{}, factory.UsageErrorf("%s is required: a JSON object such as '{\"id\": \"u1\"}'", flag)
	}
	p, err := item.Parse(flag, raw)
	if err != nil {
		return item.Parsed{}, factory.UsageErrorf("%w", err)
	}
	return p, nil
}

func isConditionFailed(err error) bool {
	var cf *types.ConditionalCheckFailedException
	return errors.As(err, &cf)
}
