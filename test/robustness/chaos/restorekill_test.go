package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/pitrtime"
	"github.com/dynops/dynops/internal/restore"
	"github.com/dynops/dynops/internal/tablesettings"
	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// restoreSource makes a source table with the guideline's settings (PITR
// 35 days, deletion protection, TTL, stream, an owner tag) and 50 items;
// the target's name; and how to read the target's end state back from
// the service: its items and every setting a restore re-applies, the
// restored-from tag as "=source" and the restored-to-time tag as "=the
// RestoreSummary's time" when they say so (each run has its own source).
func restoreSource(t *testing.T, db *dynamodb.Client) (src, dst string, state func() string) {
	ctx := context.Background()
	src = "dev-" + harness.UniqueID() + "-user"
	fixture.Create(t, db, fixture.Table{Name: src, HashKey: "user_id", PITR: true})
	fixture.Put(t, db, src, users(50))
	have, err := tablesettings.Capture(ctx, db, src)
	require.NoError(t, err)
	require.NoError(t, tablesettings.Apply(ctx, db, src, tablesettings.Plan(have, tablesettings.Guideline(map[string]string{"owner": "hoge-team"})), nil))
	dst = src + "-restored"
	fixture.Cleanup(t, db, dst)
	return src, dst, func() string { return restoredState(t, db, src, dst) }
}

func restoredState(t *testing.T, db *dynamodb.Client, src, dst string) string {
	ctx := context.Background()
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &dst})
	if err != nil {
		return "no target: " + err.Error()
	}
	s, err := tablesettings.Capture(ctx, db, dst)
	require.NoError(t, err)
	var tags []string
	for k, v := range s.Tags {
		switch {
		case k == restore.TagRestoredFrom && v == src:
			v = "=source"
		case k == restore.TagRestoredToTime && dt.Table.RestoreSummary != nil && v == pitrtime.Format(aws.ToTime(dt.Table.RestoreSummary.RestoreDateTime)):
			v = "=restore time"
		}
		tags = append(tags, k+"="+v)
	}
	sort.Strings(tags)
	return fmt.Sprintf("%s; PITR %v %dd, deletion protection %v, TTL %q, stream %q, policy %v, tags %v",
		fingerprint(t, db, dst), s.PITR, s.RecoveryPeriodInDays, s.DeletionProtection, s.TTLAttribute, s.StreamViewType, s.ResourcePolicy != "", tags)
}

// TestRestoreKilledAndRerun: the built binary running pitr restore is
// SIGKILLed at seeded kill points counted in requests: for the odd seeds
// anywhere in the run, for the even seeds after RestoreTableToPointInTime
// and before the last TagResource (the restored-from marker, written
// last), so the restore landed and its settings are half re-applied.
// After each kill: a target without the marker is refused by a re-run
// without --resume (exit 2, naming --resume, nothing changed), and a
// re-run with --resume ends in the uninterrupted run's end state, read
// back from the service.
func TestRestoreKilledAndRerun(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("kill points are counted against the emulator")
	}
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	const family = "pitr restore (killed, --resume)"
	args := func(src, dst string) []string {
		return []string{"pitr", "restore", "--table", src, "--latest", "--target", dst, "--yes"}
	}

	// The uninterrupted run: its end state and its requests.
	src, dst, state := restoreSource(t, db)
	ops := observedRun(t, args(src, dst)...)
	want := state()
	restored, marker := window(ops)
	require.GreaterOrEqual(t, restored, 0, "no RestoreTableToPointInTime in the run's requests: %v", ops)
	require.Greater(t, marker, restored+1, "no request between the restore and the marker: %v", ops)
	t.Logf("uninterrupted: %d requests, the restore at %d, the marker at %d; end state %s", len(ops), restored+1, marker+1, want)

	var none, half, finished, refused int
	for seed := 1; seed <= killSeeds(); seed++ {
		rnd := rand.New(rand.NewPCG(uint64(seed), 20))
		aimed := seed%2 == 0
		// Request numbers from 1 (the restore is request restored+1, the
		// marker marker+1): anywhere, or after the restore answered and
		// before the marker is sent. A kill at a request may or may not
		// let that request land.
		at := 1 + rnd.IntN(len(ops))
		if aimed {
			at = restored + 2 + rnd.IntN(marker-restored-1)
		}
		src, dst, state := restoreSource(t, db)
		var cmd *harness.Proc
		var killedAt atomic.Int64
		proxy, err := faults.Start(target.Emulator.URL, faults.Config{Observe: func(n int, _ string) {
			if n == at {
				killedAt.Store(int64(n))
				killAt(cmd)
			}
		}})
		require.NoError(t, err)
		cmd = process(t, proxy.URL, args(src, dst)...)
		killed := killedRun(t, cmd)
		proxy.Close()
		require.True(t, killed, "seed %d: the kill at request %d did not land", seed, at)

		after := state()
		e, exists := inspectTarget(t, db, dst)
		kind := "none"
		switch {
		case !exists:
			none++
		case e == "":
			kind = "finished"
			finished++
		default:
			kind = "half-done"
			half++
			// Without --resume: refused, naming what it found and --resume.
			out, code := combined(t, target.Emulator.URL, args(src, dst)...)
			require.Equal(t, 2, code, "seed %d: a re-run without --resume of a half-done restore: %s", seed, out)
			require.Contains(t, out, dst+" is a restore of ")
			require.Contains(t, out, "re-run with --resume")
			require.Equal(t, after, state(), "seed %d: the refused re-run changed nothing", seed)
			refused++
		}
		if aimed {
			require.Equal(t, "half-done", kind, "seed %d: killed at request %d, after the restore and at or before the marker (%d): the target must exist unfinished; found %s", seed, at, marker+1, after)
		}
		out, code := combined(t, target.Emulator.URL, append(args(src, dst), "--resume")...)
		require.Zero(t, code, "seed %d: the --resume re-run after a kill at request %d (%s): %s", seed, at, kind, out)
		got := state()
		require.Equal(t, want, got, "seed %d: killed at request %d (%s), re-run with --resume", seed, at, kind)
		t.Logf("seed %d: killed at request %d of %d (aimed %v): %s; the --resume re-run converged", seed, at, len(ops), aimed, kind)
	}
	record(family, fmt.Sprintf("SIGKILL x%d", killSeeds()), fmt.Sprintf("same end state after %d kills (%d aimed between the restore and the marker): %d before the restore landed, %d half-done (%d refused without --resume, exit 2), %d finished; every --resume re-run converged", killSeeds(), killSeeds()/2, none, half, refused, finished), true)
	report(t)
}

// window is the index of the run's RestoreTableToPointInTime and of its
// last TagResource (the restored-from marker).
func window(ops []string) (int, int) {
	restored, marker := -1, -1
	for i, op := range ops {
		switch {
		case op == "RestoreTableToPointInTime" && restored < 0:
			restored = i
		case op == "TagResource":
			marker = i
		}
	}
	return restored, marker
}

// inspectTarget: whether dst exists, and "" when it carries the
// restored-from marker (finished), else what it lacks.
func inspectTarget(t *testing.T, db *dynamodb.Client, dst string) (string, bool) {
	ctx := context.Background()
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &dst})
	if err != nil {
		require.True(t, strings.Contains(err.Error(), "ResourceNotFoundException"), "describing %s: %v", dst, err)
		return "", false
	}
	tags, err := db.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: dt.Table.TableArn})
	require.NoError(t, err)
	for _, tag := range tags.Tags {
		if aws.ToString(tag.Key) == restore.TagRestoredFrom {
			return "", true
		}
	}
	return "no " + restore.TagRestoredFrom + " tag", true
}
