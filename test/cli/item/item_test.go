// Package item runs the dynops binary's `item` commands (a real process,
// stdin not a terminal) against the target: bad input refused clearly with
// nothing written, dry runs that change nothing, conditional writes that
// fail cleanly when the item changed, and the audit of every write.
package item

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/root"
	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// dynops runs the dynops binary (harness.Target.Command) against the target
// with stdin not a terminal, and returns stdout, stderr and the exit code.
func dynops(t *testing.T, auditLog string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return dynopsAt(t, target.Endpoint(), auditLog, args...)
}

// dynopsAt is dynops through another endpoint (a fault proxy).
func dynopsAt(t *testing.T, endpoint, auditLog string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return target.Command(t, args, harness.Via(endpoint), harness.AuditLog(auditLog), harness.Stdin(bytes.NewReader(nil)),
		harness.Env("HOME="+t.TempDir(), "AWS_EC2_METADATA_DISABLED=true")).Run()
}

// newTable creates an on-demand table with key pk (S) [+ sk (N)] and the
// given items.
func newTable(t *testing.T, db *dynamodb.Client, name string, withRange bool, items ...map[string]types.AttributeValue) {
	t.Helper()
	ctx := context.Background()
	in := &dynamodb.CreateTableInput{TableName: &name, BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}}}
	if withRange {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeN})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange})
	}
	if _, err := db.CreateTable(ctx, in); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name}) })
	for _, it := range items {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: it}); err != nil {
			t.Fatal(err)
		}
	}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

// snapshot is every item of a table as canonical DynamoDB JSON lines.
func snapshot(t *testing.T, db *dynamodb.Client, name string) string {
	t.Helper()
	out, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: &name, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, it := range out.Items {
		raw, err := ddbjson.EncodeItem(it)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(raw))
	}
	sortStrings(lines)
	return strings.Join(lines, "\n")
}

func sortStrings(x []string) {
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && x[j] < x[j-1]; j-- {
			x[j], x[j-1] = x[j-1], x[j]
		}
	}
}

func setup(t *testing.T, prefix string) (db *dynamodb.Client, name, auditLog string) {
	t.Helper()
	db = dynamodb.NewFromConfig(target.AWSConfig(t))
	name = prefix + "-item-" + strings.ToLower(harness.UniqueID())
	newTable(t, db, name, true,
		map[string]types.AttributeValue{"pk": s("u1"), "sk": n("1"), "status": s("broken"), "size": n("3"), "a.b": s("dotted")},
		map[string]types.AttributeValue{"pk": s("u1"), "sk": n("2"), "status": s("ok")},
		map[string]types.AttributeValue{"pk": s("u2"), "sk": n("1"), "status": s("ok")})
	return db, name, filepath.Join(t.TempDir(), "audit.jsonl")
}

