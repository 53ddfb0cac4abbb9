// Package table tests `dynops table diff` run as shards (--engine local)
// against the emulator, through the built binary (the local engine runs
// that binary once per shard): the sharded report and keys file equal the
// single-process command's at 1, 2 and 4 shards, for two tables and for an
// export in AWS's layout against a table; a map shard SIGKILLed mid-way
// and run again, and a shard run twice at once, leave the same objects.
package table

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// dynops runs the built binary (not in-process: the local engine runs
// os.Executable once per shard) against endpoint.
func dynops(t *testing.T, endpoint, log string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return command(t, endpoint, log, args...).Run()
}

func command(t *testing.T, endpoint, log string, args ...string) *harness.Proc {
	return target.Command(t, args, harness.Via(endpoint), harness.AuditLog(log))
}

type env struct {
	db     *dynamodb.Client
	s3     *s3.Client
	bucket string
	log    string
	dir    string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	if !target.OnEmulator() {
		t.Skip("a few hundred items on the emulator; the AWS run (>= 10^7 items on Batch) is the shard-batch suite's")
	}
	cfg := target.AWSConfig(t)
	e := &env{db: dynamodb.NewFromConfig(cfg), s3: awsclients.New(cfg).S3(), dir: t.TempDir()}
	e.log = filepath.Join(e.dir, "audit.jsonl")
	e.bucket = "dev-" + harness.UniqueID() + "-runs"
	in := &s3.CreateBucketInput{Bucket: &e.bucket}
	if target.Region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(target.Region)}
	}
	_, err := e.s3.CreateBucket(context.Background(), in)
	require.NoError(t, err)
	return e
}

// objects reads every object under prefix: key -> bytes.
func (e *env) objects(t *testing.T, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	got := map[string]string{}
	p := s3.NewListObjectsV2Paginator(e.s3, &s3.ListObjectsV2Input{Bucket: &e.bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		require.NoError(t, err)
		for _, o := range page.Contents {
			out, err := e.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &e.bucket, Key: o.Key})
			require.NoError(t, err)
			b, err := io.ReadAll(out.Body)
			out.Body.Close()
			require.NoError(t, err)
			got[aws.ToString(o.Key)] = string(b)
		}
	}
	return got
}

// diffed is a diff's JSON report and its keys file's records.
type diffed struct {
	rep  tablediff.Report
	keys []tablediff.KeyRecord
	hdr  tablediff.Header
}

func (e *env) diff(t *testing.T, name string, args ...string) diffed {
	t.Helper()
	keys := filepath.Join(e.dir, name+".keys.jsonl")
	out, _, code := dynops(t, target.Emulator.URL, e.log, append(args, "--keys-out", keys, "--buckets", "16", "-o", "json")...)
	require.Equal(t, 0, code)
	var d diffed
	require.NoError(t, json.Unmarshal([]byte(out), &d.rep))
	var err error
	d.hdr, err = tablediff.ReadKeys(keys, func(r tablediff.KeyRecord) error { d.keys = append(d.keys, r); return nil })
	require.NoError(t, err)
	return d
}

// requireSame: the sharded run's counts, samples and keys (in file order)
// are the single-process run's.
func requireSame(t *testing.T, want, got diffed) {
	t.Helper()
	w, g := want.rep, got.rep
	assert.Equal(t, []int64{w.SourceItems, w.TargetItems, w.Same, w.OnlyInSource, w.OnlyInTarget, w.Changed},
		[]int64{g.SourceItems, g.TargetItems, g.Same, g.OnlyInSource, g.OnlyInTarget, g.Changed}, "source, target, same, only in source, only in target, changed")
	assert.Equal(t, w.Sample, g.Sample)
	assert.Equal(t, w.KeyNames, g.KeyNames)
	assert.Equal(t, w.Buckets, g.Buckets)
	assert.Equal(t, w.Source, g.Source)
	assert.Equal(t, w.Target, g.Target)
	assert.Equal(t, want.keys, got.keys)
	assert.Equal(t, want.hdr.Source, got.hdr.Source)
	assert.Equal(t, want.hdr.KeyNames, got.hdr.KeyNames)
}

