package migrate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/migrate/routes"
)

// SourceInfo is what the migration reads about the source table.
type SourceInfo struct {
	Table     string `json:"table"`
	ARN       string `json:"arn"`
	Key       string `json:"key"`
	ItemCount int64  `json:"item_count"`
	StreamARN string `json:"stream_arn,omitempty"`
	Stream    string `json:"stream_view_type,omitempty"`
	desc      *types.TableDescription
}

// DestinationCheck is what the migration found about one destination table.
type DestinationCheck struct {
	Table    string   `json:"table"`
	Exists   bool     `json:"exists"`
	Key      string   `json:"key,omitempty"`
	KeyOK    bool     `json:"key_ok"`
	Empty    *bool    `json:"empty,omitempty"`
	Failing  []string `json:"failing_rules,omitempty"` // guideline rules that fail (dynops check)
	Problems []string `json:"problems,omitempty"`      // what blocks the migration
}

// InputError is bad input found before anything was written: the migration refuses to start.
type InputError struct{ Problems []string }

func (e *InputError) Error() string {
	return "refusing to migrate, nothing was written:\n  - " + strings.Join(e.Problems, "\n  - ")
}

// IsInputError reports whether err is an InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// keySig is a table's primary key as "PK(S) HASH, SK(S) RANGE".
func keySig(t *types.TableDescription) string {
	typ := map[string]string{}
	for _, d := range t.AttributeDefinitions {
		typ[aws.ToString(d.AttributeName)] = string(d.AttributeType)
	}
	var parts []string
	for _, k := range t.KeySchema {
		n := aws.ToString(k.AttributeName)
		parts = append(parts, fmt.Sprintf("%s(%s) %s", n, typ[n], k.KeyType))
	}
	return strings.Join(parts, ", ")
}

func keyNames(t *types.TableDescription) []string {
	var out []string
	for _, k := range t.KeySchema { // HASH first
		out = append(out, aws.ToString(k.AttributeName))
	}
	return out
}

func isNotFound(err error) bool {
	var nf *types.ResourceNotFoundException
	return errors.As(err, &nf)
}

// ReadSource describes the source and checks it against the routes: its key
// is the routes' source_key; with needStream, it has a stream with new images.
func ReadSource(ctx context.Context, db DynamoDB, source string, r *routes.Routes, needStream bool) (*SourceInfo, error) {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &source})
	if isNotFound(err) {
		return nil, &InputError{[]string{fmt.Sprintf("source table %s not found (check --source, --region and --endpoint-url)", source)}}
	}
	if err != nil {
		return nil, fmt.Errorf("describing source %s: %w", source, err)
	}
	t := out.Table
	si := &SourceInfo{Table: source, ARN: aws.ToString(t.TableArn), Key: keySig(t), ItemCount: aws.ToInt64(t.ItemCount),
		StreamARN: aws.ToString(t.LatestStreamArn), desc: t}
	var problems []string
	if got := keyNames(t); strings.Join(got, ",") != strings.Join(r.SourceKey, ",") {
		problems = append(problems, fmt.Sprintf("source %s is keyed %s but %s says source_key %v: fix source_key in the routes file", source, si.Key, r.Path, r.SourceKey))
	}
	if spec := t.StreamSpecification; spec != nil && aws.ToBool(spec.StreamEnabled) {
		si.Stream = string(spec.StreamViewType)
	}
	if needStream {
		switch types.StreamViewType(si.Stream) {
		case types.StreamViewTypeNewImage, types.StreamViewTypeNewAndOldImages:
		case "":
			problems = append(problems, fmt.Sprintf("source %s has no stream: the catch-up needs one with new images; enable it first (stream_enabled, NEW_AND_OLD_IMAGES)", source))
		default:
			problems = append(problems, fmt.Sprintf("source %s streams %s: the catch-up needs NEW_IMAGE or NEW_AND_OLD_IMAGES", source, si.Stream))
		}
	}
	if len(problems) > 0 {
		return si, &InputError{problems}
	}
	return si, nil
}

// CheckDestinations checks every destination of the routes: it exists, has
// the source's primary key (names and types), is empty when wantEmpty, and
// (with rules) which guideline rules it fails.
func CheckDestinations(ctx context.Context, db DynamoDB, src *SourceInfo, r *routes.Routes, wantEmpty, rules bool) ([]DestinationCheck, error) {
	var out []DestinationCheck
	for _, table := range r.Tables() {
		dc := DestinationCheck{Table: table}
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
		if isNotFound(err) {
			dc.Problems = append(dc.Problems, fmt.Sprintf("destination %s does not exist: create it first (terraform, tables.yaml)", table))
			out = append(out, dc)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("describing destination %s: %w", table, err)
		}
		dc.Exists = true
		dc.Key = keySig(d.Table)
		dc.KeyOK = dc.Key == src.Key
		if !dc.KeyOK {
			dc.Problems = append(dc.Problems, fmt.Sprintf("destination %s is keyed %s, the source %s: items keep their key, so the keys must match", table, dc.Key, src.Key))
		}
		if table == src.Table {
			dc.Problems = append(dc.Problems, fmt.Sprintf("destination %s is the source itself", table))
		}
		if wantEmpty {
			empty, err := isEmpty(ctx, db, table)
			if err != nil {
				return nil, err
			}
			dc.Empty = &empty
			if !empty {
				dc.Problems = append(dc.Problems, fmt.Sprintf("destination %s is not empty: a migration starts from empty destinations (resume an interrupted backfill with the same --state, or empty the table)", table))
			}
		}
		if rules {
			st, err := guideline.Gather(ctx, db, table)
			if err != nil {
				return nil, err
			}
			for _, f := range guideline.Evaluate(st) {
				if f.Failing() {
					dc.Failing = append(dc.Failing, f.Rule)
				}
			}
			sort.Strings(dc.Failing)
		}
		out = append(out, dc)
	}
	return out, nil
}

// Problems collects the blocking problems of the checks.
func Problems(checks []DestinationCheck) []string {
	var out []string
	for _, c := range checks {
		out = append(out, c.Problems...)
	}
	return out
}

// isEmpty reports whether a table has no item (a Scan of one item, following pages).
func isEmpty(ctx context.Context, db DynamoDB, table string) (bool, error) {
	in := &dynamodb.ScanInput{TableName: &table, Limit: aws.Int32(1)}
	for page := 0; page < 100; page++ {
		out, err := db.Scan(ctx, in)
		if err != nil {
			return false, fmt.Errorf("reading %s: %w", table, err)
		}
		if len(out.Items) > 0 {
			return false, nil
		}
		if len(out.LastEvaluatedKey) == 0 {
			return true, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return false, nil // fail closed: could not show it is empty
}
