package runbook

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/test/helpers/drpair"
	"github.com/dynops/dynops/test/helpers/harness"
)

// regionalWriter is the application of a global table: before each put
// it reads the active-region pointer in its own region (Home) and writes
// there; a put into a fenced table counts as refused, as AWS refuses it
// (the emulator stores the fence's resource policy but does not enforce
// it).
type regionalWriter struct {
	*writer
	rmu     sync.Mutex
	region  map[string]string // the region each acknowledged key was written in
	refused []time.Time
}

func startRegionalWriter(t *testing.T, p drpair.Pair, max int) *regionalWriter {
	ctx := context.Background()
	arns := map[string]string{}
	for _, r := range p.Target.Regions {
		d, err := p.DynamoDB(r).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.Table})
		require.NoError(t, err)
		arns[r] = aws.ToString(d.Table.TableArn)
	}
	rw := &regionalWriter{region: map[string]string{}}
	rw.writer = runWriter(t, max, func(id string) error {
		ptr, err := p.Clients(drpair.Home).SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: &p.Target.Pointer})
		if err != nil {
			return err
		}
		region := aws.ToString(ptr.Parameter.Value)
		db := p.DynamoDB(region)
		if doc, _, err := failover.ResourcePolicy(ctx, db, arns[region]); err != nil || failover.HasFence(doc) {
			rw.rmu.Lock()
			rw.refused = append(rw.refused, time.Now())
			rw.rmu.Unlock()
			return errRefused
		}
		_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &p.Table, Item: map[string]types.AttributeValue{
			"session_id": &types.AttributeValueMemberS{Value: id}, "region": &types.AttributeValueMemberS{Value: region}}})
		if err == nil {
			rw.rmu.Lock()
			rw.region[id] = region
			rw.rmu.Unlock()
		}
		return err
	})
	return rw
}

// acked counts the writes acknowledged in region.
func (rw *regionalWriter) acked(region string) int {
	rw.rmu.Lock()
	defer rw.rmu.Unlock()
	n := 0
	for _, r := range rw.region {
		if r == region {
			n++
		}
	}
	return n
}

