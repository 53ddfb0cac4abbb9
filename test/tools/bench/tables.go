package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/restore"
	"github.com/dynops/dynops/internal/tablesettings"
	"github.com/dynops/dynops/test/helpers/fixture"
)

// pollHWM reads the process's peak resident memory (VmHWM, KB) from
// /proc/PID/status every 10 ms until done and returns the last value read.
// VmHWM is the high-water mark of the process's own address space since its
// exec; the rusage of a finished child (rssKB) is not: Go starts children
// with vfork (CLONE_VM), so at exec the kernel records the parent's peak as
// the child's, and a child of this bench (which holds its tables' items in
// memory) reported the bench's own RSS. 0 where /proc is absent.
func pollHWM(pid int, done <-chan struct{}) int64 {
	path := fmt.Sprintf("/proc/%d/status", pid)
	var hwm int64
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
					hwm = max(hwm, kb)
				}
			}
		}
		select {
		case <-done:
			return hwm
		case <-t.C:
		}
	}
}

// rssKB is the max RSS of a finished process in KB from its rusage: on
// Linux it includes this process's RSS at the child's start (see pollHWM),
// so it is used only where /proc is absent.
func rssKB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" { // bytes there, KB on Linux
		return ru.Maxrss / 1024
	}
	return ru.Maxrss
}

// createTable creates an on-demand table keyed by user_id (S), waits until
// it is ACTIVE and deletes it when the bench ends.
func (e *env) createTable(suffix string) (string, error) { return e.createTableWith(suffix, 0) }

// createTableWith is createTable with rcu provisioned read units (and as
// many write units) instead of on-demand when rcu > 0.
func (e *env) createTableWith(suffix string, rcu int64) (string, error) {
	name := "dev-" + e.id + "-" + suffix
	in := &dynamodb.CreateTableInput{TableName: &name,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest}
	if rcu > 0 {
		in.BillingMode = types.BillingModeProvisioned
		in.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(rcu), WriteCapacityUnits: aws.Int64(max(rcu, 1000))}
	}
	_, err := e.db.CreateTable(e.ctx, in)
	if err != nil {
		return "", fmt.Errorf("creating %s: %w", name, err)
	}
	e.cleanup = append(e.cleanup, func() {
		if _, err := e.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name}); err != nil {
			fmt.Fprintf(os.Stderr, "bench: deleting %s: %v\n", name, err)
		}
	})
	return name, tablesettings.WaitActive(e.ctx, e.db, name, nil)
}

// tagRestoredFrom tags table as a restore of original, as `pitr restore`
// does: repair copies only from a table shown to be a restore of its target.
func (e *env) tagRestoredFrom(table, original string) error {
	d, err := e.db.DescribeTable(e.ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return fmt.Errorf("describing %s: %w", table, err)
	}
	_, err = e.db.TagResource(e.ctx, &dynamodb.TagResourceInput{ResourceArn: d.Table.TableArn,
		Tags: []types.Tag{{Key: aws.String(restore.TagRestoredFrom), Value: &original}}})
	if err != nil {
		return fmt.Errorf("tagging %s: %w", table, err)
	}
	return nil
}

// users returns items [from, to) of the bench's table shape (~200 bytes:
// the pitr suite's users, fixture.Users).
func users(n int) []map[string]types.AttributeValue { return fixture.Users(n) }

// batchWrite writes requests to table with BatchWriteItem, 25 per call,
// e.workers calls at a time, retrying unprocessed items: the raw client.
func (e *env) batchWrite(table string, reqs []types.WriteRequest) error {
	g, ctx := errgroup.WithContext(e.ctx)
	g.SetLimit(e.workers)
	for i := 0; i < len(reqs); i += 25 {
		chunk := reqs[i:min(i+25, len(reqs))]
		g.Go(func() error {
			pending := map[string][]types.WriteRequest{table: chunk}
			for attempt := 0; len(pending[table]) > 0; attempt++ {
				if attempt == 10 {
					return fmt.Errorf("BatchWriteItem to %s: items still unprocessed after 10 attempts", table)
				}
				if attempt > 0 {
					time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
				}
				out, err := e.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
				if err != nil {
					return fmt.Errorf("BatchWriteItem to %s: %w", table, err)
				}
				pending = out.UnprocessedItems
			}
			return nil
		})
	}
	return g.Wait()
}

func puts(items []map[string]types.AttributeValue) []types.WriteRequest {
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	return reqs
}

func deletes(items []map[string]types.AttributeValue) []types.WriteRequest {
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{"user_id": it["user_id"]}}}
	}
	return reqs
}

