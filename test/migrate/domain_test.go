package migrate_test

// The example domain on the target: the aiagent single table (PK/SK, GSI1 and
// GSI2 on the generic GSI1PK/GSI1SK/GSI2PK/GSI2SK, a NEW_AND_OLD_IMAGES
// stream), the twelve destinations of modules/dynamodb-stack/examples/migration
// (created from its tables.yaml) and items of every domain plus junk.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
	yaml "go.yaml.in/yaml/v3"

	"github.com/dynops/dynops/internal/tablesettings"
	"github.com/dynops/dynops/test/fixture"
	"github.com/dynops/dynops/test/harness"
)

const (
	product = "aiagent"
	source  = "dev-aiagent-single"
)

func exampleDir() string {
	return filepath.Join(harness.RepoRoot(), "modules", "dynamodb-stack", "examples", "migration")
}

func routesFile() string { return filepath.Join(exampleDir(), "routes.yaml") }

type tableSpec struct {
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

// destinations reads the example's tables.yaml: usage -> spec.
func destinations(t testing.TB) map[string]tableSpec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(exampleDir(), "tables.yaml"))
	require.NoError(t, err)
	var specs map[string]tableSpec
	require.NoError(t, yaml.Unmarshal(data, &specs))
	require.Len(t, specs, 12, "the example has twelve destination tables")
	return specs
}

// createTable creates name from spec (as modules/dynamodb-table would, minus
// the settings the migration does not read) and deletes it at the end.
func createTable(t testing.TB, db *dynamodb.Client, name string, spec tableSpec, stream bool) {
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
	_, err := db.CreateTable(context.Background(), in)
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		// A loaded emulator sometimes garbles a response (CRC32 mismatch) and
		// the SDK retries a CreateTable that had succeeded.
		t.Logf("creating %s: %v (a retried call; the table exists)", name, err)
		err = nil
	}
	require.NoError(t, err, "creating %s", name)
	t.Cleanup(func() {
		// No deletion protection here; a DeleteTable retried by the SDK after a
		// garbled response from a loaded emulator finds the table gone: fine.
		_, err := db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		var nf *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &nf) {
			t.Errorf("deleting %s: %v", name, err)
		}
	})
	require.NoError(t, tablesettings.WaitActive(context.Background(), db, name, nil))
}

// sourceSpec is the legacy single table.
func sourceSpec() tableSpec {
	var s tableSpec
	require.NoError(&testing.T{}, yaml.Unmarshal([]byte(`
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
`), &s))
	return s
}

// domain is the example domain on one target.
type domain struct {
	db *dynamodb.Client
}