// waitAcked waits (at most a minute) until region has acknowledged n writes.
func (rw *regionalWriter) waitAcked(t *testing.T, region string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for rw.acked(region) < n {
		require.True(t, time.Now().Before(deadline), "the application wrote %d of %d items in %s within a minute", rw.acked(region), n, region)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunbookDRFailoverJourney_DDB_DR_01 is the dr-failover journey the
// way an incident goes (issue 43), on the stand-in pair of
// test/helpers/drpair (moto has no global tables: two same-name tables
// that do not replicate, --allow-unreplicated): the application keeps
// writing to the region the pointer names through the status, the
// failover and the verify; the runbook runs in the built binary without a
// terminal (--yes, the protected table named by --confirm) and is
// SIGKILLed in its failover step right after the fence landed, before the
// pointer flip: dr status says HALF-DONE and the application's writes are
// refused (the outage the runbook exists to end). The same command resumed
// with the same incident exits 0: the pointer names the new region in
// both, the old region stays fenced, the new one is not, every write the
// application had acknowledged is in the table that acknowledged it
// (nothing lost), the application writes in the new region again, and the
// timeline lists each step once, the failover interrupted.
func TestRunbookDRFailoverJourney_DDB_DR_01(t *testing.T) {
	p := drpair.New(t, target, drpair.Options{Prod: true})
	p.PublishLatency(t, drpair.Home, drpair.Away, 250, 750)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	w := startRegionalWriter(t, p, 4000)
	w.waitAcked(t, drpair.Home, 3)
	args := []string{"runbook", "run", "dr-failover", "--incident", incident, "--yes", "--confirm", p.Table,
		"--param", "table=" + p.Table, "--param", "to=" + drpair.Away,
		"--param", "dr_flags=--regions " + drpair.Home + "," + drpair.Away + " --allow-unreplicated"}

	// 1. Killed at the first request after the fence (the old region's
	// PutResourcePolicy), before the pointer flip.
	var fenceMu sync.Mutex
	fenced := false
	killAtRequest(t, log, killPoint{What: "the failover step fenced the old region", At: func(op string) bool {
		fenceMu.Lock()
		defer fenceMu.Unlock()
		was := fenced
		fenced = fenced || op == "PutResourcePolicy"
		return was
	}}, args...)
	require.NotNil(t, stepStarted(t, log, incident, "failover"), "killed in the failover step")
	status, _, _ := target.Dynops(t, log, "dr", "status", "--table", p.Table, "--regions", drpair.Home+","+drpair.Away, "--allow-unreplicated")
	assert.Contains(t, status, "HALF-DONE", "the kill left the switch half-done")
	assert.Equal(t, drpair.Home, p.Pointer(t, drpair.Home), "killed before the flip")
	assert.True(t, p.Fenced(t, drpair.Home), "killed after the fence")
	refusedBefore := len(w.refusedSince(time.Time{}))
	deadline := time.Now().Add(time.Minute)
	for len(w.refusedSince(time.Time{})) == refusedBefore {
		require.True(t, time.Now().Before(deadline), "the application's writes to the fenced region are refused")
		time.Sleep(20 * time.Millisecond)
	}
	homeAcked := w.acked(drpair.Home)

	// 2. Resume: the same command, the same incident.
	_, errOut, code := target.Dynops(t, log, args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "status: done earlier, skipped")
	resumed := time.Now()
	w.waitAcked(t, drpair.Away, 3)
	written := w.halt()
	t.Logf("writer: %d acknowledged (%d in %s, %d in %s), %d refused", len(written), w.acked(drpair.Home), drpair.Home, w.acked(drpair.Away), drpair.Away, w.errs)

	// 3. The switch is done, read back.
	for _, r := range []string{drpair.Home, drpair.Away} {
		assert.Equal(t, drpair.Away, p.Pointer(t, r), "the pointer in %s names the new region", r)
	}
	assert.True(t, p.Fenced(t, drpair.Home), "the old region stays fenced")
	assert.False(t, p.Fenced(t, drpair.Away), "the new region takes writes")
	assert.Equal(t, homeAcked, w.acked(drpair.Home), "no write was acknowledged in the old region after the fence")
	assert.Empty(t, w.refusedSince(resumed.Add(time.Second)), "once the resumed run flipped the pointer, no write is refused")

	// 4. Nothing lost: every acknowledged write is in the table that
	// acknowledged it, with its value.
	regionOf := w.region // the writer has stopped
	for _, id := range written {
		got, err := p.DynamoDB(regionOf[id]).GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &p.Table, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"session_id": &types.AttributeValueMemberS{Value: id}}})
		require.NoError(t, err)
		if assert.NotNil(t, got.Item, "acknowledged write %s is in %s", id, regionOf[id]) {
			assert.Equal(t, &types.AttributeValueMemberS{Value: regionOf[id]}, got.Item["region"], id)
		}
	}

	// 5. The timeline: each step once, the failover interrupted; the
	// verify's dr status exits 1 after a failover (not ready to fail over
	// again): findings.
	md, _, code := target.Dynops(t, log, "audit", "timeline", "--incident", incident, "--format", "markdown")
	require.Equal(t, 0, code)
	lines := stepsSection(md)
	require.Len(t, lines, 3, md)
	for i, s := range []string{"status: ok", "failover: ok", "verify: findings"} {
		assert.True(t, strings.HasPrefix(lines[i], "- dr-failover / "+s), "step line %q", lines[i])
		assert.Equal(t, strings.HasPrefix(s, "failover"), strings.Contains(lines[i], "INTERRUPTED 1 time(s)"), lines[i])
	}
}

// refusedSince are the writes refused (a fenced region) at or after t.
func (rw *regionalWriter) refusedSince(t time.Time) []time.Time {
	rw.rmu.Lock()
	defer rw.rmu.Unlock()
	var out []time.Time
	for _, at := range rw.refused {
		if !at.Before(t) {
			out = append(out, at)
		}
	}
	return out
}