// tables: a source of 300 users and a target that lost 20, had 15 changed
// (a value, a type, a set, an attribute removed) and gained 10.
func (e *env) tables(t *testing.T) (string, string) {
	t.Helper()
	src, dst := "dev-"+harness.UniqueID()+"-user-a", "dev-"+harness.UniqueID()+"-user-b"
	fixture.Create(t, e.db, fixture.Table{Name: src, HashKey: "user_id"})
	fixture.Create(t, e.db, fixture.Table{Name: dst, HashKey: "user_id"})
	items := fixture.Users(300)
	fixture.Put(t, e.db, src, items)
	fixture.Put(t, e.db, dst, changed(items[20:], 15, 10))
	return src, dst
}

// changed copies items, changes the first n (four kinds of change) and adds
// extra new ones.
func changed(items []map[string]types.AttributeValue, n, extra int) []map[string]types.AttributeValue {
	var out []map[string]types.AttributeValue
	for i, it := range items {
		m := map[string]types.AttributeValue{}
		for k, v := range it {
			m[k] = v
		}
		if i < n {
			switch i % 4 {
			case 0:
				m["email"] = &types.AttributeValueMemberS{Value: "changed@example.com"}
			case 1:
				m["logins"] = &types.AttributeValueMemberS{Value: "12"}
			case 2:
				m["tags"] = &types.AttributeValueMemberSS{Value: []string{"z"}}
			case 3:
				delete(m, "email")
			}
		}
		out = append(out, m)
	}
	for i := range extra {
		out = append(out, map[string]types.AttributeValue{"user_id": &types.AttributeValueMemberS{Value: fmt.Sprintf("new-%03d", i)}})
	}
	return out
}

// export uploads an export in AWS's layout (four data files, one an empty
// partition) and returns its URI and items.
func (e *env) export(t *testing.T) (string, []map[string]types.AttributeValue) {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	spec := exporttest.Spec{Prefix: "full/dev-user", ExportID: "01763700000000-a1b2c3d4", FileItems: []int{90, 0, 60, 80}, PadBytes: 40,
		Table: "dev-user", Bucket: e.bucket, EndTime: time.Now().Add(time.Hour)}
	_, err := exporttest.Write(root, spec)
	require.NoError(t, err)
	require.NoError(t, exporttest.Upload(ctx, e.s3, e.bucket, root))
	var items []map[string]types.AttributeValue
	var mu sync.Mutex
	_, err = exportverify.Export{Store: exportverify.DirStore{Root: root}, Prefix: spec.Prefix, URI: root}.EachItem(ctx, 1,
		func(it map[string]types.AttributeValue) error {
			mu.Lock()
			items = append(items, it)
			mu.Unlock()
			return nil
		})
	require.NoError(t, err)
	return "s3://" + e.bucket + "/" + spec.Prefix + "/AWSDynamoDB/" + spec.ExportID, items
}

