// Package migrationexample is the example migration's domain on a test
// target (modules/dynamodb-stack/examples/migration): the legacy aiagent
// single table (PK/SK, GSI1 and GSI2 on the generic GSI1PK/GSI1SK/GSI2PK/
// GSI2SK), its twelve destinations created from the example's tables.yaml,
// and items of every domain plus junk. test/cli/migrate and test/robustness/chaos share it.
package migrationexample

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
	yaml "go.yaml.in/yaml/v3"

	"github.com/dynops/dynops/internal/tablesettings"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// The example's product and its legacy table.
const (
	Product = "aiagent"
	Source  = "dev-aiagent-single"
)

// Dir is the example's folder.
func Dir() string {
	return filepath.Join(harness.RepoRoot(), "modules", "dynamodb-stack", "examples", "migration")
}

// RoutesFile is the example's routes.yaml.
func RoutesFile() string { return filepath.Join(Dir(), "routes.yaml") }

type TableSpec struct {
	HashKey    string `yaml:"hash_key"`
	RangeKey   string `yaml:"range_key"`
	Attributes []struct {
		Name string `yaml:"name"`
		Type string `yaml:"type"`
	} `yaml:"attributes"`
	GSIs []struct {
		Name             string   `yaml:"name"`
		HashKey          string   `yaml:"hash_key"`
		RangeKey         string   `yaml:"range_key"`
		ProjectionType   string   `yaml:"projection_type"`
		NonKeyAttributes []string `yaml:"non_key_attributes"`
	} `yaml:"global_secondary_indexes"`
}

// Destinations reads the example's tables.yaml: usage -> spec.
func Destinations(t testing.TB) map[string]TableSpec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Dir(), "tables.yaml"))
	require.NoError(t, err)
	var specs map[string]TableSpec
	require.NoError(t, yaml.Unmarshal(data, &specs))
	require.Len(t, specs, 12, "the example has twelve destination tables")
	return specs
}

// CreateTable creates name from spec (as modules/dynamodb-table would, minus
// the settings the migration does not read) and deletes it at the end.
func CreateTable(t testing.TB, db *dynamodb.Client, name string, spec TableSpec, stream bool) {
	t.Helper()
	in := &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String(spec.HashKey), KeyType: types.KeyTypeHash}}}
	if spec.RangeKey != "" {
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(spec.RangeKey), KeyType: types.KeyTypeRange})
	}
	for _, a := range spec.Attributes {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(a.Name), AttributeType: types.ScalarAttributeType(a.Type)})
	}
	for _, g := range spec.GSIs {
		ks := []types.KeySchemaElement{{AttributeName: aws.String(g.HashKey), KeyType: types.KeyTypeHash}}
		if g.RangeKey != "" {
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(g.RangeKey), KeyType: types.KeyTypeRange})
		}
		p := &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: g.NonKeyAttributes}
		if g.ProjectionType != "" && g.ProjectionType != "INCLUDE" {
			p = &types.Projection{ProjectionType: types.ProjectionType(g.ProjectionType)}
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{IndexName: aws.String(g.Name), KeySchema: ks, Projection: p})
	}
	if stream {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
	}
	out, err := db.CreateTable(context.Background(), in)
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		// A loaded emulator sometimes garbles a response (CRC32 mismatch) and
		// the SDK retries a CreateTable that had succeeded.
		t.Logf("creating %s: %v (a retried call; the table exists)", name, err)
		err = nil
	}
	require.NoError(t, err, "creating %s", name)
	arn := arnOf(t, db, name, out)
	t.Cleanup(func() {
		// A test may leave a resource policy (a cutover's fence). moto 5.2.1
		// keeps a table's resource policy after DeleteTable, so a table made
		// again under the same name (the same ARN) would start fenced: the
		// policy goes first. (AWS answers a table without a policy with
		// success; moto with ResourceNotFoundException.)
		_, err := db.DeleteResourcePolicy(context.Background(), &dynamodb.DeleteResourcePolicyInput{ResourceArn: arn})
		var none *types.ResourceNotFoundException
		var noPolicy *types.PolicyNotFoundException
		if err != nil && !errors.As(err, &none) && !errors.As(err, &noPolicy) {
			t.Errorf("deleting the resource policy of %s: %v", name, err)
		}
		// No deletion protection here; a DeleteTable retried by the SDK after a
		// garbled response from a loaded emulator finds the table gone: fine.
		_, err = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		var nf *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &nf) {
			t.Errorf("deleting %s: %v", name, err)
		}
	})
	require.NoError(t, tablesettings.WaitActive(context.Background(), db, name, nil))
}

