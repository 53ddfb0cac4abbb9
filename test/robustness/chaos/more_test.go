package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/tablesettings"
	"github.com/dynops/dynops/test/helpers/drpair"
	"github.com/dynops/dynops/test/helpers/esm"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/migrationexample"
)

// The commands of issue 16's list that the first matrix left out: export
// wait, the export series step, dlq redrive, and the migration's backfill,
// catch-up and verify, dr failover and failback.
func init() {
	scenarios = append(scenarios,
		scenario{"export wait", func(t *testing.T, e *env) ([]string, func(string) string) {
			table, b := exportTable(t, e)
			out, err := e.db.ExportTableToPointInTime(context.Background(), &dynamodb.ExportTableToPointInTimeInput{
				TableArn: aws.String(tableArn(t, e, table)), S3Bucket: &b, S3Prefix: aws.String("w")})
			require.NoError(t, err)
			arn := aws.ToString(out.ExportDescription.ExportArn)
			return []string{"export", "wait", arn}, func(string) string {
				d, err := e.db.DescribeExport(context.Background(), &dynamodb.DescribeExportInput{ExportArn: &arn})
				require.NoError(t, err)
				return "export " + string(d.ExportDescription.ExportStatus) + ", " + exportsOf(t, e, table)
			}
		}},
		scenario{"export series step (request)", func(t *testing.T, e *env) ([]string, func(string) string) {
			args, state := seriesStep(t, e)
			return args, state
		}},
		scenario{"export series step (complete, checkpoint)", func(t *testing.T, e *env) ([]string, func(string) string) {
			args, state := seriesStep(t, e)
			// The first step requested the full export (fault-free); this
			// one waits for it and moves the checkpoint.
			out, errOut, code := dynops(t, target.Emulator.URL, args[:len(args)-1]...)
			require.Equal(t, 0, code, "%s%s", out, errOut)
			return args, state
		}},
		scenario{"dlq redrive (--to-queue)", func(t *testing.T, e *env) ([]string, func(string) string) {
			ctx := context.Background()
			id := harness.UniqueID()
			table := "dev-" + id + "-order"
			streamArn := fixture.Create(t, e.db, fixture.Table{Name: table, HashKey: "order_id", Stream: true})
			for i := range 12 {
				_, err := e.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
					"order_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("o-%02d", i)}}})
				require.NoError(t, err)
			}
			st := dynamodbstreams.NewFromConfig(target.AWSConfig(t))
			shard, err := esm.StreamShard(ctx, st, streamArn)
			require.NoError(t, err)
			recs, err := esm.ReadAll(ctx, st, shard)
			require.NoError(t, err)
			require.Len(t, recs, 12)
			var urls []string
			for _, n := range []string{"dev-" + id + "-order-dlq", "dev-" + id + "-order-consumer"} {
				out, err := e.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &n})
				require.NoError(t, err)
				urls = append(urls, aws.ToString(out.QueueUrl))
			}
			for i := 0; i < len(recs); i += 2 {
				r := esm.OnFailure(shard, recs[i:i+2], esm.FunctionArn(target.Region, "order-consumer"), "", 3, time.Now())
				require.NoError(t, esm.Send(ctx, e.sqs, urls[0], r))
			}
			var want []string
			for _, r := range recs {
				want = append(want, aws.ToString(r.EventID))
			}
			return []string{"dlq", "redrive", "--queue", urls[0], "--to-queue", urls[1], "--visibility-timeout", "10s", "--yes"},
				func(string) string { return redriven(t, e.sqs, urls, want) }
		}},
		scenario{"migrate backfill", func(t *testing.T, e *env) ([]string, func(string) string) {
			m := newMigration(t, e)
			return m.args("backfill"), func(string) string { return m.fingerprints(t, e) }
		}},
		scenario{"migrate catch-up", func(t *testing.T, e *env) ([]string, func(string) string) {
			m := newMigration(t, e)
			m.run(t, "backfill")
			m.change(t, e)
			return m.args("catch-up"), func(string) string { return m.fingerprints(t, e) }
		}},
		scenario{"migrate verify", func(t *testing.T, e *env) ([]string, func(string) string) {
			m := newMigration(t, e)
			m.run(t, "backfill")
			m.change(t, e)
			m.run(t, "catch-up")
			return m.args("verify")[:8], func(out string) string { return lastLine(out) }
		}},
	)
}