// TestShardedDiffEqualsSingleProcess: two tables, and an export against a
// table, diffed in one process and with --engine local at 1, 2 and 4
// shards: the same counts, samples and keys file; the run is audited with
// its run ID and prefix.
func TestShardedDiffEqualsSingleProcess(t *testing.T) {
	e := newEnv(t)
	src, dst := e.tables(t)
	uri, items := e.export(t)
	fromExport := "dev-" + harness.UniqueID() + "-user-c"
	fixture.Create(t, e.db, fixture.Table{Name: fromExport, HashKey: "user_id"})
	fixture.Put(t, e.db, fromExport, changed(items[25:], 12, 7))

	for _, pair := range []struct {
		name string
		args []string
	}{
		{"tables", []string{"--source", src, "--target", dst}},
		// The emulator keeps no export records: DynamoDB cannot vouch for
		// the fixture, so the reason is given (the driver and each map
		// shard vouch).
		{"export and table", []string{"--source-export", uri, "--target", fromExport, "--unverified-exports", "sharded test: the emulator keeps no export records"}},
	} {
		t.Run(pair.name, func(t *testing.T) {
			single := e.diff(t, "single-"+pair.name, append([]string{"table", "diff"}, pair.args...)...)
			require.Positive(t, single.rep.OnlyInSource)
			require.Positive(t, single.rep.OnlyInTarget)
			require.Positive(t, single.rep.Changed)
			for _, n := range []int{1, 2, 4} {
				runID := fmt.Sprintf("t-%s-%d", strings.ReplaceAll(pair.name, " ", "-"), n)
				got := e.diff(t, runID, append([]string{"table", "diff", "--engine", "local", "--shards", fmt.Sprint(n),
					"--run-prefix", "s3://" + e.bucket + "/diff-runs", "--run-id", runID}, pair.args...)...)
				t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) { requireSame(t, single, got) })
			}
		})
	}
	recs, err := audit.Read(e.log)
	require.NoError(t, err)
	var runs, stages int
	for _, r := range recs {
		for _, a := range r.Actions {
			switch a.What {
			case audit.ActShardRun:
				runs++
				assert.True(t, strings.HasPrefix(a.Target, "s3://"+e.bucket+"/diff-runs/t-"), a.Target)
			case audit.ActShardStage:
				stages++
			}
		}
	}
	assert.Equal(t, 6, runs, "each sharded run audited with its run")
	assert.Equal(t, 2*2*(1+2+4), stages, "each shard of each stage audited")
}

// TestShardRetriedOrDuplicatedChangesNothing: a finished run's objects are
// the reference; a map shard SIGKILLed mid-way (after its first bucket
// objects, before its marker) and run again, then the reduce stage run
// again, and a map and a reduce shard each run twice at once, leave every
// object byte for byte as it was. A second plan for the run that differs
// is refused.
func TestShardRetriedOrDuplicatedChangesNothing(t *testing.T) {
	e := newEnv(t)
	src, dst := e.tables(t)
	run := "s3://" + e.bucket + "/diff-runs/retry"
	args := []string{"table", "diff", "--source", src, "--target", dst, "--engine", "local", "--shards", "2",
		"--run-prefix", "s3://" + e.bucket + "/diff-runs", "--run-id", "retry", "--buckets", "16"}
	_, _, code := dynops(t, target.Emulator.URL, e.log, args...)
	require.Equal(t, 0, code)
	want := e.objects(t, "diff-runs/retry/")
	require.Contains(t, want, "diff-runs/retry/map/done/shard-0000.json")
	require.Contains(t, want, "diff-runs/retry/reduce/bucket-0015.json")

	shard := func(endpoint, stage, sh string) *harness.Proc {
		return command(t, endpoint, e.log, "shard", "run", "--run", run, "--stage", stage, "--shard", sh)
	}
	t.Run("map shard killed mid-way and run again", func(t *testing.T) {
		// The marker and the reduce results go, as if the shard had never
		// finished; the proxy stops the shard at its third bucket PUT.
		for k := range want {
			if strings.Contains(k, "/map/done/shard-0000") || strings.Contains(k, "/reduce/") {
				_, err := e.s3.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: &e.bucket, Key: aws.String(k)})
				require.NoError(t, err)
			}
		}
		var cmd *harness.Proc
		var puts atomic.Int32
		killed := make(chan struct{})
		proxy, err := faults.Start(target.Emulator.URL, faults.Config{Observe: func(_ int, op string) {
			if strings.HasPrefix(op, "PUT ") && strings.Contains(op, "/map/") && puts.Add(1) == 3 {
				_ = cmd.Signal(os.Kill)
				close(killed)
			}
		}})
		require.NoError(t, err)
		defer proxy.Close()
		cmd = shard(proxy.URL, "map", "0/2")
		cmd.Start()
		cmd.Wait()
		select {
		case <-killed:
		default:
			t.Fatalf("the map shard ended before its third bucket PUT (%d PUTs)", puts.Load())
		}
		mid := e.objects(t, "diff-runs/retry/")
		assert.NotContains(t, mid, "diff-runs/retry/map/done/shard-0000.json", "killed before its marker")
		_, errOut, code := dynops(t, target.Emulator.URL, e.log, "shard", "run", "--run", run, "--stage", "reduce", "--shard", "0/2")
		assert.Equal(t, 1, code, "reduce refuses to run before every map shard's marker")
		assert.Contains(t, errOut, "map shard(s) 0/2 of "+run+" have not finished")
		for _, c := range [][]string{{"map", "0/2"}, {"reduce", "0/2"}, {"reduce", "1/2"}} {
			_, _, code := dynops(t, target.Emulator.URL, e.log, "shard", "run", "--run", run, "--stage", c[0], "--shard", c[1])
			require.Equal(t, 0, code)
		}
		assert.Equal(t, want, e.objects(t, "diff-runs/retry/"))
	})
	t.Run("shards run twice at once", func(t *testing.T) {
		for _, c := range [][]string{{"map", "1/2"}, {"reduce", "1/2"}} {
			a, b := shard(target.Emulator.URL, c[0], c[1]), shard(target.Emulator.URL, c[0], c[1])
			a.Start()
			b.Start()
			require.Zero(t, a.Wait())
			require.Zero(t, b.Wait())
		}
		assert.Equal(t, want, e.objects(t, "diff-runs/retry/"))
	})
	t.Run("another plan for the run is refused", func(t *testing.T) {
		other := append(append([]string{}, args...), "--attributes", "email")
		_, errOut, code := dynops(t, target.Emulator.URL, e.log, other...)
		assert.Equal(t, 2, code)
		assert.Contains(t, errOut, "holds a different plan")
		assert.Equal(t, want, e.objects(t, "diff-runs/retry/"), "nothing written")
	})
	t.Run("the same plan continues the run", func(t *testing.T) {
		keys := filepath.Join(e.dir, "again.jsonl")
		_, _, code := dynops(t, target.Emulator.URL, e.log, append(args, "--keys-out", keys)...)
		require.Equal(t, 0, code)
		assert.Equal(t, want, e.objects(t, "diff-runs/retry/"))
	})
}

