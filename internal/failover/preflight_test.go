package failover

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Unit tests of the decisions, on states built by hand: the replica states
// the emulator cannot produce (a real global table, a replica not ACTIVE).

const arnA = "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-session"

func globalState() State {
	region := func(name, other string) RegionState {
		return RegionState{Region: name, Answers: true, TableExists: true, TableStatus: "ACTIVE",
			TableARN: "arn:aws:dynamodb:" + name + ":111122223333:table/prod-hoge-session",
			Replicas: map[string]string{other: "ACTIVE"}, Pointer: "eu-west-1",
			HashKey: KeyAttr{Name: "session_id", Type: "S"},
			Latency: []Latency{{Receiving: other, Max: 900 * time.Millisecond, Avg: 400 * time.Millisecond, Datapoints: 10}}}
	}
	return State{
		Target:  Target{Table: "prod-hoge-session", Regions: []string{"eu-west-1", "eu-central-1"}, Pointer: DefaultPointer("prod-hoge-session")},
		Regions: []RegionState{region("eu-west-1", "eu-central-1"), region("eu-central-1", "eu-west-1")},
		Active:  "eu-west-1",
	}
}

func rules() Rules {
	return Rules{Mode: Failover, From: "eu-west-1", To: "eu-central-1", MaxLatency: 30 * time.Second, Window: 15 * time.Minute}
}

func statusOf(checks []Check, name string) CheckStatus {
	for _, c := range checks {
		if c.Name == name {
			return c.Status
		}
	}
	return ""
}

func TestPreflightGlobalTableReady(t *testing.T) {
	checks := Preflight(globalState(), rules())
	assert.Empty(t, Refused(checks), "%+v", checks)
	for _, c := range checks {
		assert.Equal(t, CheckOK, c.Status, "%s: %s", c.Name, c.Detail)
	}
}

func TestPreflightDecisions(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(*State, *Rules)
		check  string
		status CheckStatus
	}{
		{"replica not ACTIVE", func(s *State, _ *Rules) { s.Regions[0].Replicas["eu-central-1"] = "UPDATING" }, "target-replica", CheckFail},
		{"target table not ACTIVE", func(s *State, _ *Rules) { s.Regions[1].TableStatus = "UPDATING" }, "target-table", CheckFail},
		{"no datapoints on a global table only warns", func(s *State, _ *Rules) { s.Regions[0].Latency[0] = Latency{Receiving: "eu-central-1"} }, "replication-latency", CheckWarn},
		{"latency over the threshold", func(s *State, _ *Rules) { s.Regions[0].Latency[0].Max = time.Minute }, "replication-latency", CheckFail},
		{"latency exactly at the threshold passes", func(s *State, _ *Rules) { s.Regions[0].Latency[0].Max = 30 * time.Second }, "replication-latency", CheckOK},
		{"latency a nanosecond over the threshold", func(s *State, _ *Rules) { s.Regions[0].Latency[0].Max = 30*time.Second + 1 }, "replication-latency", CheckFail},
		{"CloudWatch error refuses without --force", func(s *State, _ *Rules) { s.Regions[0].Latency[0].Error = "timeout" }, "replication-latency", CheckFail},
		{"CloudWatch error skipped with --force", func(s *State, r *Rules) { s.Regions[0].Latency[0].Error = "timeout"; r.Force = true }, "replication-latency", CheckSkipped},
		{"old region down refuses without --force", func(s *State, _ *Rules) { s.Regions[0] = RegionState{Region: "eu-west-1", Error: "down"} }, "old-region", CheckFail},
		{"old region down skipped with --force", func(s *State, r *Rules) {
			s.Regions[0] = RegionState{Region: "eu-west-1", Error: "down"}
			r.Force = true
		}, "old-region", CheckSkipped},
		{"--force does not skip a latency the old region reports", func(s *State, r *Rules) { s.Regions[0].Latency[0].Max = time.Minute; r.Force = true }, "replication-latency", CheckFail},
		{"--from outside the regions", func(_ *State, r *Rules) { r.From = "us-east-1" }, "old-region", CheckFail},
		{"target fenced refuses a failover", func(s *State, _ *Rules) { s.Regions[1].Fenced = true }, "target-fence", CheckFail},
		{"target fenced by dr is expected by a failback", func(s *State, r *Rules) {
			s.Regions[1].Fenced, s.Regions[1].FenceSid = true, FenceSid
			r.Mode = Failback
		}, "target-fence", CheckOK},
		{"target fenced by a statement dynops did not write refuses a failback", func(s *State, r *Rules) { s.Regions[1].Fenced = true; r.Mode = Failback }, "target-fence", CheckFail},
		{"pointers disagree", func(s *State, _ *Rules) { s.Regions[1].Pointer = "eu-central-1" }, "pointer", CheckFail},
		{"pointers disagree, --from given", func(s *State, r *Rules) { s.Regions[1].Pointer = "eu-central-1"; r.FromGiven = true }, "pointer", CheckWarn},
		{"pointer missing in the target", func(s *State, _ *Rules) { s.Regions[1].PointerError = "parameter does not exist" }, "pointer", CheckFail},
		{"not replicas", func(s *State, _ *Rules) { s.Regions[0].Replicas, s.Regions[1].Replicas = nil, nil }, "target-replica", CheckFail},
		{"not replicas, --allow-unreplicated", func(s *State, r *Rules) {
			s.Regions[0].Replicas, s.Regions[1].Replicas = nil, nil
			r.AllowUnreplicated = true
		}, "target-replica", CheckWarn},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, r := globalState(), rules()
			tc.edit(&s, &r)
			checks := Preflight(s, r)
			assert.Equal(t, tc.status, statusOf(checks, tc.check), "%+v", checks)
			assert.Equal(t, tc.status == CheckFail, len(Refused(checks)) > 0)
		})
	}
}

