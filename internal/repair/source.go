package repair

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/ddbtags"
	"github.com/dynops/dynops/internal/restore"
)

// ErrUnrelatedSource is a --from that is not shown to be a restore of --to.
var ErrUnrelatedSource = errors.New("the source is not a restore of the target")

// ErrKeySchema is a --from whose key schema differs from --to's.
var ErrKeySchema = errors.New("the source's key schema differs from the target's")

// SourceAPI is what CheckSource reads.
type SourceAPI interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	ListTagsOfResource(context.Context, *dynamodb.ListTagsOfResourceInput, ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error)
}

// Relation is how the repair's source relates to its target, read from the service.
type Relation struct {
	From string `json:"from"`
	To   string `json:"to"`
	// RestoredFrom is the source's restored-from tag (what `pitr restore` writes); "" when absent.
	RestoredFrom string `json:"restored_from"`
	// RestoredToTime is the source's restored-to-time tag: its restore point ("" when absent).
	RestoredToTime string `json:"restored_to_time,omitempty"`
	// FromKeys and ToKeys are the key schemas, e.g. "user_id HASH S, sk RANGE S".
	FromKeys string `json:"from_keys"`
	ToKeys   string `json:"to_keys"`
	// Related: the restored-from tag names To and the key schemas are the same.
	Related bool `json:"related"`
	// Why says what is wrong when not Related.
	Why string `json:"why,omitempty"`
}

// CheckSource reads both tables and says whether from is a restore of to:
// its restored-from tag names to, and the key schemas are the same. A key
// schema that differs is ErrKeySchema (a repair between them cannot be
// right); a missing or other restored-from tag is ErrUnrelatedSource, which
// the caller may accept with a recorded reason.
func CheckSource(ctx context.Context, db SourceAPI, from, to string) (Relation, error) {
	rel := Relation{From: from, To: to}
	fromDesc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &from})
	if err != nil {
		return rel, fmt.Errorf("describing --from %s: %w", from, err)
	}
	toDesc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &to})
	if err != nil {
		return rel, fmt.Errorf("describing --to %s: %w", to, err)
	}
	rel.FromKeys, rel.ToKeys = keySchema(fromDesc.Table), keySchema(toDesc.Table)
	if rel.FromKeys != rel.ToKeys {
		rel.Why = fmt.Sprintf("--from %s has key schema (%s), --to %s has (%s)", from, rel.FromKeys, to, rel.ToKeys)
		return rel, fmt.Errorf("%w: %s; nothing was changed", ErrKeySchema, rel.Why)
	}
	tags, err := ddbtags.List(ctx, db, aws.ToString(fromDesc.Table.TableArn))
	if err != nil {
		// Not shown related: the caller may still accept it with a reason.
		rel.Why = fmt.Sprintf("the tags of --from %s could not be read (ListTagsOfResource: %v), so dynops cannot show it is a restore of --to %s", from, err, to)
		return rel, fmt.Errorf("%w: %s", ErrUnrelatedSource, rel.Why)
	}
	rel.RestoredFrom = tags[restore.TagRestoredFrom]
	rel.RestoredToTime = tags[restore.TagRestoredToTime]
	switch rel.RestoredFrom {
	case to:
		rel.Related = true
		return rel, nil
	case "":
		rel.Why = fmt.Sprintf("--from %s has no %s tag, so dynops cannot show it is a restore of --to %s", from, restore.TagRestoredFrom, to)
	default:
		rel.Why = fmt.Sprintf("--from %s is a restore of %s (its %s tag), not of --to %s", from, rel.RestoredFrom, restore.TagRestoredFrom, to)
	}
	return rel, fmt.Errorf("%w: %s", ErrUnrelatedSource, rel.Why)
}

// keySchema renders a table's key schema with the key attributes' types.
func keySchema(t *types.TableDescription) string {
	if t == nil {
		return ""
	}
	typ := map[string]string{}
	for _, a := range t.AttributeDefinitions {
		typ[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	var parts []string
	for _, k := range t.KeySchema {
		n := aws.ToString(k.AttributeName)
		parts = append(parts, fmt.Sprintf("%s %s %s", n, k.KeyType, typ[n]))
	}
	slices.SortFunc(parts, func(a, b string) int { // HASH before RANGE
		return strings.Compare(strings.Fields(a)[1], strings.Fields(b)[1])
	})
	return strings.Join(parts, ", ")
}
