package badinput

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/lambdaendpoint"
)

// clients read and seed the emulator.
type clients struct {
	db  *dynamodb.Client
	sqs *sqs.Client
	s3  *s3.Client
	ssm *ssm.Client
}

// world is what the cases run against: the names of everything seeded.
type world struct {
	id string
	c  clients

	// Unprotected (env tag dev, DDB-NAME-01 names).
	devTable, devRestored, devOther, devOrders string
	devDLQ, devFnDLQ, devDest                  string // queue URLs
	devFn                                      string
	bucket, prefix                             string
	incPrefix, incSince                        string // an incremental export (export apply) and its window's start
	incTableArn                                string // the table it names
	param                                      string

	// Protected targets: every way a target is protected.
	tables    []protectedTarget
	queues    []protectedTarget
	functions []protectedTarget
	prodDest  string // a protected destination queue URL
	// srcDLQ is the DLQ of the protected queue prodSource (its RedrivePolicy).
	srcDLQ, prodSource string
	msgFn              string // the protected function the devFnDLQ's record names

	baseline snapshot
}

// protectedTarget is one protected table, queue or function and why.
type protectedTarget struct {
	label string // the row name: how it is protected
	name  string // the name to type (table, queue or function name)
	url   string // a queue's URL
	// denied: reached through the endpoint that denies tag reads.
	denied bool
}

// revertPrefix is where setup puts an incremental export of table.
func revertPrefix(table string) string { return "revert/" + table }

// emulatorExports is the --unverified-exports reason for the exports of
// this suite: written without manifests, as the emulator writes them.
const emulatorExports = "bad input test: the emulator's exports have no manifests"

var (
	setupOnce sync.Once
	w         *world
	setupErr  error
)

// setup seeds the emulator once for every test of the package.
func setup(t *testing.T) *world {
	t.Helper()
	setupOnce.Do(func() {
		denyTags, setupErr = startDenyTags(target.Endpoint())
		if setupErr != nil {
			return
		}
		start := time.Now()
		w, setupErr = seed(t)
		if setupErr == nil {
			w.baseline, setupErr = take(context.Background(), w.c)
		}
		t.Logf("seeded the emulator in %s", time.Since(start).Round(time.Millisecond))
	})
	if setupErr != nil {
		t.Fatalf("seeding the emulator: %v", setupErr)
	}
	return w
}