func TestVerdicts(t *testing.T) {
	s := globalState()
	vs := Verdicts(s, rules())
	require.Len(t, vs, 1)
	assert.Equal(t, "eu-central-1", vs[0].To)
	assert.True(t, vs[0].Ready)

	s.Regions[1].Pointer = "eu-central-1"
	s.Active = ""
	vs = Verdicts(s, rules())
	require.Len(t, vs, 2)
	for _, v := range vs {
		assert.False(t, v.Ready)
		assert.Contains(t, v.Why[0], "eu-west-1=eu-west-1, eu-central-1=eu-central-1")
	}
}

func TestFencePolicy(t *testing.T) {
	t.Run("on a table without a policy", func(t *testing.T) {
		doc, err := WithFence("", arnA, "arn:aws:iam::111122223333:role/break-glass")
		require.NoError(t, err)
		assert.True(t, HasFence(doc))
		var p struct {
			Statement []struct {
				Sid, Effect, Principal, Resource string
				Action                           []string
				Condition                        map[string]map[string][]string
			}
		}
		require.NoError(t, json.Unmarshal([]byte(doc), &p))
		require.Len(t, p.Statement, 1)
		st := p.Statement[0]
		assert.Equal(t, "Deny", st.Effect)
		assert.Equal(t, "*", st.Principal)
		assert.Equal(t, arnA, st.Resource)
		assert.Contains(t, st.Action, "dynamodb:PutItem")
		assert.Contains(t, st.Action, "dynamodb:BatchWriteItem")
		assert.NotContains(t, st.Action, "dynamodb:GetItem", "reads stay allowed")
		assert.Equal(t, []string{
			"arn:aws:iam::111122223333:role/break-glass",
			"arn:aws:iam::111122223333:role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication",
		}, st.Condition["ArnNotLike"]["aws:PrincipalArn"], "the replication role is never fenced: that would stop replication")

		back, err := WithoutFence(doc)
		require.NoError(t, err)
		assert.Empty(t, back, "nothing left: the policy is deleted")
	})
	t.Run("other statements are kept, a single statement object is read", func(t *testing.T) {
		own := `{"Version":"2012-10-17","Statement":{"Sid":"AppReads","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/app"},"Action":"dynamodb:GetItem","Resource":"` + arnA + `"}}`
		doc, err := WithFence(own, arnA, "")
		require.NoError(t, err)
		assert.True(t, HasFence(doc))
		assert.Contains(t, doc, "AppReads")
		again, err := WithFence(doc, arnA, "")
		require.NoError(t, err)
		assert.Equal(t, doc, again, "fencing twice changes nothing")
		back, err := WithoutFence(doc)
		require.NoError(t, err)
		assert.False(t, HasFence(back))
		assert.Contains(t, back, "AppReads")
	})
	t.Run("a broken policy is an error, not a silent overwrite", func(t *testing.T) {
		_, err := WithFence("{not json", arnA, "")
		assert.Error(t, err)
	})
}