// TestItemBadInputRefusedNothingWritten: every bad command line exits
// non-zero with a message naming what is wrong, and the table is unchanged.
func TestItemBadInputRefusedNothingWritten(t *testing.T) {
	db, name, auditLog := setup(t, "dev-hoge")
	// a protected table of its own
	prodName := "prod-hoge-itembad-" + strings.ToLower(harness.UniqueID())
	newTable(t, db, prodName, true, map[string]types.AttributeValue{"pk": s("u1"), "sk": n("1"), "status": s("broken")})
	before, prodBefore := snapshot(t, db, name), snapshot(t, db, prodName)
	key := `{"pk": "u1", "sk": 1}`
	cases := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"no table", []string{"item", "put", "--item", `{"pk": "u9", "sk": 1}`, "--yes"}, "--table", 2},
		{"no item", []string{"item", "put", "--table", name, "--yes"}, "--item is required", 2},
		{"item not JSON", []string{"item", "put", "--table", name, "--item", `{pk: u1}`, "--yes"}, "not a JSON object", 2},
		{"item not an object", []string{"item", "put", "--table", name, "--item", `[1]`, "--yes"}, "--item", 2},
		{"item without range key", []string{"item", "put", "--table", name, "--item", `{"pk": "u9"}`, "--yes"}, `"sk" is missing`, 2},
		{"key of wrong type", []string{"item", "put", "--table", name, "--item", `{"pk": "u9", "sk": "1"}`, "--yes"}, `"sk" is S, the table's key needs N`, 2},
		{"bad DynamoDB JSON", []string{"item", "put", "--table", name, "--item", `{"pk": {"S": "u9"}, "sk": {"N": 1}}`, "--yes"}, "--item", 2},
		{"key with extra attribute", []string{"item", "delete", "--table", name, "--key", `{"pk": "u1", "sk": 1, "x": 1}`, "--yes"}, "not a key attribute", 2},
		{"update of a key attribute", []string{"item", "update", "--table", name, "--key", key, "--set", `{"sk": 5}`, "--yes"}, "key attribute", 2},
		{"update with nothing", []string{"item", "update", "--table", name, "--key", key, "--yes"}, "nothing to update", 2},
		{"remove and set the same", []string{"item", "update", "--table", name, "--key", key, "--set", `{"x": 1}`, "--remove", "x", "--yes"}, "also in --set", 2},
		{"update of a missing item", []string{"item", "update", "--table", name, "--key", `{"pk": "nope", "sk": 1}`, "--set", `{"x": 1}`, "--yes"}, "nothing to update", 1},
		{"missing table", []string{"item", "delete", "--table", "dev-hoge-nothere", "--key", key, "--yes"}, "not found", 1},
		{"condition names without condition", []string{"item", "delete", "--table", name, "--key", key, "--condition-names", `{"#a": "b"}`, "--yes"}, "go with --condition", 2},
		{"bad condition names", []string{"item", "delete", "--table", name, "--key", key, "--condition", "#a = :a", "--condition-names", `x`, "--yes"}, "--condition-names", 2},
		{"condition placeholder clash", []string{"item", "update", "--table", name, "--key", key, "--set", `{"x": 1}`, "--condition", "#s0 = :c", "--condition-names", `{"#s0": "status"}`, "--condition-values", `{":c": "broken"}`, "--yes"}, "placeholder of the update", 2},
		{"--condition with --version-attribute", []string{"item", "put", "--table", name, "--item", `{"pk": "u1", "sk": 1}`, "--version-attribute", "v", "--condition", "attribute_exists(pk)", "--yes"}, "give one or the other", 2},
		{"a version attribute that is not a number", []string{"item", "put", "--table", name, "--item", `{"pk": "u1", "sk": 1}`, "--version-attribute", "status", "--yes"}, `"status" is not a whole number`, 2},
		{"stale --if-hash", []string{"item", "delete", "--table", name, "--key", key, "--if-hash", "sha256:0000000000000000", "--yes"}, "changed", 1},
		{"malformed --if-hash", []string{"item", "delete", "--table", name, "--key", key, "--if-hash", "sha256:nothex!", "--yes"}, "--if-hash", 2},
		{"--if-hash of the wrong length", []string{"item", "put", "--table", name, "--item", `{"pk": "u9", "sk": 9}`, "--if-hash", "sha256:0123", "--yes"}, "is not an item hash", 2},
		{"protected without reason", []string{"item", "delete", "--table", prodName, "--key", key, "--yes", "--confirm", prodName}, "--reason", 2},
		{"protected without reason nor name: both asked at once", []string{"item", "delete", "--table", prodName, "--key", key, "--yes"}, `a write needs --reason "why" (it lands in the audit) and --confirm ` + prodName + ` (no terminal to type its name at)`, 2},
		{"protected without typed name", []string{"item", "delete", "--table", prodName, "--key", key, "--yes", "--reason", "INC-1"}, prodName, 2},
		{"protected with the wrong name", []string{"item", "delete", "--table", prodName, "--key", key, "--yes", "--reason", "INC-1", "--confirm", name}, "--confirm", 2},
		{"query with the whole key", []string{"item", "query", "--table", name, "--key", key}, "not a key attribute", 2},
		{"query of a missing index", []string{"item", "query", "--table", name, "--key", `{"pk": "u1"}`, "--index", "gsi9"}, "no such index", 2},
		{"query limit 0", []string{"item", "query", "--table", name, "--key", `{"pk": "u1"}`, "--limit", "0"}, "--limit", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := dynops(t, auditLog, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			if !strings.Contains(out+errOut, c.want) {
				t.Errorf("output does not say %q:\n%s%s", c.want, out, errOut)
			}
			if got := snapshot(t, db, name); got != before {
				t.Fatalf("%s changed:\n%s\nwant\n%s", name, got, before)
			}
			if got := snapshot(t, db, prodName); got != prodBefore {
				t.Fatalf("%s changed:\n%s", prodName, got)
			}
		})
	}
}