// setup creates the source and (unless skipped) the twelve destinations.
func setup(t testing.TB, withDestinations bool) *domain {
	t.Helper()
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	createTable(t, db, source, sourceSpec(), false)
	if withDestinations {
		for usage, spec := range destinations(t) {
			createTable(t, db, fmt.Sprintf("dev-%s-%s", product, usage), spec, false)
		}
	}
	return &domain{db: db}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func num(v int) types.AttributeValue  { return &types.AttributeValueMemberN{Value: fmt.Sprint(v)} }

// kinds are the twelve domains (and junk), each making item i.
var kinds = []func(i int) map[string]types.AttributeValue{
	func(i int) map[string]types.AttributeValue { // tenants
		id := fmt.Sprintf("t%d", i)
		return map[string]types.AttributeValue{"PK": s("TENANT#" + id), "SK": s("TENANT#" + id), "GSI1PK": s("TENANT"), "GSI1SK": s(created(i)), "name": s("Tenant " + id)}
	},
	func(i int) map[string]types.AttributeValue { // users
		t, u := tenant(i), fmt.Sprintf("u%d", i)
		return map[string]types.AttributeValue{"PK": s("TENANT#" + t), "SK": s("USER#" + u), "GSI1PK": s("USER"), "GSI1SK": s(created(i)),
			"GSI2PK": s("USER#" + u), "GSI2SK": s("TENANT#" + t), "name": s("User " + u), "email": s(u + "@example.com"), "roles": &types.AttributeValueMemberSS{Value: []string{"admin", "member"}}}
	},
	func(i int) map[string]types.AttributeValue { // tenant_applications
		return map[string]types.AttributeValue{"PK": s("TENANT#system"), "SK": s(fmt.Sprintf("TENANT_APPLICATION#a%d", i)), "GSI1PK": s("TENANT_APPLICATION"), "GSI1SK": s(created(i)), "name": s("app"), "status": s("pending")}
	},
	func(i int) map[string]types.AttributeValue { // permission_policies
		return map[string]types.AttributeValue{"PK": s("TENANT#" + tenant(i) + fmt.Sprintf("-%d", i)), "SK": s("POLICY#PERMISSIONS"),
			"rules": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"action": s("read"), "allow": &types.AttributeValueMemberBOOL{Value: true}}}}}}
	},
	func(i int) map[string]types.AttributeValue { // user_preferences
		return map[string]types.AttributeValue{"PK": s("TENANT#" + tenant(i)), "SK": s(fmt.Sprintf("USER_PREFS#USER#u%d", i)), "theme": s("dark"), "lang": s("ja")}
	},
	func(i int) map[string]types.AttributeValue { // email_accounts
		return map[string]types.AttributeValue{"PK": s("TENANT#" + tenant(i)), "SK": s(fmt.Sprintf("EMAIL_ACCOUNT#e%d", i)), "GSI1PK": s(fmt.Sprintf("EMAIL#e%d@example.com", i)), "GSI1SK": s("PROVIDER#gmail"),
			"GSI2PK": s(fmt.Sprintf("USER#u%d", i)), "GSI2SK": s(created(i)), "email": s(fmt.Sprintf("e%d@example.com", i)), "provider": s("gmail")}
	},
	func(i int) map[string]types.AttributeValue { // email_messages
		return map[string]types.AttributeValue{"PK": s("TENANT#" + tenant(i)), "SK": s(fmt.Sprintf("EMAIL_MESSAGE#m%d", i)), "GSI2PK": s(fmt.Sprintf("TASK#k%d", i)), "GSI2SK": s(created(i)),
			"subject": s("hello"), "size": num(i * 10), "raw": &types.AttributeValueMemberB{Value: []byte{1, 2, 3}}}
	},
	func(i int) map[string]types.AttributeValue { // tasks
		return map[string]types.AttributeValue{"PK": s("TENANT#" + tenant(i)), "SK": s(fmt.Sprintf("TASK#k%d", i)), "GSI1PK": s("TENANT#" + tenant(i) + "#STATUS#open"), "GSI1SK": s(created(i)),
			"GSI2PK": s(fmt.Sprintf("USER#u%d", i)), "GSI2SK": s(created(i)), "title": s("do it"), "status": s("open"), "version": num(1)}
	},
	func(i int) map[string]types.AttributeValue { // user_email_subscriptions
		return map[string]types.AttributeValue{"PK": s("TENANT#" + tenant(i)), "SK": s(fmt.Sprintf("USER_EMAIL_SUB#u%d#e%d", i, i)), "GSI2PK": s(fmt.Sprintf("USER#u%d", i)), "GSI2SK": s(created(i))}
	},
	func(i int) map[string]types.AttributeValue { // push_subscriptions
		return map[string]types.AttributeValue{"PK": s("TENANT#" + tenant(i)), "SK": s(fmt.Sprintf("PUSH_SUB#p%d", i)), "GSI2PK": s(fmt.Sprintf("USER#u%d", i)), "GSI2SK": s(created(i)), "endpoint": s("https://push.example.com/x")}
	},
	func(i int) map[string]types.AttributeValue { // announcements
		return map[string]types.AttributeValue{"PK": s(fmt.Sprintf("TENANT#%s-%d", tenant(i), i)), "SK": s("ANNOUNCEMENTS#BOARD"), "posts": &types.AttributeValueMemberNS{Value: []string{"1", "2"}}}
	},
	func(i int) map[string]types.AttributeValue { // notices
		return map[string]types.AttributeValue{"PK": s("GLOBAL"), "SK": s(fmt.Sprintf("NOTICE#n%d", i)), "body": s("maintenance"), "nothing": &types.AttributeValueMemberNULL{Value: true}}
	},
}

// junk is an item no route matches.
func junk(i int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": s(fmt.Sprintf("LEGACY#%d", i)), "SK": s("CACHE"), "blob": s("old")}
}

func tenant(i int) string { return fmt.Sprintf("t%d", i%50) }
func created(i int) string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
}