func TestCanaryKey(t *testing.T) {
	c, err := newCanary(KeyAttr{Name: "tenant_key", Type: "S"}, &KeyAttr{Name: "created_at", Type: "N"}, "failover-1")
	require.NoError(t, err)
	assert.Equal(t, "tenant_key="+CanaryPrefix+"failover-1", c.describe())
	assert.Len(t, c.key, 2)
	_, err = newCanary(KeyAttr{Name: "id", Type: "N"}, nil, "x")
	assert.ErrorContains(t, err, "string partition key")
}

// TestFenceHoldsByContent_DDB_DR_01: a fence is read from what the policy
// says, not from its Sid: a statement named like the fence that exempts a
// wildcard, a user or an account, or that misses a write, is no fence; one
// written under any Sid that denies every write to everyone is.
func TestFenceHoldsByContent_DDB_DR_01(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-session"
	const bg = "arn:aws:iam::111122223333:role/break-glass"
	actions := func(a ...string) []any {
		out := make([]any, len(a))
		for i, v := range a {
			out[i] = v
		}
		return out
	}
	without := func(drop string) func(m map[string]any) {
		return func(m map[string]any) {
			var kept []any
			for _, a := range FencedActions(bg) {
				if a != drop {
					kept = append(kept, a)
				}
			}
			m["Action"] = kept
		}
	}
	stmt := func(mut func(m map[string]any)) string {
		m := map[string]any{
			"Sid": FenceSid, "Effect": "Deny", "Principal": "*",
			"Action":    actions(FencedActions(bg)...),
			"Resource":  arn,
			"Condition": map[string]any{"ArnNotLike": map[string]any{"aws:PrincipalArn": []any{"arn:aws:iam::111122223333:role/break-glass"}}},
		}
		if mut != nil {
			mut(m)
		}
		b, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{m}})
		return string(b)
	}
	exempt := func(a ...any) func(m map[string]any) {
		return func(m map[string]any) {
			m["Condition"] = map[string]any{"ArnNotLike": map[string]any{"aws:PrincipalArn": a}}
		}
	}
	ours, err := WithFence("", arn, "arn:aws:iam::111122223333:role/break-glass")
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		doc  string
		want bool
	}{
		{"dynops' own fence", ours, true},
		{"the fence as written by hand", stmt(nil), true},
		{"another Sid, same content", stmt(func(m map[string]any) { m["Sid"] = "Freeze" }), true},
		{"no condition", stmt(func(m map[string]any) { delete(m, "Condition") }), true},
		{"dynamodb:* denied", stmt(func(m map[string]any) { m["Action"] = "dynamodb:*" }), true},
		{"Principal AWS *", stmt(func(m map[string]any) { m["Principal"] = map[string]any{"AWS": "*"} }), true},
		{"Resource *", stmt(func(m map[string]any) { m["Resource"] = "*" }), true},
		{"no policy", "", false},
		{"wildcard exemption", stmt(exempt("arn:aws:iam::*:role/*")), false},
		{"star exemption", stmt(exempt("*")), false},
		{"role wildcard in name", stmt(exempt("arn:aws:iam::111122223333:role/break-*")), false},
		{"question mark", stmt(exempt("arn:aws:iam::111122223333:role/break-glas?")), false},
		{"account root exempt", stmt(exempt("arn:aws:iam::111122223333:root")), false},
		{"user exempt", stmt(exempt("arn:aws:iam::111122223333:user/alice")), false},
		{"StringNotLike on another key", stmt(func(m map[string]any) {
			m["Condition"] = map[string]any{"StringNotLike": map[string]any{"aws:userid": "*"}}
		}), false},
		{"Bool condition", stmt(func(m map[string]any) {
			m["Condition"] = map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}}
		}), false},
		{"Allow, not Deny", stmt(func(m map[string]any) { m["Effect"] = "Allow" }), false},
		{"one principal only", stmt(func(m map[string]any) { m["Principal"] = map[string]any{"AWS": "arn:aws:iam::111122223333:role/app"} }), false},
		{"PutItem missing", stmt(func(m map[string]any) { m["Action"] = []any{"dynamodb:UpdateItem", "dynamodb:DeleteItem"} }), false},
		{"UpdateContinuousBackups missing", stmt(without("dynamodb:UpdateContinuousBackups")), false},
		{"TagResource missing", stmt(without("dynamodb:TagResource")), false},
		{"UntagResource missing", stmt(without("dynamodb:UntagResource")), false},
		{"EnableKinesisStreamingDestination missing", stmt(without("dynamodb:EnableKinesisStreamingDestination")), false},
		{"DisableKinesisStreamingDestination missing", stmt(without("dynamodb:DisableKinesisStreamingDestination")), false},
		{"UpdateKinesisStreamingDestination missing", stmt(without("dynamodb:UpdateKinesisStreamingDestination")), false},
		{"UpdateTimeToLive missing", stmt(without("dynamodb:UpdateTimeToLive")), false},
		{"DeleteTable missing", stmt(without("dynamodb:DeleteTable")), false},
		{"PutResourcePolicy missing while a role is exempt", stmt(without("dynamodb:PutResourcePolicy")), false},
		{"PartiQL missing", stmt(func(m map[string]any) {
			m["Action"] = []any{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
		}), false},
		{"NotAction", stmt(func(m map[string]any) { delete(m, "Action"); m["NotAction"] = "dynamodb:GetItem" }), false},
		{"another table", stmt(func(m map[string]any) { m["Resource"] = strings.Replace(arn, "session", "user", 1) }), false},
		{"not JSON", "{", false},
		{"the replication role of the table's account exempt", stmt(exempt(bg, "arn:aws:iam::111122223333:role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication")), true},
		{"the replication role of another account exempt", stmt(exempt("arn:aws:iam::444455556666:role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication")), false},
		{"the application role exempt", stmt(exempt(bg, "arn:aws:iam::111122223333:role/app")), false},
		{"a break-glass role of another account exempt", stmt(exempt("arn:aws:iam::444455556666:role/break-glass")), false},
		{"a break-glass role exempt, policy changes not denied", stmt(func(m map[string]any) {
			m["Action"] = actions(FencedActions("")...)
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := FenceHolds(tc.doc, arn, bg)
			assert.Equal(t, tc.want, got, "FenceHolds says %s", why)
			assert.NotEmpty(t, why)
		})
	}
}