// TestItemDryRunsChangeNothing: put, update and delete without --yes print
// the before and after images and write nothing.
func TestItemDryRunsChangeNothing(t *testing.T) {
	db, name, auditLog := setup(t, "dev-hoge")
	before := snapshot(t, db, name)
	for _, args := range [][]string{
		{"item", "put", "--table", name, "--item", `{"pk": "u1", "sk": 1, "status": "fixed"}`},
		{"item", "put", "--table", name, "--item", `{"pk": "new", "sk": 1}`},
		{"item", "update", "--table", name, "--key", `{"pk": "u1", "sk": 1}`, "--set", `{"status": "fixed"}`},
		{"item", "delete", "--table", name, "--key", `{"pk": "u1", "sk": 1}`},
	} {
		out, _, code := dynops(t, auditLog, args...)
		if code != 0 || !strings.Contains(out, "DRY RUN: with --yes dynops would") || !strings.Contains(out, "before:") || !strings.Contains(out, "Dry run: nothing was changed. Add --yes to") {
			t.Errorf("%v: exit %d:\n%s", args, code, out)
		}
		if got := snapshot(t, db, name); got != before {
			t.Fatalf("%v changed the table:\n%s", args, got)
		}
	}
}

// TestItemJSONOutput: --output json gives machines the plan (dry run,
// before/after hashes, how the input was read) and a query's "more".
func TestItemJSONOutput(t *testing.T) {
	db, name, auditLog := setup(t, "dev-hoge")
	before := snapshot(t, db, name)
	out, _, code := dynops(t, auditLog, "item", "update", "--table", name, "--key", `{"pk": "u1", "sk": 1}`, "--set", `{"status": "fixed"}`, "--output", "json")
	var w struct {
		DryRun     bool     `json:"dry_run"`
		Written    bool     `json:"written"`
		Op         string   `json:"operation"`
		ReadAs     []string `json:"read_as"`
		BeforeHash string   `json:"before_hash"`
		AfterHash  string   `json:"after_hash"`
		After      map[string]map[string]any
	}
	if err := json.Unmarshal([]byte(out), &w); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if !w.DryRun || w.Written || w.Op != "update" || len(w.ReadAs) != 2 || w.BeforeHash == w.AfterHash || w.After["status"]["S"] != "fixed" {
		t.Errorf("dry run JSON: %+v", w)
	}
	if snapshot(t, db, name) != before {
		t.Fatal("the JSON dry run wrote")
	}
	out, _, code = dynops(t, auditLog, "item", "query", "--table", name, "--key", `{"pk": "u1"}`, "--limit", "1", "--output", "json")
	var q struct {
		Items []json.RawMessage
		More  bool
	}
	if err := json.Unmarshal([]byte(out), &q); err != nil || code != 0 || len(q.Items) != 1 || !q.More {
		t.Errorf("query --limit 1: exit %d, %v, %+v", code, err, q)
	}
}