// seriesStep is a table, a bucket and a checkpoint table, and the series
// step with --wait: the checkpoint's state, and the table's exports (a
// retried request that started a second export would show).
func seriesStep(t *testing.T, e *env) ([]string, func(string) string) {
	table, b := exportTable(t, e)
	cp := "dev-" + harness.UniqueID() + "-export-checkpoint"
	_, err := e.db.CreateTable(context.Background(), &dynamodb.CreateTableInput{TableName: &cp, BillingMode: types.BillingModePayPerRequest,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("table_name"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("table_name"), AttributeType: types.ScalarAttributeTypeS}}})
	require.NoError(t, err)
	require.NoError(t, tablesettings.WaitActive(context.Background(), e.db, cp, nil))
	t.Cleanup(func() { fixture.Cleanup(t, e.db, cp) })
	return []string{"export", "incremental", "--table", table, "--bucket", b, "--prefix", "series/" + table, "--since-checkpoint", "--checkpoint-table", cp, "--wait"},
		func(out string) string {
			st, err := export.CheckpointStore{DB: e.db, Table: cp}.Load(context.Background(), table)
			require.NoError(t, err)
			tbl, err := export.DescribeTable(context.Background(), e.db, table)
			require.NoError(t, err)
			return fmt.Sprintf("checkpoint at the full export's time %v, in flight %v, %s", st.Checkpoint.Equal(tbl.PITR.Latest), st.InFlight != nil, exportsOf(t, e, table))
		}
}

// exportTable is a table of 40 users with PITR and a bucket.
func exportTable(t *testing.T, e *env) (string, string) {
	table := "dev-" + harness.UniqueID() + "-user"
	fixture.Create(t, e.db, fixture.Table{Name: table, HashKey: "user_id", PITR: true})
	fixture.Put(t, e.db, table, users(40))
	return table, bucket(t, e)
}

func tableArn(t *testing.T, e *env, table string) string {
	d, err := e.db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &table})
	require.NoError(t, err)
	return aws.ToString(d.Table.TableArn)
}

// exportsOf counts the table's exports by status: a retried request that
// started a second export would show here.
func exportsOf(t *testing.T, e *env, table string) string {
	arn := tableArn(t, e, table)
	n := map[string]int{}
	p := dynamodb.NewListExportsPaginator(e.db, &dynamodb.ListExportsInput{TableArn: &arn})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, s := range page.ExportSummaries {
			n[string(s.ExportStatus)]++
		}
	}
	var parts []string
	for k, v := range n {
		parts = append(parts, fmt.Sprintf("%d %s", v, k))
	}
	sort.Strings(parts)
	return "exports: " + strings.Join(parts, ", ")
}

// redriven reads both queues from the service: each consumer-queue message
// is a rebuilt stream event ({"Records": [...]}); want is the stream's
// event IDs, every one of which must have been delivered at least once
// (at-least-once: duplicates are documented and only logged), and the DLQ
// must be empty. The lost count is want minus what the consumer queue
// holds, counted, never assumed.
func redriven(t *testing.T, c *sqs.Client, urls []string, want []string) string {
	ctx := context.Background()
	delivered, left, unreadable := map[string]int{}, 0, 0
	for i, u := range urls {
		for empty := 0; empty < 2; {
			out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(u), MaxNumberOfMessages: 10, VisibilityTimeout: 60})
			require.NoError(t, err)
			if len(out.Messages) == 0 {
				empty++
				continue
			}
			for _, m := range out.Messages {
				if i == 0 {
					left++
					continue
				}
				var ev events.DynamoDBEvent
				if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil || len(ev.Records) == 0 {
					unreadable++
					continue
				}
				for _, r := range ev.Records {
					delivered[r.EventID]++
				}
			}
		}
	}
	lost, dups := 0, 0
	for _, id := range want {
		switch n := delivered[id]; {
		case n == 0:
			lost++
		case n > 1:
			dups += n - 1
		}
	}
	if dups > 0 {
		t.Logf("dlq redrive: %d duplicate deliveries (at-least-once, documented)", dups)
	}
	return fmt.Sprintf("%d of %d stream records delivered, %d lost, %d unreadable messages, %d left in the DLQ", len(want)-lost, len(want), lost, unreadable, left)
}

// migration is the example migration (test/helpers/migrationexample): its single
// table and twelve destinations, with fixed names, created for one cell and
// deleted at its end.
type migration struct {
	state, auditLog string
	dests           []string
}