// TestBreakGlassARNValidated: only one named IAM role, in the table's partition and account.
func TestBreakGlassARNValidated(t *testing.T) {
	const table = "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-session"
	for arn, ok := range map[string]bool{
		"": true,
		"arn:aws:iam::111122223333:role/break-glass":             true,
		"arn:aws:iam::111122223333:role/sec/break-glass":         true,
		"arn:aws:iam::444455556666:role/sec/break-glass":         false, // another account than the table's
		"arn:aws:iam::*:role/*":                                  false,
		"arn:aws:iam::111122223333:role/*":                       false,
		"arn:aws:iam::111122223333:role/break?":                  false,
		"arn:aws:iam::111122223333:root":                         false,
		"arn:aws:iam::111122223333:user/alice":                   false,
		"arn:aws:iam:::role/break-glass":                         false,
		"arn:aws:iam::12345:role/break-glass":                    false,
		"arn:aws:sts::111122223333:assumed-role/break-glass/bob": false,
		"arn:": false,
		"*":    false,
		"arn:aws-cn:iam::111122223333:role/break-glass": false, // another partition than the table's
	} {
		err := ValidateBreakGlassARN(arn, table)
		assert.Equal(t, ok, err == nil, "%q: %v", arn, err)
	}
}

// TestFenceExemptsReplicationInTheTablesPartition: the replication role's
// ARN comes from the table's partition and account, not a hard-coded "aws".
func TestFenceExemptsReplicationInTheTablesPartition(t *testing.T) {
	for _, part := range []string{"aws", "aws-cn", "aws-us-gov"} {
		arn := "arn:" + part + ":dynamodb:r-1:111122223333:table/prod-hoge-session"
		doc, err := WithFence("", arn, "")
		require.NoError(t, err)
		assert.Contains(t, doc, `"arn:`+part+`:iam::111122223333:role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication"`)
		held, why := FenceHolds(doc, arn, "")
		assert.True(t, held, why)
		assert.NotContains(t, doc, "dynamodb:PutResourcePolicy", "without a break-glass role nobody could lift a fence on policy changes")
		for _, a := range []string{"dynamodb:UpdateTable", "dynamodb:DeleteTable", "dynamodb:UpdateTimeToLive"} {
			assert.Contains(t, doc, a)
		}
		withBG, err := WithFence("", arn, "arn:"+part+":iam::111122223333:role/break-glass")
		require.NoError(t, err)
		assert.Contains(t, withBG, "dynamodb:PutResourcePolicy")
		assert.Contains(t, withBG, "dynamodb:DeleteResourcePolicy")
	}
	_, err := WithFence("", "arn:aws:dynamodb:eu-west-1::table/x", "")
	assert.Error(t, err, "a table ARN without an account")
}