// TestItemWritesReservedWordsAndDots: writes land exactly, with attribute
// names that are reserved words (status, size) or contain a dot, read back
// from the service; the output says how the input was read.
func TestItemWritesReservedWordsAndDots(t *testing.T) {
	db, name, auditLog := setup(t, "dev-hoge")
	get := func(pk, sk string) map[string]types.AttributeValue {
		out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &name, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": s(pk), "sk": n(sk)}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	out, _, code := dynops(t, auditLog, "item", "update", "--table", name, "--key", `{"pk": "u1", "sk": 1}`,
		"--set", `{"status": "fixed", "a.b": {"x": [1, "y"]}}`, "--remove", "size", "--yes", "--reason", "INC-7")
	if code != 0 || !strings.Contains(out, "plain JSON, types inferred: a.b=M, status=S") {
		t.Fatalf("update: exit %d\n%s", code, out)
	}
	it := get("u1", "1")
	if it["status"].(*types.AttributeValueMemberS).Value != "fixed" || it["size"] != nil {
		t.Errorf("after update: %v", it)
	}
	if m, ok := it["a.b"].(*types.AttributeValueMemberM); !ok || len(m.Value["x"].(*types.AttributeValueMemberL).Value) != 2 {
		t.Errorf("a.b after update: %#v", it["a.b"])
	}
	out, _, code = dynops(t, auditLog, "item", "put", "--table", name, "--item", `{"pk": {"S": "u3"}, "sk": {"N": "7"}, "tags": {"SS": ["a", "b"]}}`, "--yes")
	if code != 0 || !strings.Contains(out, "DynamoDB JSON: pk=S, sk=N, tags=SS") {
		t.Fatalf("put: exit %d\n%s", code, out)
	}
	if it := get("u3", "7"); it == nil || len(it["tags"].(*types.AttributeValueMemberSS).Value) != 2 {
		t.Errorf("after put: %v", it)
	}
	// a put of an existing key is conditional on the image read before
	if _, _, code = dynops(t, auditLog, "item", "put", "--table", name, "--item", `{"pk": "u3", "sk": 7}`, "--yes"); code != 0 {
		t.Fatalf("replace: exit %d", code)
	}
	if it := get("u3", "7"); it["tags"] != nil {
		t.Errorf("put did not replace the item whole: %v", it)
	}
	if _, _, code = dynops(t, auditLog, "item", "delete", "--table", name, "--key", `{"pk": "u3", "sk": 7}`, "--yes"); code != 0 {
		t.Fatalf("delete: exit %d", code)
	}
	if it := get("u3", "7"); it != nil {
		t.Errorf("still there after delete: %v", it)
	}
	out, _, code = dynops(t, auditLog, "item", "get", "--table", name, "--key", `{"pk": "u1", "sk": 1}`, "--attributes", "status,a.b")
	if code != 0 || !strings.Contains(out, `"status":{"S":"fixed"}`) || strings.Contains(out, `"pk"`) {
		t.Errorf("get with a projection of a reserved word and a dotted name:\n%s", out)
	}
	out, _, code = dynops(t, auditLog, "item", "query", "--table", name, "--key", `{"pk": "u1"}`, "--output", "json")
	var res struct{ Items []json.RawMessage }
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || len(res.Items) != 2 {
		t.Errorf("query: exit %d, %v, %d items\n%s", code, err, len(res.Items), out)
	}
}