func seed(t *testing.T) (*world, error) {
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	id := harness.UniqueID()
	x := &world{id: id, c: clients{db: dynamodb.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg), s3: s3.NewFromConfig(cfg), ssm: ssm.NewFromConfig(cfg)}}
	dev := map[string]string{"env": "dev", "product": id}

	x.devTable, x.devRestored, x.devOther, x.devOrders = "dev-"+id+"-user", "dev-"+id+"-user-restored", "dev-"+id+"-other", "dev-"+id+"-orders"
	type tbl struct {
		name, key string
		tags      map[string]string
		items     []string
	}
	tables := []tbl{
		{x.devTable, "user_id", dev, []string{"u1", "u2", "u3"}},
		// What `pitr restore` writes: restored-from names the original; the
		// items differ from every target, so a repair that ran would show.
		{x.devRestored, "user_id", map[string]string{"env": "dev", "restored-from": x.devTable}, []string{"u1", "u2", "u-restored"}},
		{x.devOther, "user_id", dev, []string{"o1"}},
		{x.devOrders, "order_id", dev, []string{"o1"}},
	}
	for _, p := range []struct{ label, name string }{
		{"prod- prefix", "prod-" + id + "-user"},
		{"PROD- upper case, legacy", "PROD-" + id + "-legacy"},
		{"Prod- mixed case", "Prod-" + id + "-user"},
		{"production-", "production-" + id + "-user"},
		{"prd-", "prd-" + id + "-user"},
		{"live-", "live-" + id + "-user"},
		{"legacy name outside DDB-NAME-01", "UsersTable" + id},
		{"unknown env", "qa-" + id + "-user"},
	} {
		x.tables = append(x.tables, protectedTarget{label: p.label, name: p.name})
		tables = append(tables, tbl{p.name, "user_id", map[string]string{"product": id}, []string{"u1", "u2"}})
	}
	innocuous := "dev-" + id + "-session"
	x.tables = append(x.tables,
		protectedTarget{label: "env tag prod on an innocuous name", name: innocuous},
		protectedTarget{label: "tags cannot be read", name: x.devTable, denied: true})
	tables = append(tables, tbl{innocuous, "user_id", map[string]string{"env": "prod"}, []string{"s1"}})

	for _, tb := range tables {
		if err := createTable(ctx, x.c.db, tb.name, tb.key, tb.tags, tb.items); err != nil {
			return nil, err
		}
	}

	// Queues: each protected one holds a message, so a move that ran would show.
	var err error
	if x.devDLQ, err = createQueue(ctx, x.c.sqs, "dev-"+id+"-dlq", dev, "a failed message"); err != nil {
		return nil, err
	}
	if x.devDest, err = createQueue(ctx, x.c.sqs, "dev-"+id+"-dest", dev, ""); err != nil {
		return nil, err
	}
	if x.prodDest, err = createQueue(ctx, x.c.sqs, "prod-"+id+"-dest", nil, ""); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		label, name string
		tags        map[string]string
	}{
		{"prod- prefix", "prod-" + id + "-dlq", nil},
		{"PROD- upper case, legacy", "PROD-" + id + "-dlq", nil},
		{"Prod- mixed case", "Prod-" + id + "-dlq", nil},
		{"production-", "production-" + id + "-dlq", nil},
		{"prd-", "prd-" + id + "-dlq", nil},
		{"legacy name outside DDB-NAME-01", "OrdersDLQ" + id, nil},
		{"unknown env", "qa-" + id + "-dlq", nil},
		{"env tag prod on an innocuous name", "dev-" + id + "-orders-dlq", map[string]string{"env": "prod"}},
	} {
		u, err := createQueue(ctx, x.c.sqs, p.name, p.tags, "a failed message")
		if err != nil {
			return nil, err
		}
		x.queues = append(x.queues, protectedTarget{label: p.label, name: p.name, url: u})
	}
	x.queues = append(x.queues, protectedTarget{label: "tags cannot be read", name: "dev-" + id + "-dlq", url: x.devDLQ, denied: true})

	// A DLQ whose source queue (ListDeadLetterSourceQueues) is protected: a
	// move without --to-queue goes back there.
	if x.srcDLQ, err = createQueue(ctx, x.c.sqs, "dev-"+id+"-src-dlq", dev, "a failed message"); err != nil {
		return nil, err
	}
	attrs, err := x.c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &x.srcDLQ, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return nil, fmt.Errorf("reading the DLQ's ARN: %w", err)
	}
	x.prodSource = "prod-" + id + "-orders"
	if _, err := x.c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &x.prodSource, Attributes: map[string]string{
		"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"3"}`, attrs.Attributes["QueueArn"])}}); err != nil {
		return nil, fmt.Errorf("creating the source queue: %w", err)
	}

	// Functions, on the Lambda stand-in.
	x.devFn = "dev-" + id + "-consumer"
	x.msgFn = "prod-" + id + "-consumer"
	fnTags := map[string]map[string]string{x.devFn: {"env": "dev"}}
	for _, p := range []struct {
		label, name string
		tags        map[string]string
	}{
		{"prod- prefix", x.msgFn, nil},
		{"PROD- upper case, legacy", "PROD-" + id + "-consumer", nil},
		{"legacy name outside DDB-NAME-01", "order-consumer-" + id, nil},
		{"env tag prod on an innocuous name", "dev-" + id + "-indexer", map[string]string{"env": "prod"}},
		{"unknown function (tags cannot be read)", "dev-" + id + "-missing", nil},
	} {
		if !strings.HasSuffix(p.name, "-missing") {
			fnTags[p.name] = p.tags
		}
		x.functions = append(x.functions, protectedTarget{label: p.label, name: p.name})
	}
	x.functions = append(x.functions, protectedTarget{label: "tags cannot be read", name: x.devFn, denied: true})
	registerFunctions(fnTags)
	// A DLQ whose on-failure record names the protected function.
	if x.devFnDLQ, err = createQueue(ctx, x.c.sqs, "dev-"+id+"-fn-dlq", dev, onFailureRecord(lambdaendpoint.ARN(x.msgFn))); err != nil {
		return nil, err
	}

	// An export's data in a bucket, for the import cases: without manifests,
	// as the emulator writes them (read with --unverified-exports).
	x.bucket, x.prefix = "dev-"+id+"-exports", "full"
	if _, err := x.c.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &x.bucket, CreateBucketConfiguration: &s3types.CreateBucketConfiguration{
		LocationConstraint: s3types.BucketLocationConstraint(target.Region)}}); err != nil {
		return nil, fmt.Errorf("creating bucket: %w", err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	fmt.Fprintln(zw, `{"Item":{"user_id":{"S":"u1"}}}`)
	_ = zw.Close()
	key := x.prefix + "/AWSDynamoDB/01234567890123-abcdef01/data/part-0001.json.gz"
	if _, err := x.c.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: &x.bucket, Key: &key, Body: bytes.NewReader(gz.Bytes())}); err != nil {
		return nil, fmt.Errorf("writing the export: %w", err)
	}

	// An incremental export in AWS's layout, for export apply.
	// It names the bucket and ends after its upload, as AWS writes one.
	inc := exporttest.Spec{Prefix: "incremental", ExportID: "01772323200000-cccc0003", Incremental: true, FileItems: []int{2}, Table: x.devTable,
		Bucket: x.bucket, EndTime: time.Now().Add(time.Hour)}
	root, err := os.MkdirTemp("", "badinput-export")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	if _, err := exporttest.Write(root, inc); err != nil {
		return nil, fmt.Errorf("writing the incremental export: %w", err)
	}
	if err := exporttest.Upload(ctx, x.c.s3, x.bucket, root); err != nil {
		return nil, fmt.Errorf("uploading the incremental export: %w", err)
	}
	x.incPrefix, x.incSince, x.incTableArn = inc.Prefix, "2026-03-01T00:00:00Z", inc.TableARN()
	// For export revert's control row: an incremental export (NEW_AND_OLD_IMAGES)
	// of each protected table, under revertPrefix, naming that table's ARN,
	// so that it vouches (with --unverified-exports: the emulator keeps no
	// export records) for a revert of that table.
	revertRoot, err := os.MkdirTemp("", "badinput-revert")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(revertRoot)
	for _, p := range x.tables {
		d, err := x.c.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.name})
		if err != nil {
			return nil, fmt.Errorf("reading the ARN of %s: %w", p.name, err)
		}
		spec := exporttest.Spec{Prefix: revertPrefix(p.name), ExportID: "01772323200000-dddd0004", Incremental: true, FileItems: []int{2},
			TableArn: aws.ToString(d.Table.TableArn), Bucket: x.bucket, EndTime: time.Now().Add(time.Hour)}
		if _, err := exporttest.Write(revertRoot, spec); err != nil {
			return nil, fmt.Errorf("writing the export of %s: %w", p.name, err)
		}
	}
	if err := exporttest.Upload(ctx, x.c.s3, x.bucket, revertRoot); err != nil {
		return nil, fmt.Errorf("uploading the exports of the protected tables: %w", err)
	}

	// The DR pointer a failover would flip.
	x.param = "/dynops/dr/" + x.devTable + "/active-region"
	if _, err := x.c.ssm.PutParameter(ctx, &ssm.PutParameterInput{Name: &x.param, Value: aws.String("eu-west-1"), Type: ssmtypes.ParameterTypeString}); err != nil {
		return nil, fmt.Errorf("writing the pointer: %w", err)
	}
	return x, nil
}

