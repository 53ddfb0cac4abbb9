package item

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/item"
	"github.com/dynops/dynops/internal/throttle"
)

func newCmdGet(f *factory.Factory) *cobra.Command {
	var tableName, key string
	var attrs []string
	var consistent bool
	cmd := &cobra.Command{
		Use:   "get --table T --key JSON [--attributes a,b] [--consistent]",
		Short: "Read one item by its key",
		Example: `  dynops item get --table prod-hoge-user --key '{"user_id": "u1"}'
  dynops item get --table prod-hoge-order --key '{"order_id": {"S": "o1"}, "seq": {"N": "3"}}' --consistent`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tableName == "" {
				return factory.UsageErrorf("item get needs --table TABLE and --key JSON")
			}
			ctx := cmd.Context()
			t, k, err := keyed(ctx, f, tableName, "--key", key)
			if err != nil {
				return err
			}
			in := &dynamodb.GetItemInput{TableName: &t.name, Key: k.Attrs, ConsistentRead: aws.Bool(consistent)}
			if len(attrs) > 0 {
				proj, names, err := item.Projection(attrs)
				if err != nil {
					return factory.UsageErrorf("%w", err)
				}
				in.ProjectionExpression, in.ExpressionAttributeNames = &proj, names
			}
			out, err := t.db.GetItem(ctx, in)
			if err != nil {
				return fmt.Errorf("reading the item from %s: %w", t.name, throttle.WithKey(err, string(image(k.Attrs))))
			}
			return printItems(f, t.name, k, []map[string]types.AttributeValue{out.Item}, out.Item != nil, nil)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&tableName, "table", "", "table name")
	fl.StringVar(&key, "key", "", "the item's key: a JSON object (DynamoDB JSON or plain JSON)")
	fl.StringSliceVar(&attrs, "attributes", nil, "top-level attributes to read (default: all)")
	fl.BoolVar(&consistent, "consistent", false, "strongly consistent read (default: eventually consistent, DDB-API-05)")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd, "table")
	return cmd
}

func newCmdQuery(f *factory.Factory) *cobra.Command {
	var tableName, key, index string
	var limit int32
	var consistent bool
	cmd := &cobra.Command{
		Use:   "query --table T --key JSON [--index I] [--limit N]",
		Short: "Read the items of one partition (the --key names only the partition key)",
		Example: `  dynops item query --table prod-hoge-order --key '{"user_id": "u1"}' --limit 10
  dynops item query --table prod-hoge-order --index gsi1 --key '{"status": "open"}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tableName == "" {
				return factory.UsageErrorf("item query needs --table TABLE and --key JSON (the partition key)")
			}
			k, err := parseUsage("--key", key)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			t, err := openTable(ctx, f, tableName)
			if err != nil {
				return err
			}
			s := t.schema
			if index != "" {
				var ok bool
				if s, ok = t.indexes[index]; !ok {
					return factory.UsageErrorf("--index %q: %s has no such index (its indexes: %s)", index, t.name, strings.Join(sortedKeys(t.indexes), ", "))
				}
			}
			part := item.Schema{Hash: s.Hash, HashType: s.HashType}
			if err := part.CheckKey("--key", k.Attrs); err != nil {
				return factory.UsageErrorf("%w (query takes the partition key only)", err)
			}
			in := &dynamodb.QueryInput{TableName: &t.name, KeyConditionExpression: aws.String("#h = :h"),
				ExpressionAttributeNames:  map[string]string{"#h": s.Hash},
				ExpressionAttributeValues: map[string]types.AttributeValue{":h": k.Attrs[s.Hash]},
				ConsistentRead:            aws.Bool(consistent), Limit: &limit}
			if index != "" {
				in.IndexName = &index
			}
			var items []map[string]types.AttributeValue
			var last map[string]types.AttributeValue
			p := dynamodb.NewQueryPaginator(t.db, in)
			for p.HasMorePages() && int32(len(items)) < limit {
				out, err := p.NextPage(ctx)
				if err != nil {
					return fmt.Errorf("querying %s: %w", t.name, throttle.WithKey(err, string(image(k.Attrs))))
				}
				items = append(items, out.Items...)
				last = out.LastEvaluatedKey
			}
			if int32(len(items)) > limit {
				items = items[:limit]
			}
			return printItems(f, t.name, k, items, true, last)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&tableName, "table", "", "table name")
	fl.StringVar(&key, "key", "", "the partition key: a JSON object (DynamoDB JSON or plain JSON)")
	fl.StringVar(&index, "index", "", "query this index instead of the table")
	fl.Int32Var(&limit, "limit", 25, "at most this many items")
	flagcheck.Range(fl, "limit", "1", "1000", "items per query")
	fl.BoolVar(&consistent, "consistent", false, "strongly consistent read (not on a GSI)")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd, "table")
	return cmd
}

type readResult struct {
	Table   string            `json:"table"`
	KeyRead string            `json:"key_read_as"`
	Found   bool              `json:"found"`
	Items   []json.RawMessage `json:"items"`
	Hashes  []string          `json:"image_hashes"`
	More    bool              `json:"more"`
}

func printItems(f *factory.Factory, tableName string, k item.Parsed, items []map[string]types.AttributeValue, found bool, last map[string]types.AttributeValue) error {
	res := readResult{Table: tableName, KeyRead: k.Describe(), Found: found, Items: []json.RawMessage{}, Hashes: []string{}, More: last != nil}
	for _, it := range items {
		if it == nil {
			continue
		}
		res.Items = append(res.Items, image(it))
		res.Hashes = append(res.Hashes, item.Hash(it))
	}
	res.Found = found && len(res.Items) > 0
	return view.Results(f, func(res readResult) error { return printRead(f, res) }).Show(res)
}

// printRead is the human view of a read: each item with its image hash.
func printRead(f *factory.Factory, res readResult) error {
	out := f.IOStreams.Out
	fmt.Fprintf(out, "key read as %s\n", res.KeyRead)
	if !res.Found {
		fmt.Fprintf(out, "no item in %s at that key\n", res.Table)
		return nil
	}
	for i, raw := range res.Items {
		fmt.Fprintf(out, "%s  (image %s)\n", raw, res.Hashes[i])
	}
	if res.More {
		fmt.Fprintf(out, "%d items shown; more in the partition (raise --limit)\n", len(res.Items))
	}
	return nil
}

func sortedKeys(m map[string]item.Schema) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return []string{"none"}
	}
	sort.Strings(ks)
	return ks
}