// arnOf is the table's ARN: from CreateTable's answer, or read when the
// answer was lost to a retried call.
func arnOf(t testing.TB, db *dynamodb.Client, name string, out *dynamodb.CreateTableOutput) *string {
	t.Helper()
	if out != nil && out.TableDescription != nil && out.TableDescription.TableArn != nil {
		return out.TableDescription.TableArn
	}
	d, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	require.NoError(t, err, "describing %s", name)
	return d.Table.TableArn
}

// SourceSpec is the legacy single table.
func SourceSpec() TableSpec {
	var s TableSpec
	if err := yaml.Unmarshal([]byte(`
hash_key: PK
range_key: SK
attributes:
  - { name: PK, type: "S" }
  - { name: SK, type: "S" }
  - { name: GSI1PK, type: "S" }
  - { name: GSI1SK, type: "S" }
  - { name: GSI2PK, type: "S" }
  - { name: GSI2SK, type: "S" }
global_secondary_indexes:
  - { name: GSI1, hash_key: GSI1PK, range_key: GSI1SK, projection_type: ALL }
  - { name: GSI2, hash_key: GSI2PK, range_key: GSI2SK, projection_type: ALL }
`), &s); err != nil {
		panic(err) // a constant
	}
	return s
}

// S and N are attribute values.
func S(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// N is a number attribute.
func N(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: fmt.Sprint(v)} }