// rawGet reads the items of keys from table with BatchGetItem (consistent
// reads, 100 keys per call, e.workers calls at a time, unprocessed keys
// retried): the raw client's read half of a repair.
func (e *env) rawGet(table string, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	var mu sync.Mutex
	var items []map[string]types.AttributeValue
	g, ctx := errgroup.WithContext(e.ctx)
	g.SetLimit(e.workers)
	for i := 0; i < len(keys); i += 100 {
		chunk := keys[i:min(i+100, len(keys))]
		g.Go(func() error {
			pending := map[string]types.KeysAndAttributes{table: {Keys: chunk, ConsistentRead: aws.Bool(true)}}
			for attempt := 0; len(pending[table].Keys) > 0; attempt++ {
				if attempt == 10 {
					return fmt.Errorf("BatchGetItem from %s: keys still unprocessed after 10 attempts", table)
				}
				if attempt > 0 {
					time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
				}
				out, err := e.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
				if err != nil {
					return fmt.Errorf("BatchGetItem from %s: %w", table, err)
				}
				mu.Lock()
				items = append(items, out.Responses[table]...)
				mu.Unlock()
				pending = out.UnprocessedKeys
			}
			return nil
		})
	}
	err := g.Wait()
	return items, err
}

// rawScanItems reads every item of table with segments parallel Scan
// segments (consistent reads), as a raw copy does.
func (e *env) rawScanItems(segments int, table string) ([]map[string]types.AttributeValue, error) {
	var mu sync.Mutex
	var items []map[string]types.AttributeValue
	g, ctx := errgroup.WithContext(e.ctx)
	for seg := 0; seg < segments; seg++ {
		g.Go(func() error {
			in := &dynamodb.ScanInput{TableName: &table, Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments)), ConsistentRead: aws.Bool(true)}
			for {
				out, err := e.db.Scan(ctx, in)
				if err != nil {
					return fmt.Errorf("scanning %s: %w", table, err)
				}
				mu.Lock()
				items = append(items, out.Items...)
				mu.Unlock()
				if len(out.LastEvaluatedKey) == 0 {
					return nil
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
		})
	}
	err := g.Wait()
	return items, err
}

// rawScan reads every item of the tables with segments parallel Scan
// segments per table, all tables at once (as diff does), and counts them.
func (e *env) rawScan(segments int, tables ...string) (int64, error) {
	return e.rawScanWith(segments, "", tables...)
}

// rawScanWith is rawScan asking for ReturnConsumedCapacity rcc ("": none).
func (e *env) rawScanWith(segments int, rcc types.ReturnConsumedCapacity, tables ...string) (int64, error) {
	var n atomic.Int64
	g, ctx := errgroup.WithContext(e.ctx)
	for _, table := range tables {
		for seg := 0; seg < segments; seg++ {
			g.Go(func() error {
				in := &dynamodb.ScanInput{TableName: &table, Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(segments)), ReturnConsumedCapacity: rcc}
				for {
					out, err := e.db.Scan(ctx, in)
					if err != nil {
						return fmt.Errorf("scanning %s: %w", table, err)
					}
					n.Add(int64(len(out.Items)))
					if len(out.LastEvaluatedKey) == 0 {
						return nil
					}
					in.ExclusiveStartKey = out.LastEvaluatedKey
				}
			})
		}
	}
	err := g.Wait()
	return n.Load(), err
}

// upload puts every file under root into bucket as an export's files are
// uploaded (multipart, so the ETags are the ones the manifests list).
func (e *env) upload(bucket, root string) error {
	if err := exporttest.Upload(e.ctx, awsclients.New(e.cfg).S3(), bucket, root); err != nil {
		return fmt.Errorf("uploading %s to %s: %w", root, bucket, err)
	}
	return nil
}

// export writes a full export of table with n items in AWS's layout
// (exporttest) to a bucket on the target and returns its URI and its items.
func (e *env) export(suffix string, n int, table string) (string, []map[string]types.AttributeValue, error) {
	root := filepath.Join(e.tmp, "export-"+suffix)
	prefix := "full/" + suffix
	id := "01763700000000-" + e.id[len(e.id)-8:]
	files := []int{n / 4, n / 4, n / 4, n - 3*(n/4)}
	bucket, err := e.bucket(suffix)
	if err != nil {
		return "", nil, err
	}
	// As AWS writes it: the manifest names the table (an existing table's
	// ARN when table is one), the bucket, and an end after the upload.
	spec := exporttest.Spec{Prefix: prefix, ExportID: id, FileItems: files, PadBytes: 150, Table: table, Bucket: bucket, EndTime: time.Now().Add(time.Hour)}
	if strings.HasPrefix(table, "arn:") {
		spec.Table, spec.TableArn = "", table
	}
	if _, err := exporttest.Write(root, spec); err != nil {
		return "", nil, err
	}
	if err := e.upload(bucket, root); err != nil {
		return "", nil, err
	}
	var items []map[string]types.AttributeValue
	_, err = exportverify.Export{Store: exportverify.DirStore{Root: root}, Prefix: prefix, URI: root}.EachItem(e.ctx, 1,
		func(it map[string]types.AttributeValue) error { items = append(items, it); return nil })
	return "s3://" + bucket + "/" + prefix + "/AWSDynamoDB/" + id, items, err
}