func createTable(ctx context.Context, db *dynamodb.Client, name, key string, tags map[string]string, items []string) error {
	in := &dynamodb.CreateTableInput{
		TableName:            &name,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: &key, AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: &key, KeyType: types.KeyTypeHash}},
		// A stream, as the guideline's tables have: the migrate rows' plan
		// checks (a source needs one) pass, so their refusals are the guard's.
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
	}
	for k, v := range tags {
		in.Tags = append(in.Tags, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	if _, err := db.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, time.Minute); err != nil {
		return fmt.Errorf("waiting for %s: %w", name, err)
	}
	if _, err := db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: &name,
		PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}}); err != nil {
		return fmt.Errorf("enabling PITR on %s: %w", name, err)
	}
	for _, v := range items {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: map[string]types.AttributeValue{
			key: &types.AttributeValueMemberS{Value: v}, "status": &types.AttributeValueMemberS{Value: "in " + name},
		}}); err != nil {
			return fmt.Errorf("writing to %s: %w", name, err)
		}
	}
	return nil
}

func createQueue(ctx context.Context, c *sqs.Client, name string, tags map[string]string, body string) (string, error) {
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Tags: tags})
	if err != nil {
		return "", fmt.Errorf("creating queue %s: %w", name, err)
	}
	if body != "" {
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: &body}); err != nil {
			return "", fmt.Errorf("sending to %s: %w", name, err)
		}
	}
	return aws.ToString(out.QueueUrl), nil
}

