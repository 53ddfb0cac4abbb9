package failover

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTargetFenceNamesTheFenceAndItsOwner: the failback preflight says
// which fence the target carries and who owns it; a migration's fence is
// never called the failover's, and a fence dynops did not write refuses.
func TestTargetFenceNamesTheFenceAndItsOwner(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-central-1:123456789012:table/prod-hoge-session"
	withDR, err := withFence("", arn, "", FenceSid)
	require.NoError(t, err)
	withBoth, err := withFence(withDR, arn, "", MigrateFenceSid)
	require.NoError(t, err)
	onlyMigrate, err := withFence("", arn, "", MigrateFenceSid)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		mode   Mode
		policy string
		want   CheckStatus
		says   []string
		never  string
	}{
		{"failback, dr's fence", Failback, withDR, CheckOK, []string{FenceSid, "owner dynops dr", "removes it"}, MigrateFenceSid},
		{"failback, dr's and a migration's", Failback, withBoth, CheckWarn, []string{FenceSid, MigrateFenceSid, "owner dynops migrate", "stay denied until `dynops migrate rollback`"}, ""},
		{"failback, a migration's only", Failback, onlyMigrate, CheckWarn, []string{"no fence of dynops dr", MigrateFenceSid, "owner dynops migrate"}, "earlier failover"},
		{"failover, a migration's", Failover, onlyMigrate, CheckFail, []string{MigrateFenceSid, "owner dynops migrate", "would be denied"}, "failback"},
		{"failover, dr's", Failover, withDR, CheckFail, []string{FenceSid, "dynops dr failback"}, MigrateFenceSid},
		{"failback, no fence", Failback, "", CheckOK, []string{"carries no fence"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := threeRegions(nil)
			to := &s.Regions[1]
			to.Policy, to.TableARN = tc.policy, arn
			to.Fenced, to.FenceDetail = FenceHolds(tc.policy, arn, "")
			to.FenceSid = FenceSidOf(tc.policy)
			r := rules()
			r.Mode, r.From, r.To = tc.mode, "eu-west-1", "eu-central-1"
			c := targetFenceCheck(s, r, *to)
			assert.Equal(t, tc.want, c.Status, c.Detail)
			for _, w := range tc.says {
				assert.Contains(t, c.Detail, w)
			}
			if tc.never != "" {
				assert.NotContains(t, c.Detail, tc.never)
			}
		})
	}
}

// TestOtherReplicasCheck: with three replicas, the preflight covers the one
// that is neither the old region nor the target: it will be fenced, or is
// fenced already; one that does not answer refuses unless --force, which
// warns that it is NOT fenced. Two regions have no such check.
func TestOtherReplicasCheck(t *testing.T) {
	base := func() (State, Rules) {
		r := rules()
		r.Mode, r.From, r.To = Failover, "eu-west-1", "eu-central-1"
		return threeRegions(nil), r
	}
	s, r := base()
	c, ok := othersCheck(s, r)
	require.True(t, ok)
	assert.Equal(t, CheckOK, c.Status)
	assert.Equal(t, "eu-north-1 will be fenced", c.Detail)

	s.Regions[2].Fenced, s.Regions[2].FenceSid = true, FenceSid
	c, _ = othersCheck(s, r)
	assert.Equal(t, CheckOK, c.Status)
	assert.Contains(t, c.Detail, "eu-north-1 carries the fence of an earlier failover (statement "+FenceSid)

	s, r = base()
	s.Regions[2] = RegionState{Region: "eu-north-1", Error: "DynamoDB in eu-north-1 does not answer: dial tcp: refused"}
	c, _ = othersCheck(s, r)
	assert.Equal(t, CheckFail, c.Status)
	assert.Contains(t, c.Detail, "pass --force")
	r.Force = true
	c, _ = othersCheck(s, r)
	assert.Equal(t, CheckWarn, c.Status)
	assert.Contains(t, c.Detail, "will NOT be fenced")

	s, r = base()
	s.Target.Regions = s.Target.Regions[:2]
	_, ok = othersCheck(s, r)
	assert.False(t, ok, "two regions: no other replica")
}

// TestAmbiguousTargetNamesTheReplicas: with three replicas and no --to,
// the refusal names every replica (a failover) or the fenced ones (a
// failback); a failback's candidates are dr's fences, not a migration's.
func TestAmbiguousTargetNamesTheReplicas(t *testing.T) {
	s := threeRegions(nil)
	r := rules()
	r.Mode, r.From = Failover, "eu-west-1"
	assert.Equal(t, "", defaultTo(s, r))
	assert.Equal(t, "the table has 3 replicas (eu-west-1, eu-central-1, eu-north-1): pass --to with the region writes move to, one of eu-central-1, eu-north-1", ambiguousTo(s, r))

	r.Mode = Failback
	s.Regions[0].Fenced, s.Regions[0].FenceSid = true, FenceSid
	s.Regions[2].Fenced, s.Regions[2].FenceSid = true, MigrateFenceSid
	assert.Equal(t, "eu-west-1", defaultTo(s, r), "the migration's fence is not a failover's")
	s.Regions[2].FenceSid = FenceSid
	assert.Equal(t, "", defaultTo(s, r))
	assert.Contains(t, ambiguousTo(s, r), "2 replicas carry a fence of dynops dr (eu-west-1, eu-north-1")
}