// TestFencePolicySizeCheckedInPreflight: a policy that the fence would push
// over DynamoDB's 20 KB limit fails the preflight, before any step.
func TestFencePolicySizeCheckedInPreflight(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-session"
	big := func(n int) string {
		b, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
			"Sid": "Own", "Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::111122223333:role/app"}, "Action": "dynamodb:GetItem", "Resource": arn,
			"Condition": map[string]any{"StringEquals": map[string]any{"aws:PrincipalTag/x": strings.Repeat("a", n)}},
		}}})
		return string(b)
	}
	for _, tc := range []struct {
		n    int
		want CheckStatus
	}{{100, CheckOK}, {MaxPolicyBytes - 1200, CheckOK}, {MaxPolicyBytes - 200, CheckFail}, {MaxPolicyBytes, CheckFail}} {
		s := State{Target: Target{Table: "prod-hoge-session", Regions: []string{"eu-west-1", "eu-central-1"}}}
		s.Regions = []RegionState{{Region: "eu-west-1", Answers: true, TableExists: true, TableARN: arn, Policy: big(tc.n)}}
		checks := fenceChecks(s, Request{Rules: Rules{From: "eu-west-1", To: "eu-central-1"}})
		require.Len(t, checks, 1)
		assert.Equal(t, tc.want, checks[0].Status, "%d-byte condition: %s", tc.n, checks[0].Detail)
	}
	// At the byte: a policy that is exactly 20 KB with the fence passes, one
	// byte more fails (the condition's value grows the document byte for byte).
	withFenceLen := func(n int) int {
		doc, err := withFence(big(n), arn, "", FenceSid)
		require.NoError(t, err)
		return len(doc)
	}
	exact := MaxPolicyBytes - withFenceLen(0)
	require.Equal(t, MaxPolicyBytes, withFenceLen(exact))
	for n, want := range map[int]CheckStatus{exact: CheckOK, exact + 1: CheckFail} {
		s := State{Target: Target{Table: "prod-hoge-session", Regions: []string{"eu-west-1", "eu-central-1"}}}
		s.Regions = []RegionState{{Region: "eu-west-1", Answers: true, TableExists: true, TableARN: arn, Policy: big(n)}}
		checks := fenceChecks(s, Request{Rules: Rules{From: "eu-west-1", To: "eu-central-1"}})
		require.Len(t, checks, 1)
		assert.Equal(t, want, checks[0].Status, "fenced policy of %d bytes: %s", withFenceLen(n), checks[0].Detail)
	}

	s := State{Regions: []RegionState{{Region: "eu-west-1", Answers: true, TableExists: true, TableARN: arn}}}
	checks := fenceChecks(s, Request{Rules: Rules{From: "eu-west-1", To: "eu-central-1"}, BreakGlassRoleARN: "arn:aws:iam::*:role/*"})
	require.NotEmpty(t, checks)
	assert.Equal(t, CheckFail, checks[0].Status)
}
