package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/test/helpers/drpair"
)

const third = drpair.Third

// policyOf reads the table's resource policy back in region.
func policyOf(t *testing.T, p pair, region string) (doc, arn string) {
	t.Helper()
	ctx := context.Background()
	db := p.Clients(region).DynamoDB
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.Table})
	require.NoError(t, err)
	arn = aws.ToString(dt.Table.TableArn)
	doc, _, err = failover.ResourcePolicy(ctx, db, arn)
	require.NoError(t, err)
	return doc, arn
}

func stepDetail(res failover.Result, name string) string {
	for _, st := range res.Steps {
		if st.Name == name {
			return st.Detail
		}
	}
	return ""
}

// TestThreeRegionFailoverFailback_DDB_DR_01: three same-name tables on the
// emulator (stand-ins for the replicas of one global table). A failover
// with no target is refused naming the replicas; a failover to Away fences
// Home AND Third (each read back from the emulator) and flips the pointer
// in all three; a failback with no target is refused naming the two fenced
// replicas; the failback to Home removes dr's fences from every replica and
// only those: a migration's fence on Third stays.
func TestThreeRegionFailoverFailback_DDB_DR_01(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pair{drpair.New(t, target, drpair.Options{Third: true})}
	r := p.runner(new([]string))

	res, err := r.Run(ctx, p.request(failover.Failover, "", "", true))
	require.ErrorIs(t, err, failover.ErrRefused)
	for _, reg := range []string{home, away, third} {
		assert.Contains(t, res.Error, reg, "the refusal names every replica")
	}
	assert.Contains(t, res.Error, "pass --to")
	p.AssertUnchanged(t)

	res, err = r.Run(ctx, p.request(failover.Failover, "", away, false))
	require.NoError(t, err, "%+v", res.Checks)
	assert.Equal(t, failover.CheckOK, check(res, "other-replicas").Status)
	assert.Contains(t, check(res, "other-replicas").Detail, third+" will be fenced")
	assert.Equal(t, failover.StepPlanned, statuses(res)["fence-others"])
	p.AssertUnchanged(t)

	res, err = r.Run(ctx, p.request(failover.Failover, "", away, true))
	require.NoError(t, err, "%+v", res.Steps)
	assert.True(t, p.Fenced(t, home), "the old region is fenced")
	assert.True(t, p.Fenced(t, third), "every other replica is fenced")
	assert.False(t, p.Fenced(t, away), "the target is not")
	assert.Contains(t, stepDetail(res, "fence-others"), third+": fence on ")
	assert.Contains(t, stepDetail(res, "fence-others"), "read back")
	for _, reg := range []string{home, away, third} {
		assert.Equal(t, away, p.Pointer(t, reg), "pointer in %s", reg)
	}
	s := failover.Inspect(ctx, p.Clients, p.Target, p.request("", "", "", false).Rules.Window, time.Now())
	assert.Empty(t, s.HalfDone(), "a finished failover is not half-done")
	assert.ElementsMatch(t, []string{home, third}, s.FencedBy(failover.OwnerDR))

	// A migration's fence on Third, besides dr's.
	_, arn := policyOf(t, p, third)
	_, err = failover.FenceTable(ctx, p.Clients(third).DynamoDB, arn, "")
	require.NoError(t, err)

	res, err = r.Run(ctx, p.request(failover.Failback, "", "", true))
	require.ErrorIs(t, err, failover.ErrRefused)
	assert.Contains(t, res.Error, "2 replicas carry a fence of dynops dr ("+home+", "+third)
	assert.True(t, p.Fenced(t, home), "a refused failback changes nothing")

	res, err = r.Run(ctx, p.request(failover.Failback, "", home, true))
	require.NoError(t, err, "%+v", res.Steps)
	assert.Contains(t, check(res, "other-replicas").Detail, "the migration's ("+failover.MigrateFenceSid+") stays")
	for _, reg := range []string{home, away} {
		assert.False(t, p.Fenced(t, reg), "%s unfenced", reg)
		assert.Equal(t, home, p.Pointer(t, reg))
	}
	doc, _ := policyOf(t, p, third)
	assert.False(t, failover.HasOwnFence(doc, failover.OwnerDR), "dr's fence removed from the third replica")
	assert.True(t, failover.HasOwnFence(doc, failover.OwnerMigrate), "the migration's fence stays")
	assert.Contains(t, stepDetail(res, "unfence-old"), third+": fence removed")
	assert.Contains(t, stepDetail(res, "unfence-old"), "still fenced by statement "+failover.MigrateFenceSid)
}

