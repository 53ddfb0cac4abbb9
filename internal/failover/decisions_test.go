package failover

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetPolicyPutsAtTheRevisionRead: a first policy is put with
// ExpectedRevisionId NO_POLICY, a change with the revision read; the
// revision answered is returned; a policy of exactly DynamoDB's 20 KB limit
// is written, one byte more is refused before any call.
func TestSetPolicyPutsAtTheRevisionRead(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-session"
	db := &policyDB{land: true}
	rev, err := setPolicy(context.Background(), db, arn, `{"Version":"2012-10-17","Statement":[]}`, "", false)
	require.NoError(t, err)
	assert.Equal(t, "rev-2", rev, "the revision answered")
	assert.Equal(t, []string{"NO_POLICY"}, db.expected)

	db = &policyDB{land: true, doc: "{}", rev: "rev-1"}
	_, err = setPolicy(context.Background(), db, arn, `{"Version":"2012-10-17"}`, "rev-1", false)
	require.NoError(t, err)
	assert.Equal(t, []string{"rev-1"}, db.expected)

	pad := func(n int) string {
		head := `{"Version":"2012-10-17","Id":"`
		return head + strings.Repeat("x", n-len(head)-2) + `"}`
	}
	db = &policyDB{land: true}
	_, err = setPolicy(context.Background(), db, arn, pad(MaxPolicyBytes), "", false)
	require.NoError(t, err, "exactly 20 KB is within the limit")
	db = &policyDB{land: true}
	_, err = setPolicy(context.Background(), db, arn, pad(MaxPolicyBytes+1), "", false)
	require.ErrorContains(t, err, fmt.Sprintf("would be %d bytes, over DynamoDB's %d-byte limit", MaxPolicyBytes+1, MaxPolicyBytes))
	assert.Empty(t, db.expected, "nothing sent")
}

// TestSamePolicy: two policies are the same when their compact JSON is;
// no policy equals only no policy; text that is not JSON compares as text.
func TestSamePolicy(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"", "", true},
		{"", "{}", false},
		{"{}", "", false},
		{`{"a":1}`, "{ \"a\" : 1 }\n", true},
		{`{"a":1}`, `{"a":2}`, false},
		{"not json", "not json", true},
		{"not json", "not  json", false},
		{"not json", `{"a":1}`, false},
		{`{"a":1}`, "not json", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.same, samePolicy(c.a, c.b), "%q vs %q", c.a, c.b)
	}
}

// TestOnlyNamedRolesConditions: a fence's exemption may use ArnNotLike or
// ArnNotEquals on aws:PrincipalArn with named roles; any other operator or
// key can switch the deny off.
func TestOnlyNamedRolesConditions(t *testing.T) {
	role := "arn:aws:iam::123456789012:role/break-glass"
	for op, ok := range map[string]bool{"ArnNotLike": true, "ArnNotEquals": true, "StringNotEquals": false, "ArnLike": false, "StringNotLike": false} {
		got, why := onlyNamedRoles(map[string]map[string]any{op: {"aws:PrincipalArn": role}})
		assert.Equal(t, ok, got, "%s: %s", op, why)
		if !ok {
			assert.Contains(t, why, "condition "+op+" can switch the deny off")
		}
	}
	got, why := onlyNamedRoles(map[string]map[string]any{"ArnNotEquals": {"aws:SourceIp": role}})
	assert.False(t, got)
	assert.Contains(t, why, "condition on aws:SourceIp")
}

// TestPointerCheckResume: a --resume run (no --from) finishes a switch
// whose pointers already name To in some or every region, but only when
// every pointer names To or From; otherwise the pointers that disagree
// refuse it.
func TestPointerCheckResume(t *testing.T) {
	state := func(west, central string) State {
		s := globalState()
		s.Regions[0].Pointer, s.Regions[1].Pointer = west, central
		return s
	}
	r := rules() // eu-west-1 -> eu-central-1
	resume := r
	resume.Resume = true
	cases := []struct {
		name   string
		s      State
		r      Rules
		want   CheckStatus
		detail string
	}{
		{"every pointer names From", state("eu-west-1", "eu-west-1"), resume, CheckOK, "in every region"},
		{"resume: every pointer names To", state("eu-central-1", "eu-central-1"), resume, CheckOK, "already names eu-central-1"},
		{"resume: one flipped", state("eu-west-1", "eu-central-1"), resume, CheckOK, "already names eu-central-1"},
		{"resume: a third region named", state("us-east-1", "eu-central-1"), resume, CheckFail, "us-east-1"},
		{"no resume: flipped pointers", state("eu-central-1", "eu-central-1"), r, CheckFail, "stopped midway"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := pointerCheck(c.s, c.r)
			assert.Equal(t, c.want, got.Status, got.Detail)
			assert.Contains(t, got.Detail, c.detail)
		})
	}
}

// TestFenceChecksSizeTheStatementWritten: the size check measures the
// policy with the statement this switch writes (a failback's own Sid).
func TestFenceChecksSizeTheStatementWritten(t *testing.T) {
	s := globalState()
	for _, mode := range []Mode{Failover, Failback} {
		req := Request{Target: s.Target, Rules: rules()}
		req.Rules.Mode = mode
		sid := FenceSid
		if mode == Failback {
			sid = FailbackFenceSid
		}
		from, _ := s.Region(req.Rules.From)
		doc, err := withFence(from.Policy, from.TableARN, "", sid)
		require.NoError(t, err)
		var sized []string
		for _, c := range fenceChecks(s, req) {
			if c.Name == "fence-policy-size" {
				sized = append(sized, c.Detail)
			}
		}
		assert.Equal(t, []string{fmt.Sprintf("the policy of %s with the fence is %d of %d bytes", from.TableARN, len(doc), MaxPolicyBytes)}, sized, mode)
	}
}