// onFailureRecord is a DynamoDB Streams on-failure record naming functionArn.
func onFailureRecord(functionArn string) string {
	now := time.Now().UTC()
	b, _ := json.Marshal(map[string]any{
		"requestContext":  map[string]any{"requestId": "r-1", "functionArn": functionArn, "condition": "RetryAttemptsExhausted", "approximateInvokeCount": 3},
		"responseContext": map[string]any{"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
		"version":         "1.0",
		"timestamp":       now.Format(time.RFC3339Nano),
		"DDBStreamBatchInfo": map[string]any{
			"shardId": "shardId-00000001700000000000-00000001", "startSequenceNumber": "100", "endSequenceNumber": "200",
			"approximateArrivalOfFirstRecord": now.Add(-time.Hour).Format(time.RFC3339Nano),
			"approximateArrivalOfLastRecord":  now.Add(-time.Hour).Format(time.RFC3339Nano), "batchSize": 1,
			"streamArn": "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-x-y/stream/2026-11-22T00:00:00.000",
		},
	})
	return string(b)
}

// snapshot is the emulator's state as the cases may not change it, rendered
// one fact a line so a difference reads as a diff.
type snapshot []string

// take reads the whole state: every table (settings, tags, items), every
// queue's depth, every object, every SSM parameter, every invocation.
func take(ctx context.Context, c clients) (snapshot, error) {
	var s snapshot
	add := func(format string, args ...any) { s = append(s, fmt.Sprintf(format, args...)) }
	tables, err := c.db.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		return nil, fmt.Errorf("ListTables: %w", err)
	}
	// Tables are read in parallel: the snapshot runs after every case.
	facts := make([][]string, len(tables.TableNames))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, name := range tables.TableNames {
		g.Go(func() (err error) {
			facts[i], err = tableFacts(gctx, c, name)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, f := range facts {
		s = append(s, f...)
	}
	queues, err := c.sqs.ListQueues(ctx, &sqs.ListQueuesInput{})
	if err != nil {
		return nil, fmt.Errorf("ListQueues: %w", err)
	}
	for _, u := range queues.QueueUrls {
		a, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u, AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"}})
		if err != nil {
			return nil, fmt.Errorf("GetQueueAttributes %s: %w", u, err)
		}
		add("queue %s: visible %s, in flight %s, delayed %s", u, a.Attributes["ApproximateNumberOfMessages"],
			a.Attributes["ApproximateNumberOfMessagesNotVisible"], a.Attributes["ApproximateNumberOfMessagesDelayed"])
	}
	buckets, err := c.s3.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		return nil, fmt.Errorf("ListBuckets: %w", err)
	}
	for _, b := range buckets.Buckets {
		p := s3.NewListObjectsV2Paginator(c.s3, &s3.ListObjectsV2Input{Bucket: b.Name})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("ListObjectsV2 %s: %w", aws.ToString(b.Name), err)
			}
			for _, o := range page.Contents {
				add("object s3://%s/%s: %d bytes, etag %s", aws.ToString(b.Name), aws.ToString(o.Key), aws.ToInt64(o.Size), aws.ToString(o.ETag))
			}
		}
		add("bucket %s", aws.ToString(b.Name))
	}
	params := ssm.NewDescribeParametersPaginator(c.ssm, &ssm.DescribeParametersInput{})
	for params.HasMorePages() {
		page, err := params.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeParameters: %w", err)
		}
		for _, p := range page.Parameters {
			v, err := c.ssm.GetParameter(ctx, &ssm.GetParameterInput{Name: p.Name})
			if err != nil {
				return nil, fmt.Errorf("GetParameter %s: %w", aws.ToString(p.Name), err)
			}
			add("parameter %s = %s (version %d)", aws.ToString(p.Name), aws.ToString(v.Parameter.Value), v.Parameter.Version)
		}
	}
	add("function invocations: %d (tag-readable endpoint), %d (tag-denying endpoint)", len(fns.Invocations()), len(fnsDenied.Invocations()))
	sort.Strings(s)
	return s, nil
}