func newMigration(t *testing.T, e *env) *migration {
	migrationexample.CreateTable(t, e.db, migrationexample.Source, migrationexample.SourceSpec(), false)
	m := &migration{state: filepath.Join(t.TempDir(), "state.json"), auditLog: filepath.Join(t.TempDir(), "audit.jsonl")}
	for usage, spec := range migrationexample.Destinations(t) {
		name := "dev-" + migrationexample.Product + "-" + usage
		migrationexample.CreateTable(t, e.db, name, spec, false)
		m.dests = append(m.dests, name)
	}
	sort.Strings(m.dests)
	migrationexample.Populate(t, e.db, 120)
	return m
}

func (m *migration) args(verb string) []string {
	return []string{"migrate", verb, "--source", migrationexample.Source, "--routes", migrationexample.RoutesFile(), "--state", m.state, "--allow-unmatched"}
}

// run runs a step fault-free (the cell's setup).
func (m *migration) run(t *testing.T, verb string) {
	out, errOut, code := dynops(t, target.Emulator.URL, m.args(verb)...)
	require.Equal(t, 0, code, "%s%s", out, errOut)
}

// change writes to the source after the backfill: new items, updates and
// deletes, for the catch-up to replay from the stream.
func (m *migration) change(t *testing.T, e *env) {
	ctx := context.Background()
	for i := 200; i < 230; i++ {
		_, err := e.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(migrationexample.Source), Item: migrationexample.Item(i)})
		require.NoError(t, err)
	}
	for i := 0; i < 20; i++ {
		it := migrationexample.Item(i)
		if i%2 == 0 {
			_, err := e.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(migrationexample.Source), Key: map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}})
			require.NoError(t, err)
			continue
		}
		it["changed"] = migrationexample.S("yes")
		_, err := e.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(migrationexample.Source), Item: it})
		require.NoError(t, err)
	}
}

// fingerprints are the destinations' items.
func (m *migration) fingerprints(t *testing.T, e *env) string {
	var parts []string
	for _, d := range m.dests {
		if f := fingerprint(t, e.db, d); !strings.HasPrefix(f, "0 items") {
			parts = append(parts, strings.TrimPrefix(d, "dev-aiagent-")+" "+f)
		}
	}
	return strings.Join(parts, "; ")
}

// drState is the pair's state as dr status reads it (fault-free): the
// region every pointer names, and which regions are fenced.
func drState(t *testing.T, p drpair.Pair) string {
	out, errOut, _ := dynops(t, target.Emulator.URL, "dr", "status", "-o", "json", "--table", p.Table, "--regions", drpair.Home+","+drpair.Away, "--allow-unreplicated")
	var rep struct{ State failover.State }
	require.NoError(t, json.Unmarshal([]byte(out), &rep), errOut)
	var fenced []string
	for _, r := range rep.State.Regions {
		if r.Fenced {
			fenced = append(fenced, r.Region)
		}
	}
	return fmt.Sprintf("active %s, fenced %v", rep.State.Active, fenced)
}

func init() {
	scenarios = append(scenarios,
		scenario{"dr failover", func(t *testing.T, e *env) ([]string, func(string) string) {
			p := drpair.New(t, target, drpair.Options{})
			p.PublishLatency(t, drpair.Home, drpair.Away, 250, 750)
			return []string{"dr", "failover", "--to", drpair.Away, "--yes", "--table", p.Table, "--regions", drpair.Home + "," + drpair.Away, "--allow-unreplicated"},
				func(string) string { return drState(t, p) }
		}},
		scenario{"dr failback", func(t *testing.T, e *env) ([]string, func(string) string) {
			p := drpair.New(t, target, drpair.Options{})
			p.PublishLatency(t, drpair.Home, drpair.Away, 250, 750)
			pair := []string{"--table", p.Table, "--regions", drpair.Home + "," + drpair.Away, "--allow-unreplicated"}
			out, errOut, code := dynops(t, target.Emulator.URL, append([]string{"dr", "failover", "--to", drpair.Away, "--yes"}, pair...)...)
			require.Equal(t, 0, code, "%s%s", out, errOut)
			p.PublishLatency(t, drpair.Away, drpair.Home, 250, 750)
			return append([]string{"dr", "failback", "--to", drpair.Home, "--yes"}, pair...), func(string) string { return drState(t, p) }
		}},
	)
}