// items returns n items over all twelve domains (round robin) plus one junk
// item in every 100.
func items(n int) []map[string]types.AttributeValue {
	out := make([]map[string]types.AttributeValue, 0, n)
	for i := 0; len(out) < n; i++ {
		if i%100 == 99 {
			out = append(out, junk(i))
			continue
		}
		out = append(out, kinds[i%len(kinds)](i))
	}
	return out
}

// populate writes items to the source, then enables its stream, as a team
// does on a legacy table before a migration (and the emulator reads a stream
// at ~300 records/s: the initial load is not worth replaying).
func (d *domain) populate(t testing.TB, n int) {
	t.Helper()
	fixture.Put(t, d.db, source, items(n))
	_, err := d.db.UpdateTable(context.Background(), &dynamodb.UpdateTableInput{TableName: aws.String(source),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}})
	require.NoError(t, err, "enabling the stream of %s", source)
	require.NoError(t, tablesettings.WaitActive(context.Background(), d.db, source, nil))
}

// writer changes the source while a migration runs: new items, updates,
// route-changing moves (an item's SK prefix changes: delete + put under the
// new key) and deletes, at about rate operations per second.
type writer struct {
	d                             *domain
	stop                          chan struct{}
	once                          sync.Once
	done                          sync.WaitGroup
	puts, updates, moves, deletes atomic.Int64
	errs                          atomic.Int64
	next                          atomic.Int64
}

func (d *domain) startWriter(t testing.TB, n int, rate int) *writer {
	w := &writer{d: d, stop: make(chan struct{})}
	w.next.Store(int64(n + 1_000_000))
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			if err := w.op(rng, n); err != nil {
				w.errs.Add(1)
				t.Logf("writer: %v", err)
			}
		}
	}()
	return w
}

func (w *writer) op(rng *rand.Rand, n int) error {
	ctx := context.Background()
	db := w.d.db
	i := rng.IntN(n)
	switch op := rng.IntN(10); {
	case op < 3: // put a new item of any domain
		j := int(w.next.Add(1))
		_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(source), Item: kinds[j%len(kinds)](j)})
		if err == nil {
			w.puts.Add(1)
		}
		return err
	case op < 6: // update a task (or whatever lives at i)
		it := kinds[i%len(kinds)](i)
		_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(source),
			Key:                       map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]},
			UpdateExpression:          aws.String("SET #u = :u, #c = if_not_exists(#c, :z) + :one"),
			ConditionExpression:       aws.String("attribute_exists(PK)"), // never resurrect a moved or deleted item
			ExpressionAttributeNames:  map[string]string{"#u": "updated_by", "#c": "changes"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":u": s(fmt.Sprintf("writer-%d", rng.IntN(1000))), ":z": num(0), ":one": num(1)}})
		var cf *types.ConditionalCheckFailedException
		if errors.As(err, &cf) {
			return nil
		}
		if err == nil {
			w.updates.Add(1)
		}
		return err
	case op < 8: // move: the item's SK prefix changes, so its route does
		it := kinds[7](i - i%len(kinds) + 7) // a task
		key := map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}
		got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(source), Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil || got.Item == nil {
			return err
		}
		moved := map[string]types.AttributeValue{}
		for k, v := range got.Item {
			moved[k] = v
		}
		moved["SK"] = s("EMAIL_MESSAGE#from-" + it["SK"].(*types.AttributeValueMemberS).Value)
		delete(moved, "GSI1PK")
		delete(moved, "GSI1SK")
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(source), Item: moved}); err != nil {
			return err
		}
		_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(source), Key: key})
		if err == nil {
			w.moves.Add(1)
		}
		return err
	default: // delete
		it := kinds[i%len(kinds)](i)
		_, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(source), Key: map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}})
		if err == nil {
			w.deletes.Add(1)
		}
		return err
	}
}

// halt stops the writer and waits for its last operation.
func (w *writer) halt() {
	w.once.Do(func() { close(w.stop) })
	w.done.Wait()
}

func (w *writer) String() string {
	return fmt.Sprintf("puts %d, updates %d, moves %d, deletes %d, errors %d", w.puts.Load(), w.updates.Load(), w.moves.Load(), w.deletes.Load(), w.errs.Load())
}