// tableFacts reads one table: settings, tags, resource policy, items.
func tableFacts(ctx context.Context, c clients, name string) ([]string, error) {
	var s []string
	add := func(format string, args ...any) { s = append(s, fmt.Sprintf(format, args...)) }
	dt, err := c.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &name})
	if err != nil {
		return nil, fmt.Errorf("DescribeTable %s: %w", name, err)
	}
	d := dt.Table
	stream := "off"
	if d.StreamSpecification != nil && aws.ToBool(d.StreamSpecification.StreamEnabled) {
		stream = string(d.StreamSpecification.StreamViewType)
	}
	add("table %s: status %s, keys %v, deletion protection %v, stream %s, %d GSI(s)", name, d.TableStatus, keyNames(d.KeySchema),
		aws.ToBool(d.DeletionProtectionEnabled), stream, len(d.GlobalSecondaryIndexes))
	cb, err := c.db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: &name})
	if err != nil {
		return nil, fmt.Errorf("DescribeContinuousBackups %s: %w", name, err)
	}
	add("table %s: PITR %s", name, cb.ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus)
	ttl, err := c.db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: &name})
	if err != nil {
		return nil, fmt.Errorf("DescribeTimeToLive %s: %w", name, err)
	}
	add("table %s: TTL %s %s", name, ttl.TimeToLiveDescription.TimeToLiveStatus, aws.ToString(ttl.TimeToLiveDescription.AttributeName))
	tags, err := c.db.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: d.TableArn})
	if err != nil {
		return nil, fmt.Errorf("ListTagsOfResource %s: %w", name, err)
	}
	for _, tg := range tags.Tags {
		add("table %s: tag %s=%s", name, aws.ToString(tg.Key), aws.ToString(tg.Value))
	}
	if pol, err := c.db.GetResourcePolicy(ctx, &dynamodb.GetResourcePolicyInput{ResourceArn: d.TableArn}); err == nil {
		add("table %s: resource policy %s", name, aws.ToString(pol.Policy))
	}
	p := dynamodb.NewScanPaginator(c.db, &dynamodb.ScanInput{TableName: &name, ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("Scan %s: %w", name, err)
		}
		for _, it := range page.Items {
			add("table %s: item %s", name, itemString(it))
		}
	}

	return s, nil
}

func keyNames(ks []types.KeySchemaElement) []string {
	var out []string
	for _, k := range ks {
		out = append(out, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	return out
}

func itemString(it map[string]types.AttributeValue) string {
	keys := make([]string, 0, len(it))
	for k := range it {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%#v ", k, it[k])
	}
	return b.String()
}

// diff lists the lines only in a and only in b.
func diff(a, b snapshot) string {
	in := func(s snapshot) map[string]bool {
		m := map[string]bool{}
		for _, l := range s {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, l := range a {
		if !mb[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range b {
		if !ma[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
