package pitr

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/tablediff"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// benchItems is the table size of the benchmarks (DYNOPS_BENCH_ITEMS, default 5000).
func benchItems(b *testing.B) int {
	n := 5000
	if s := os.Getenv("DYNOPS_BENCH_ITEMS"); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(b, err, "DYNOPS_BENCH_ITEMS")
		n = v
	}
	return n
}

// awsScan runs `aws dynamodb scan` of table on the target and returns the
// items it read and the time it took (the reference the figures are set beside).
func awsScan(b *testing.B, table string) (int, time.Duration) {
	b.Helper()
	bin, err := exec.LookPath("aws")
	if err != nil {
		b.Skip("the AWS CLI (aws) is not on PATH: it is the reference of this benchmark")
	}
	args := []string{"dynamodb", "scan", "--table-name", table, "--region", target.Region, "--output", "json"}
	env := os.Environ()
	if target.OnEmulator() {
		args = append(args, "--endpoint-url", target.Endpoint())
		env = append(env, "AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	require.NoError(b, cmd.Run(), "aws dynamodb scan: %s", errOut.String())
	took := time.Since(start)
	var doc struct{ Count int }
	require.NoError(b, json.Unmarshal(out.Bytes(), &doc))
	return doc.Count, took
}

func report(b *testing.B, what string, items int, took time.Duration, refItems int, refTook time.Duration) {
	rate := float64(items) / took.Seconds()
	ref := float64(refItems) / refTook.Seconds()
	b.ReportMetric(rate, "items/s")
	b.ReportMetric(ref, "awscli-items/s")
	b.ReportMetric(rate/ref, "x-awscli")
	fmt.Printf("%-26s %6d items in %6.2fs = %7.0f items/s | aws dynamodb scan: %6d items in %6.2fs = %7.0f items/s | ratio %.2fx\n",
		what, items, took.Seconds(), rate, refItems, refTook.Seconds(), ref, rate/ref)
}

// BenchmarkDiff: `dynops table diff` of two tables of n items each (1% changed),
// beside the AWS CLI scanning the same two tables in the same run.
func BenchmarkDiff(b *testing.B) {
	n := benchItems(b)
	db := dynamodb.NewFromConfig(target.AWSConfig(b))
	id := harness.UniqueID()
	a, c := "dev-"+id+"-user-restored", "dev-"+id+"-user"
	users := fixture.Users(n)
	for _, name := range []string{a, c} {
		fixture.Create(b, db, fixture.Table{Name: name, HashKey: "user_id"})
		fixture.Put(b, db, name, users)
	}
	var changed []map[string]types.AttributeValue
	for i := 0; i < n; i += 100 {
		it := fixture.Users(i + 1)[i]
		it["status"] = &types.AttributeValueMemberS{Value: "corrupted"}
		changed = append(changed, it)
	}
	fixture.Put(b, db, c, changed)

	for _, segments := range []int{1, 4} {
		b.Run(fmt.Sprintf("segments=%d", segments), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				start := time.Now()
				rep, err := tablediff.Diff(context.Background(), db, tablediff.Options{Source: a, Target: c, Segments: segments,
					KeysOut: filepath.Join(b.TempDir(), "keys.jsonl")})
				took := time.Since(start)
				require.NoError(b, err)
				require.Equal(b, int64(len(changed)), rep.Changed)
				b.StopTimer()
				na, ta := awsScan(b, a)
				nc, tc := awsScan(b, c)
				b.StartTimer()
				report(b, fmt.Sprintf("diff (%d segments)", segments), int(rep.SourceItems+rep.TargetItems), took, na+nc, ta+tc)
			}
		})
	}
}

// BenchmarkRepair: `dynops pitr repair` copying back n/2 deleted items,
// conditional (per item) and batch (BatchWriteItem), beside the AWS CLI
// scanning the restored table in the same run.
func BenchmarkRepair(b *testing.B) {
	n := benchItems(b)
	ctx := context.Background()
	db := dynamodb.NewFromConfig(target.AWSConfig(b))
	id := harness.UniqueID()
	from, to := "dev-"+id+"-user-restored", "dev-"+id+"-user"
	users := fixture.Users(n)
	for _, name := range []string{from, to} {
		fixture.Create(b, db, fixture.Table{Name: name, HashKey: "user_id"})
	}
	fixture.Put(b, db, from, users)
	missing := n / 2

	for _, mode := range []string{"conditional", "batch"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				// The original lost its second half.
				fixture.Put(b, db, to, users[:n-missing])
				keys := filepath.Join(b.TempDir(), "keys.jsonl")
				rep, err := tablediff.Diff(ctx, db, tablediff.Options{Source: from, Target: to, KeysOut: keys})
				require.NoError(b, err)
				require.Equal(b, int64(missing), rep.OnlyInSource)
				b.StartTimer()

				start := time.Now()
				res, err := repair.Run(ctx, db, repair.Options{From: from, To: to, KeysFile: keys, Unconditional: mode == "batch"})
				took := time.Since(start)
				require.NoError(b, err)
				require.Equal(b, int64(missing), res.Copied)

				b.StopTimer()
				nf, tf := awsScan(b, from)
				report(b, "repair ("+mode+")", int(res.Copied), took, nf, tf)
				var lost []map[string]types.AttributeValue
				for _, u := range users[n-missing:] {
					lost = append(lost, map[string]types.AttributeValue{"user_id": u["user_id"]})
				}
				fixture.Delete(b, db, to, lost)
				b.StartTimer()
			}
		})
	}
}