// TestThreeRegionFailoverStoppedAfterFencing: a failover that stops after
// fencing every other replica (before its drain) leaves a state Inspect
// calls HALF-DONE, naming the one unfenced replica to finish to; the same
// failover again finishes it.
func TestThreeRegionFailoverStoppedAfterFencing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pair{drpair.New(t, target, drpair.Options{Third: true})}
	r := p.runner(new([]string))
	r.BeforeStep = func(name string) error {
		if name == "drain" {
			return errors.New("killed")
		}
		return nil
	}
	_, err := r.Run(ctx, p.request(failover.Failover, "", away, true))
	require.Error(t, err)
	assert.True(t, p.Fenced(t, home))
	assert.True(t, p.Fenced(t, third))
	s := failover.Inspect(ctx, p.Clients, p.Target, p.request("", "", "", false).Rules.Window, time.Now())
	assert.Contains(t, s.HalfDone(), "HALF-DONE")
	assert.Contains(t, s.HalfDone(), "dynops dr failover --table "+p.Table+" --to "+away+" --yes")

	r.BeforeStep = nil
	res, err := r.Run(ctx, p.request(failover.Failover, "", away, true))
	require.NoError(t, err, "%+v", res.Steps)
	assert.Contains(t, stepDetail(res, "fence-others"), third+": fenced already")
	for _, reg := range []string{home, away, third} {
		assert.Equal(t, away, p.Pointer(t, reg))
	}
}

// TestThreeRegionOtherReplicaDown: a third replica that does not answer
// (its clients point where nothing listens: an outage, through the same
// code paths) refuses the failover, since it could not be fenced; with
// --force the failover goes ahead and says it is NOT fenced.
func TestThreeRegionOtherReplicaDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pair{drpair.New(t, target, drpair.Options{Third: true})}
	r := p.runner(new([]string))
	r.Clients = deadRegion(t, p, third)

	res, err := r.Run(ctx, p.request(failover.Failover, "", away, true))
	require.ErrorIs(t, err, failover.ErrRefused)
	c := check(res, "other-replicas")
	assert.Equal(t, failover.CheckFail, c.Status)
	assert.Contains(t, c.Detail, "--force")
	assert.False(t, p.Fenced(t, home), "nothing changed")

	req := p.request(failover.Failover, "", away, true)
	req.Rules.Force = true
	res, err = r.Run(ctx, req)
	require.NoError(t, err, "%+v", res.Steps)
	assert.Equal(t, failover.CheckWarn, check(res, "other-replicas").Status)
	assert.Contains(t, stepDetail(res, "fence-others"), third+": does not answer (--force): NOT fenced")
	assert.True(t, p.Fenced(t, home))
	assert.False(t, p.Fenced(t, third), "the real third table was never reached")
}

// TestFailoverRefusedWhileReplicationIsPaused_DDB_DR_01: the statement AWS
// FIS adds for aws:dynamodb:global-table-pause-replication (shape from the
// AWS FIS actions reference; moto has no FIS, so the test puts it with
// PutResourcePolicy) on the target's table, read back from the emulator:
// the failover preflight refuses, naming the region and the statement, and
// changes nothing; once the statement is gone the failover goes ahead.
func TestFailoverRefusedWhileReplicationIsPaused_DDB_DR_01(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newPair(t, false)
	_, arn := policyOf(t, p, away)
	doc := `{"Version":"2012-10-17","Statement":[{"Sid":"DoNotModifyFisDynamoDbPauseReplicationEXPtest","Effect":"Deny","Principal":{"AWS":"*"},` +
		`"Action":["dynamodb:GetItem","dynamodb:PutItem","dynamodb:UpdateItem","dynamodb:DeleteItem"],"Resource":"` + arn + `",` +
		`"Condition":{"DateLessThan":{"aws:CurrentTime":"2099-01-01T00:00:00Z"},"ArnEquals":{"aws:PrincipalArn":"arn:aws:iam::123456789012:role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication"}}}]}`
	db := p.Clients(away).DynamoDB
	_, err := db.PutResourcePolicy(ctx, &dynamodb.PutResourcePolicyInput{ResourceArn: &arn, Policy: &doc})
	require.NoError(t, err)

	r := p.runner(new([]string))
	res, err := r.Run(ctx, p.request(failover.Failover, "", away, true))
	require.ErrorIs(t, err, failover.ErrRefused)
	c := check(res, "replication-paused")
	assert.Equal(t, failover.CheckFail, c.Status)
	assert.Contains(t, c.Detail, away+": an AWS FIS experiment")
	assert.Contains(t, c.Detail, "DoNotModifyFisDynamoDbPauseReplicationEXPtest until 2099-01-01T00:00:00Z")
	p.AssertUnchanged(t)

	_, err = db.DeleteResourcePolicy(ctx, &dynamodb.DeleteResourcePolicyInput{ResourceArn: &arn})
	require.NoError(t, err)
	res, err = r.Run(ctx, p.request(failover.Failover, "", away, true))
	require.NoError(t, err, "%+v", res.Checks)
	assert.Equal(t, failover.CheckOK, check(res, "replication-paused").Status)
}