// Kinds are the twelve domains, each making item i.
var Kinds = []func(i int) map[string]types.AttributeValue{
	func(i int) map[string]types.AttributeValue { // tenants
		id := fmt.Sprintf("t%d", i)
		return map[string]types.AttributeValue{"PK": S("TENANT#" + id), "SK": S("TENANT#" + id), "GSI1PK": S("TENANT"), "GSI1SK": S(created(i)), "name": S("Tenant " + id)}
	},
	func(i int) map[string]types.AttributeValue { // users
		t, u := tenant(i), fmt.Sprintf("u%d", i)
		return map[string]types.AttributeValue{"PK": S("TENANT#" + t), "SK": S("USER#" + u), "GSI1PK": S("USER"), "GSI1SK": S(created(i)),
			"GSI2PK": S("USER#" + u), "GSI2SK": S("TENANT#" + t), "name": S("User " + u), "email": S(u + "@example.com"), "roles": &types.AttributeValueMemberSS{Value: []string{"admin", "member"}}}
	},
	func(i int) map[string]types.AttributeValue { // tenant_applications
		return map[string]types.AttributeValue{"PK": S("TENANT#system"), "SK": S(fmt.Sprintf("TENANT_APPLICATION#a%d", i)), "GSI1PK": S("TENANT_APPLICATION"), "GSI1SK": S(created(i)), "name": S("app"), "status": S("pending")}
	},
	func(i int) map[string]types.AttributeValue { // permission_policies
		return map[string]types.AttributeValue{"PK": S("TENANT#" + tenant(i) + fmt.Sprintf("-%d", i)), "SK": S("POLICY#PERMISSIONS"),
			"rules": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"action": S("read"), "allow": &types.AttributeValueMemberBOOL{Value: true}}}}}}
	},
	func(i int) map[string]types.AttributeValue { // user_preferences
		return map[string]types.AttributeValue{"PK": S("TENANT#" + tenant(i)), "SK": S(fmt.Sprintf("USER_PREFS#USER#u%d", i)), "theme": S("dark"), "lang": S("ja")}
	},
	func(i int) map[string]types.AttributeValue { // email_accounts
		return map[string]types.AttributeValue{"PK": S("TENANT#" + tenant(i)), "SK": S(fmt.Sprintf("EMAIL_ACCOUNT#e%d", i)), "GSI1PK": S(fmt.Sprintf("EMAIL#e%d@example.com", i)), "GSI1SK": S("PROVIDER#gmail"),
			"GSI2PK": S(fmt.Sprintf("USER#u%d", i)), "GSI2SK": S(created(i)), "email": S(fmt.Sprintf("e%d@example.com", i)), "provider": S("gmail")}
	},
	func(i int) map[string]types.AttributeValue { // email_messages
		return map[string]types.AttributeValue{"PK": S("TENANT#" + tenant(i)), "SK": S(fmt.Sprintf("EMAIL_MESSAGE#m%d", i)), "GSI2PK": S(fmt.Sprintf("TASK#k%d", i)), "GSI2SK": S(created(i)),
			"subject": S("hello"), "size": N(i * 10), "raw": &types.AttributeValueMemberB{Value: []byte{1, 2, 3}}}
	},
	func(i int) map[string]types.AttributeValue { // tasks
		return map[string]types.AttributeValue{"PK": S("TENANT#" + tenant(i)), "SK": S(fmt.Sprintf("TASK#k%d", i)), "GSI1PK": S("TENANT#" + tenant(i) + "#STATUS#open"), "GSI1SK": S(created(i)),
			"GSI2PK": S(fmt.Sprintf("USER#u%d", i)), "GSI2SK": S(created(i)), "title": S("do it"), "status": S("open"), "version": N(1)}
	},
	func(i int) map[string]types.AttributeValue { // user_email_subscriptions
		return map[string]types.AttributeValue{"PK": S("TENANT#" + tenant(i)), "SK": S(fmt.Sprintf("USER_EMAIL_SUB#u%d#e%d", i, i)), "GSI2PK": S(fmt.Sprintf("USER#u%d", i)), "GSI2SK": S(created(i))}
	},
	func(i int) map[string]types.AttributeValue { // push_subscriptions
		return map[string]types.AttributeValue{"PK": S("TENANT#" + tenant(i)), "SK": S(fmt.Sprintf("PUSH_SUB#p%d", i)), "GSI2PK": S(fmt.Sprintf("USER#u%d", i)), "GSI2SK": S(created(i)), "endpoint": S("https://push.example.com/x")}
	},
	func(i int) map[string]types.AttributeValue { // announcements
		return map[string]types.AttributeValue{"PK": S(fmt.Sprintf("TENANT#%s-%d", tenant(i), i)), "SK": S("ANNOUNCEMENTS#BOARD"), "posts": &types.AttributeValueMemberNS{Value: []string{"1", "2"}}}
	},
	func(i int) map[string]types.AttributeValue { // notices
		return map[string]types.AttributeValue{"PK": S("GLOBAL"), "SK": S(fmt.Sprintf("NOTICE#n%d", i)), "body": S("maintenance"), "nothing": &types.AttributeValueMemberNULL{Value: true}}
	},
}

// Junk is an item no route matches.
func Junk(i int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": S(fmt.Sprintf("LEGACY#%d", i)), "SK": S("CACHE"), "blob": S("old")}
}

func tenant(i int) string { return fmt.Sprintf("t%d", i%50) }
func created(i int) string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
}

// Item is item i: of domain i mod 12, or junk when i mod 100 is 99.
func Item(i int) map[string]types.AttributeValue {
	if i%100 == 99 {
		return Junk(i)
	}
	return Kinds[i%len(Kinds)](i)
}

// Items returns items 0 to n-1: all twelve domains (round robin) plus one
// junk item in every 100.
func Items(n int) []map[string]types.AttributeValue {
	out := make([]map[string]types.AttributeValue, 0, n)
	for i := range n {
		out = append(out, Item(i))
	}
	return out
}

// Populate writes Items(n) to the Source, then enables its stream, as a team
// does on a legacy table before a migration (and the emulator reads a stream
// at ~300 records/s: the initial load is not worth replaying).
func Populate(t testing.TB, db *dynamodb.Client, n int) {
	t.Helper()
	fixture.Put(t, db, Source, Items(n))
	_, err := db.UpdateTable(context.Background(), &dynamodb.UpdateTableInput{TableName: aws.String(Source),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}})
	require.NoError(t, err, "enabling the stream of %s", Source)
	require.NoError(t, tablesettings.WaitActive(context.Background(), db, Source, nil))
}