// TestCtrlCStopsEveryShard: SIGINT to a sharded diff while its map shards
// scan (every request slowed by the fault proxy): exit 130, the interrupt
// line says how to continue the run, and no shard is left running: no
// request reaches the emulator after the command ended.
func TestCtrlCStopsEveryShard(t *testing.T) {
	e := newEnv(t)
	src, dst := e.tables(t)
	var ended, planned atomic.Bool
	var after atomic.Int32
	started := make(chan struct{})
	var once sync.Once
	proxy, err := faults.Start(target.Emulator.URL, faults.Config{Rate: 1, Kinds: []faults.Kind{faults.Latency}, Seed: 3, Observe: func(_ int, op string) {
		if ended.Load() {
			after.Add(1)
		}
		// The driver reads a sample page for its estimate (the emulator
		// reports 0 bytes) before it writes the plan; the shards scan after.
		if strings.HasPrefix(op, "PUT ") && strings.Contains(op, "/ctrl-c/plan") {
			planned.Store(true)
		}
		if op == "Scan" && planned.Load() {
			once.Do(func() { close(started) })
		}
	}})
	require.NoError(t, err)
	defer proxy.Close()
	cmd := command(t, proxy.URL, e.log, "table", "diff", "--source", src, "--target", dst, "--engine", "local", "--shards", "4",
		"--run-prefix", "s3://"+e.bucket+"/diff-runs", "--run-id", "ctrl-c")
	cmd.Start()
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatalf("no shard scanned within a minute: %s", cmd.Stderr())
	}
	require.NoError(t, cmd.Signal(os.Interrupt))
	code := cmd.Wait()
	ended.Store(true)
	assert.Equal(t, 130, code)
	assert.Contains(t, cmd.Stderr(), "interrupted: ")
	assert.Contains(t, cmd.Stderr(), "--run-id ctrl-c")
	time.Sleep(time.Second)
	assert.Zero(t, after.Load(), "a request after the command ended: a shard was left running")
	objs := e.objects(t, "diff-runs/ctrl-c/")
	assert.NotContains(t, objs, "diff-runs/ctrl-c/reduce/bucket-0000.json", "stopped before the reduce stage")
}
