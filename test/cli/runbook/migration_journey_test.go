package runbook

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/migrate"
	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/migrationexample"
)

// TestRunbookMigrationJourney_DDB_API_02 is the single-to-multi-table
// migration the way it goes on prod (issue 43): the application keeps
// writing new push subscriptions to the protected source through the
// plan, the backfill, the catch-up, the verify and the cutover (until the
// cutover's fence refuses its writes: read by the writer, as the emulator
// does not enforce it); the runbook runs in the built
// binary (every BatchWriteItem slowed) and is SIGKILLed in its backfill,
// then resumed with the same incident. The resumed run exits 0 (the
// cutover's own verify found 0 differences), every write the source
// acknowledged is in its destination with the route's renames (nothing
// lost by the catch-up or the drain), the pointer reads multi, and the
// timeline lists each step once, the backfill interrupted.
func TestRunbookMigrationJourney_DDB_API_02(t *testing.T) {
	harness.Long(t, "the migration journey: a 13-table fixture, a killed backfill and a cutover with its drain (about 40 s); the migration runbook's prod run (TestRunbookMigrationOnProd_DDB_PROT_01) is in make test")
	migrationJourney(t, false)
}

// TestRunbookMigrationJourneySlowedEmulator_DDB_API_02 is the same journey
// with the resumed run behind a proxy that delays every request up to
// 150 ms or trickles its answer (test/helpers/faults' latency and slow
// body): the catch-up, the verify and the cutover's drain on a slow
// service must still miss no acknowledged write (issue 43 #9: a verify on
// a loaded machine once found differences).
func TestRunbookMigrationJourneySlowedEmulator_DDB_API_02(t *testing.T) {
	harness.Long(t, "the migration journey behind a latency proxy (about a minute)")
	if !target.OnEmulator() {
		t.Skip("emulator only: the latency proxy stands in front of the emulator")
	}
	migrationJourney(t, true)
}

func migrationJourney(t *testing.T, slowed bool) {
	db, src, dests := migrationFixture(t)
	ctx := context.Background()
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "MIG-" + harness.UniqueID()
	const dest = "dev-" + migrationexample.Product + "-push-subscriptions"
	// The emulator stores the cutover's fence but does not enforce it: the
	// writer reads it before each put and stops as the application's writes
	// would be refused on AWS (a put racing the fence is within the
	// cutover's --settle, which the drain waits out).
	d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(src)})
	require.NoError(t, err)
	srcARN := aws.ToString(d.Table.TableArn)
	fenced := func() bool {
		doc, _, err := failover.ResourcePolicy(ctx, db, srcARN)
		return err == nil && failover.HasFence(doc)
	}
	w := startWriterItems(t, db, src, 4000, fenced, func(id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": migrationexample.S("TENANT#w"), "SK": migrationexample.S("PUSH_SUB#" + id),
			"GSI2PK": migrationexample.S("USER#w"), "GSI2SK": migrationexample.S(id), "endpoint": migrationexample.S("https://push.example.com/" + id)}
	})
	args := []string{"runbook", "run", "single-to-multi-table-migration", "--incident", incident, "--yes",
		"--confirm", strings.Join(append([]string{src}, dests...), ","),
		"--param", "source=" + src, "--param", "routes=" + migrationexample.RoutesFile(),
		"--param", "destinations=" + strings.Join(dests, ","), "--param", "unmatched=--allow-unmatched", "--param", "pointer="}

	// 1. In the built binary, every BatchWriteItem slowed; killed once the
	// backfill has recorded its position and not finished.
	state := filepath.Join(os.Getenv("XDG_STATE_HOME"), "dynops", "migrate", src+".json")
	killWhen(t, slowCommand(t, log, args...), "its backfill was under way", func() bool {
		st, err := migrate.LoadState(state)
		return err == nil && st.Backfill != nil && !st.BackfillDone()
	})
	st, err := migrate.LoadState(state)
	require.NoError(t, err)
	require.False(t, st.BackfillDone(), "killed in the backfill")

	// 2. Resume: the same command, the same incident.
	resume := target.Dynops
	if slowed {
		p, err := faults.Start(target.Emulator.URL, faults.Config{Rate: 1, Kinds: []faults.Kind{faults.Latency, faults.SlowBody}, Seed: 43})
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		resume = func(t testing.TB, log string, args ...string) (string, string, int) {
			return target.DynopsVia(t, p.URL, log, args...)
		}
	}
	_, errOut, code := resume(t, log, args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "plan: done earlier, skipped")
	written := w.halt()
	t.Logf("writer: %d acknowledged, %d refused (after the fence)", len(written), w.errs)
	require.NotEmpty(t, written, "the writer wrote through the journey")

	// 3. Every acknowledged write is in its destination, renamed.
	for _, id := range written {
		got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(dest), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": migrationexample.S("TENANT#w"), "SK": migrationexample.S("PUSH_SUB#" + id)}})
		require.NoError(t, err)
		if assert.NotNil(t, got.Item, "acknowledged write %s reached %s", id, dest) {
			assert.Equal(t, migrationexample.S("USER#w"), got.Item["subscriber_user_key"], id)
			assert.NotContains(t, got.Item, "GSI2PK", id)
		}
	}
	p, err := ssm.NewFromConfig(target.AWSConfig(t)).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String("/dynops/migrate/" + src + "/active")})
	require.NoError(t, err)
	assert.Equal(t, "multi", aws.ToString(p.Parameter.Value), "the pointer reads back multi")

	// 4. The timeline: each step once, the backfill interrupted.
	md, _, code := target.Dynops(t, log, "audit", "timeline", "--incident", incident, "--format", "markdown")
	require.Equal(t, 0, code)
	lines := stepsSection(md)
	require.Len(t, lines, 5, md)
	for i, s := range []string{"plan", "backfill", "catch-up", "verify", "cutover"} {
		assert.True(t, strings.HasPrefix(lines[i], "- single-to-multi-table-migration / "+s+": "), "step line %q", lines[i])
		assert.Equal(t, s == "backfill", strings.Contains(lines[i], "INTERRUPTED 1 time(s)"), lines[i])
	}
}
