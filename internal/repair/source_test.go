package repair

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fakeTables answers DescribeTable and ListTagsOfResource from memory: the
// decision logic of CheckSource without AWS (the emulator suites run it for real).
type fakeTables struct {
	tables  map[string]*types.TableDescription
	tags    map[string]map[string]string
	tagsErr error
}

func (f fakeTables) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	t, ok := f.tables[aws.ToString(in.TableName)]
	if !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Requested resource not found")}
	}
	return &dynamodb.DescribeTableOutput{Table: t}, nil
}

func (f fakeTables) ListTagsOfResource(ctx context.Context, in *dynamodb.ListTagsOfResourceInput, _ ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error) {
	if err := ctx.Err(); err != nil { // as the SDK: no call on a context that is done
		return nil, err
	}
	if f.tagsErr != nil {
		return nil, f.tagsErr
	}
	name := strings.TrimPrefix(aws.ToString(in.ResourceArn), "arn:table/")
	out := &dynamodb.ListTagsOfResourceOutput{}
	for k, v := range f.tags[name] {
		out.Tags = append(out.Tags, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return out, nil
}

func table(name string, keys ...string) *types.TableDescription {
	t := &types.TableDescription{TableName: aws.String(name), TableArn: aws.String("arn:table/" + name)}
	for i, k := range keys {
		n, typ, _ := strings.Cut(k, ":")
		kt := types.KeyTypeHash
		if i == 1 {
			kt = types.KeyTypeRange
		}
		t.KeySchema = append(t.KeySchema, types.KeySchemaElement{AttributeName: aws.String(n), KeyType: kt})
		t.AttributeDefinitions = append(t.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeType(typ)})
	}
	return t
}

func TestCheckSource(t *testing.T) {
	to := "prod-hoge-user"
	cases := []struct {
		name    string
		from    *types.TableDescription
		to      *types.TableDescription
		tags    map[string]string
		tagsErr error
		wantErr error // nil: related
		why     string
	}{
		{name: "a restore of the target", from: table("r", "user_id:S"), tags: map[string]string{"restored-from": to}},
		{name: "a restore with a range key", from: table("r", "pk:S", "sk:N"), to: table(to, "pk:S", "sk:N"), tags: map[string]string{"restored-from": to}},
		{name: "no restored-from tag", from: table("r", "user_id:S"), tags: map[string]string{"env": "dev"}, wantErr: ErrUnrelatedSource, why: "has no restored-from tag"},
		{name: "a restore of another table", from: table("r", "user_id:S"), tags: map[string]string{"restored-from": "prod-hoge-order"}, wantErr: ErrUnrelatedSource, why: "is a restore of prod-hoge-order"},
		{name: "restored-from in another case", from: table("r", "user_id:S"), tags: map[string]string{"restored-from": "PROD-hoge-user"}, wantErr: ErrUnrelatedSource, why: "not of --to"},
		{name: "a similar tag key", from: table("r", "user_id:S"), tags: map[string]string{"Restored-From": to}, wantErr: ErrUnrelatedSource, why: "no restored-from tag"},
		{name: "tags cannot be read", from: table("r", "user_id:S"), tagsErr: errors.New("AccessDeniedException"), wantErr: ErrUnrelatedSource, why: "could not be read"},
		{name: "another hash key name", from: table("r", "id:S"), tags: map[string]string{"restored-from": to}, wantErr: ErrKeySchema, why: "id HASH S"},
		{name: "another hash key type", from: table("r", "user_id:N"), tags: map[string]string{"restored-from": to}, wantErr: ErrKeySchema, why: "user_id HASH N"},
		{name: "an extra range key", from: table("r", "user_id:S", "sk:S"), tags: map[string]string{"restored-from": to}, wantErr: ErrKeySchema, why: "sk RANGE S"},
		{name: "a missing range key", from: table("r", "pk:S"), to: table(to, "pk:S", "sk:N"), tags: map[string]string{"restored-from": to}, wantErr: ErrKeySchema},
		{name: "another key schema and no tag", from: table("r", "order_id:S"), wantErr: ErrKeySchema},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.to
			if target == nil {
				target = table(to, "user_id:S")
			}
			db := fakeTables{tables: map[string]*types.TableDescription{"r": tc.from, to: target}, tags: map[string]map[string]string{"r": tc.tags}, tagsErr: tc.tagsErr}
			// Bounded: a loop over the tag pages that never ends fails instead of hanging.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rel, err := CheckSource(ctx, db, "r", to)
			if tc.wantErr == nil {
				if err != nil || !rel.Related {
					t.Fatalf("CheckSource = %+v, %v; want related", rel, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || rel.Related {
				t.Fatalf("CheckSource = %+v, %v; want %v", rel, err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q does not say %q", err, tc.why)
			}
		})
	}
	if _, err := CheckSource(context.Background(), fakeTables{tables: map[string]*types.TableDescription{to: table(to, "user_id:S")}}, "missing", to); err == nil || !strings.Contains(err.Error(), "--from missing") {
		t.Errorf("a missing source: %v", err)
	}
}