// TestItemConditionalWriteFailsWhenItemChanged: the image an operator
// looked at (its hash from get) changed before the write: refused, exit 1,
// nothing written. An explicit --condition that does not hold is refused the
// same way.
func TestItemConditionalWriteFailsWhenItemChanged(t *testing.T) {
	db, name, auditLog := setup(t, "dev-hoge")
	out, _, code := dynops(t, auditLog, "item", "get", "--table", name, "--key", `{"pk": "u2", "sk": 1}`, "--consistent", "--output", "json")
	var got struct {
		Hashes []string `json:"image_hashes"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got.Hashes) != 1 {
		t.Fatalf("get: exit %d %v\n%s", code, err, out)
	}
	// another writer changes the item
	if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &name,
		Item: map[string]types.AttributeValue{"pk": s("u2"), "sk": n("1"), "status": s("changed-by-app")}}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, db, name)
	out, errOut, code := dynops(t, auditLog, "item", "update", "--table", name, "--key", `{"pk": "u2", "sk": 1}`,
		"--set", `{"status": "fixed"}`, "--if-hash", got.Hashes[0], "--yes")
	if code != 1 || !strings.Contains(out+errOut, "changed") || !strings.Contains(out+errOut, "nothing written") {
		t.Errorf("stale update: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = dynops(t, auditLog, "item", "update", "--table", name, "--key", `{"pk": "u2", "sk": 1}`,
		"--set", `{"status": "fixed"}`, "--condition", "#s = :s", "--condition-names", `{"#s": "status"}`, "--condition-values", `{":s": "ok"}`, "--yes")
	if code != 1 || !strings.Contains(out+errOut, "nothing written") {
		t.Errorf("failed --condition: exit %d\n%s%s", code, out, errOut)
	}
	if after := snapshot(t, db, name); after != before {
		t.Errorf("written despite the failed condition:\n%s", after)
	}
}

// TestItemProtectedWriteAudited: a protected table takes the typed name and
// a --reason; the audit has the reason and the images' hashes, never the
// images (nor, with --audit-hash-keys, the key).
func TestItemProtectedWriteAudited(t *testing.T) {
	db, name, auditLog := setup(t, "prod-hoge")
	_, _, code := dynops(t, auditLog, "item", "update", "--table", name, "--key", `{"pk": "u1", "sk": 1}`,
		"--set", `{"status": "secret-fixed"}`, "--yes", "--confirm", name, "--reason", "INC-99 bad deploy", "--audit-hash-keys")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	out, _ := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &name, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": s("u1"), "sk": n("1")}})
	if out.Item["status"].(*types.AttributeValueMemberS).Value != "secret-fixed" {
		t.Fatalf("not written: %v", out.Item)
	}
	raw, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	log := string(raw)
	for _, want := range []string{"INC-99 bad deploy", `"what":"item-update"`, "before_hash", "after_hash", "[redacted: item image]"} {
		if !strings.Contains(log, want) {
			t.Errorf("audit lacks %s:\n%s", want, log)
		}
	}
	for _, leak := range []string{"secret-fixed", "broken", `"u1"`} {
		if strings.Contains(log, leak) {
			t.Errorf("audit leaks %s:\n%s", leak, log)
		}
	}
}

// TestItemProtectedShowsImagesBeforeTheName: on a terminal, a write to a
// protected table shows the before and after images first, then asks for
// the name once; a mistyped name is refused (exit 2) with nothing written,
// the right one writes. (In-process, stdin and stderr reported as a
// terminal; the table and the write are the emulator's.)
func TestItemProtectedShowsImagesBeforeTheName(t *testing.T) {
	db, _, auditLog := setup(t, "dev-hoge")
	prodName := "prod-hoge-itemtty-" + strings.ToLower(harness.UniqueID())
	newTable(t, db, prodName, true, map[string]types.AttributeValue{"pk": s("u1"), "sk": n("1"), "status": s("broken")})
	before := snapshot(t, db, prodName)
	onTerminal := func(typed string) (string, int) {
		r := cmdtest.Run(t, root.Execute, cmdtest.Env{Endpoint: target.Endpoint(), Region: target.Region, AuditLog: auditLog, Stdin: typed,
			Streams: func(s *iostreams.IOStreams) { s.SetTTY(true, false, true) }},
			"item", "update", "--table", prodName, "--key", `{"pk": "u1", "sk": 1}`, "--set", `{"status": "fixed"}`, "--yes", "--reason", "INC-7")
		return r.Stderr, r.Code
	}

	errOut, code := onTerminal(prodName + "x\n")
	images, prompt := strings.Index(errOut, `after:  {"pk":{"S":"u1"},"sk":{"N":"1"},"status":{"S":"fixed"}}`), strings.Index(errOut, "Type its name to continue: ")
	if images < 0 || prompt < 0 || images > prompt {
		t.Errorf("the after image (at %d) must come before the prompt (at %d):\n%s", images, prompt, errOut)
	}
	if code != 2 || !strings.Contains(errOut, `"`+prodName+`x" was typed, not its name`) {
		t.Errorf("mistyped name: exit %d, want 2 naming what was typed", code)
	}
	if strings.Count(errOut, "Type its name") != 1 || strings.Contains(errOut, "--reason") {
		t.Errorf("asked more than once, or for the reason it was given:\n%s", errOut)
	}
	if got := snapshot(t, db, prodName); got != before {
		t.Fatalf("a mistyped name wrote:\n%s", got)
	}

	if _, code = onTerminal(prodName + "\n"); code != 0 {
		t.Fatalf("the right name: exit %d", code)
	}
	if got := snapshot(t, db, prodName); !strings.Contains(got, "fixed") {
		t.Errorf("the right name did not write: %s", got)
	}
}

// TestItemPutOverAnAttributeAddedSinceTheRead (issue 44): the condition on
// the image read names only the attributes read, so an attribute another
// writer adds between dynops's read and its put is not covered by it. The
// put goes through (it cannot be refused) but asks for the item it
// replaced, and reports the attribute it dropped as a conflict: exit 1, in
// the output, the JSON and the audit. With --version-attribute the write is
// conditional on the version the other writer increments: refused, nothing
// lost; without a writer in between, the put increments the version.
func TestItemPutOverAnAttributeAddedSinceTheRead(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("emulator only: the other writer acts from a proxy in front of the emulator")
	}
	db, name, auditLog := setup(t, "dev-hoge")
	ctx := context.Background()
	key := map[string]types.AttributeValue{"pk": s("u2"), "sk": n("1")}
	addX := func(set string, values map[string]types.AttributeValue) func() {
		return func() {
			if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &name, Key: key, UpdateExpression: aws.String(set),
				ExpressionAttributeValues: values}); err != nil {
				t.Errorf("the other writer: %v", err)
			}
		}
	}
	p, err := faults.Interleave(target.Emulator.URL, "PutItem", addX("SET x = :x", map[string]types.AttributeValue{":x": s("added by the app")}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	out, errOut, code := dynopsAt(t, p.URL, auditLog, "item", "put", "--table", name, "--item", `{"pk": "u2", "sk": 1, "status": "fixed"}`, "--yes", "-o", "json")
	if code != 1 {
		t.Fatalf("a put over an attribute added since the read: exit %d, want 1 (a conflict)\n%s%s", code, out, errOut)
	}
	var res struct {
		Written bool     `json:"written"`
		Changed []string `json:"changed_since_read"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !res.Written || len(res.Changed) != 1 || res.Changed[0] != "x" {
		t.Errorf("the JSON names the attribute the put replaced: %+v", res)
	}
	rec := finished(t, auditLog)
	if !strings.Contains(fmt.Sprint(rec["actions"]), "changed_since_read:[x]") {
		t.Errorf("the audit names the attribute the put replaced: %v", rec["actions"])
	}

	t.Run("--version-attribute: the other writer's increment refuses the put", func(t *testing.T) {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: map[string]types.AttributeValue{"pk": s("u2"), "sk": n("1"), "status": s("ok"), "ver": n("3")}}); err != nil {
			t.Fatal(err)
		}
		p, err := faults.Interleave(target.Emulator.URL, "PutItem", addX("SET x = :x, ver = ver + :one", map[string]types.AttributeValue{":x": s("added by the app"), ":one": n("1")}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		out, errOut, code := dynopsAt(t, p.URL, auditLog, "item", "put", "--table", name, "--item", `{"pk": "u2", "sk": 1, "status": "fixed"}`, "--version-attribute", "ver", "--yes")
		if code != 1 || !strings.Contains(out+errOut, "nothing written") || !strings.Contains(out+errOut, "version attribute ver") {
			t.Errorf("exit %d, want 1, nothing written, naming the version\n%s%s", code, out, errOut)
		}
		got := snapshot(t, db, name)
		if !strings.Contains(got, `"x":{"S":"added by the app"}`) || !strings.Contains(got, `"ver":{"N":"4"}`) {
			t.Errorf("the other writer's change is kept:\n%s", got)
		}
		out, errOut, code = dynops(t, auditLog, "item", "put", "--table", name, "--item", `{"pk": "u2", "sk": 1, "status": "fixed"}`, "--version-attribute", "ver", "--yes")
		if code != 0 || !strings.Contains(snapshot(t, db, name), `"status":{"S":"fixed"},"ver":{"N":"5"}`) {
			t.Errorf("with no writer in between the put increments the version: exit %d\n%s%s\n%s", code, out, errOut, snapshot(t, db, name))
		}
	})
}
