package guideline

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compliant is a table as modules/dynamodb-table creates it by default.
func compliant() TableState {
	return TableState{
		Table: types.TableDescription{
			TableName:                 aws.String("prod-hoge-user"),
			BillingModeSummary:        &types.BillingModeSummary{BillingMode: types.BillingModePayPerRequest},
			DeletionProtectionEnabled: aws.Bool(true),
			StreamSpecification:       &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndexDescription{
				{IndexName: aws.String("gsi1"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude}},
			},
			OnDemandThroughput: &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(4000), MaxWriteRequestUnits: aws.Int64(1000)},
		},
		Protected: true,
		PITR:      &types.PointInTimeRecoveryDescription{PointInTimeRecoveryStatus: types.PointInTimeRecoveryStatusEnabled, RecoveryPeriodInDays: aws.Int32(35)},
		TTL:       &types.TimeToLiveDescription{TimeToLiveStatus: types.TimeToLiveStatusEnabled, AttributeName: aws.String("ttl")},
		Tags:      map[string]string{},
	}
}

func statusOf(fs []Finding, rule, resource string) (Status, Finding) {
	for _, f := range fs {
		if f.Rule == rule && f.Resource == resource {
			return f.Status, f
		}
	}
	return "", Finding{}
}

func TestEvaluateCompliantTablePassesEveryRule(t *testing.T) {
	fs := Evaluate(compliant())
	seen := map[string]bool{}
	for _, f := range fs {
		seen[f.Rule] = true
		if f.Status != Pass {
			t.Errorf("%s on %s: %s (%s), want pass", f.Rule, f.Resource, f.Status, f.Message)
		}
	}
	// The monitoring rules need gathered monitoring: monitoring_test.go covers them.
	// DDB-SEC-02 applies to multi-tenant tables only: tenant_test.go covers it.
	monitoring := map[string]bool{Mon01: true, Stream04: true, Stream05: true, Sec02: true}
	for _, r := range Rules() {
		if !seen[r.ID] && !monitoring[r.ID] {
			t.Errorf("rule %s was not evaluated", r.ID)
		}
	}
}

func TestEvaluateFindsEachViolation(t *testing.T) {
	cases := []struct {
		rule, resource string
		mutate         func(*TableState)
		failing        bool // error-level: fails `dynops check`
	}{
		{"DDB-NAME-01", "Users", func(s *TableState) { s.Table.TableName = aws.String("Users") }, true},
		{"DDB-NAME-01", "qa-hoge-user", func(s *TableState) { s.Table.TableName = aws.String("qa-hoge-user") }, true},
		{"DDB-NAME-01", "prod-user", func(s *TableState) { s.Table.TableName = aws.String("prod-user") }, true},
		{"DDB-NAME-02", "prod-hoge-user/index/user_id-index", func(s *TableState) {
			s.Table.GlobalSecondaryIndexes[0].IndexName = aws.String("user_id-index")
		}, true},
		{"DDB-NAME-02", "prod-hoge-user/index/by_date", func(s *TableState) {
			s.Table.LocalSecondaryIndexes = []types.LocalSecondaryIndexDescription{{IndexName: aws.String("by_date"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}}
		}, true},
		{"DDB-IDX-02", "prod-hoge-user/index/gsi1", func(s *TableState) {
			s.Table.GlobalSecondaryIndexes[0].Projection.ProjectionType = types.ProjectionTypeAll
		}, true},
		{"DDB-NAME-03", "prod-hoge-user", func(s *TableState) { s.TTL.TimeToLiveStatus = types.TimeToLiveStatusDisabled }, false},
		{"DDB-NAME-03", "prod-hoge-user", func(s *TableState) { s.TTL.AttributeName = aws.String("expires_at") }, false},
		{"DDB-CAP-01", "prod-hoge-user", func(s *TableState) { s.Table.BillingModeSummary = nil }, true},
		{"DDB-CAP-04", "prod-hoge-user", func(s *TableState) { s.Table.OnDemandThroughput = nil }, true},
		{"DDB-CAP-04", "prod-hoge-user", func(s *TableState) { s.Table.OnDemandThroughput.MaxWriteRequestUnits = aws.Int64(-1) }, true},
		{"DDB-CAP-04", "prod-hoge-user", func(s *TableState) { s.Table.OnDemandThroughput.MaxReadRequestUnits = nil }, true},
		{"DDB-STREAM-01", "prod-hoge-user", func(s *TableState) { s.Table.StreamSpecification.StreamViewType = types.StreamViewTypeKeysOnly }, true},
		{"DDB-PROT-01", "prod-hoge-user", func(s *TableState) { s.Table.DeletionProtectionEnabled = aws.Bool(false) }, true},
		{"DDB-PITR-01", "prod-hoge-user", func(s *TableState) { s.PITR.PointInTimeRecoveryStatus = types.PointInTimeRecoveryStatusDisabled }, true},
		{"DDB-PITR-01", "prod-hoge-user", func(s *TableState) { s.PITR = nil }, true},
		{"DDB-PITR-01", "prod-hoge-user", func(s *TableState) { s.PITR.RecoveryPeriodInDays = aws.Int32(7) }, true},
	}
	for _, c := range cases {
		t.Run(c.rule+" "+c.resource, func(t *testing.T) {
			s := compliant()
			c.mutate(&s)
			st, f := statusOf(Evaluate(s), c.rule, c.resource)
			if st != Fail {
				t.Fatalf("%s on %s: status %q, want fail", c.rule, c.resource, st)
			}
			if f.Failing() != c.failing {
				t.Errorf("Failing() = %v, want %v (severity %s)", f.Failing(), c.failing, f.Severity)
			}
			if f.Message == "" {
				t.Error("a failing finding must say what is wrong")
			}
		})
	}
}

func TestEvaluateTaggedExceptionIsNotAFailure(t *testing.T) {
	s := compliant()
	s.PITR.RecoveryPeriodInDays = aws.Int32(7)
	s.Tags[ExceptionTagPrefix+"DDB-PITR-01"] = "compliance: user data gone in 7 days"
	st, f := statusOf(Evaluate(s), "DDB-PITR-01", "prod-hoge-user")
	if st != Exception || f.Failing() {
		t.Fatalf("status %s failing %v, want an exception that does not fail", st, f.Failing())
	}
	if f.Reason != "compliance: user data gone in 7 days" {
		t.Errorf("reason %q", f.Reason)
	}
}

func TestEvaluateCustomerManagedKeyIsReported(t *testing.T) {
	s := compliant()
	s.Table.SSEDescription = &types.SSEDescription{SSEType: types.SSETypeKms, KMSMasterKeyArn: aws.String("arn:aws:kms:eu-west-1:123456789012:key/k")}
	_, f := statusOf(Evaluate(s), "DDB-SEC-04", "prod-hoge-user")
	if f.Message != "encrypted at rest with the KMS key arn:aws:kms:eu-west-1:123456789012:key/k" {
		t.Errorf("message %q", f.Message)
	}
}

func TestFollowsNamingRuleAndEnvOf(t *testing.T) {
	envs := DefaultEnvs()
	for name, want := range map[string]bool{
		"stg-fuga-user": true, "prod-hoge-user-access-log": true, "local-hoge-order": true,
		"prod-user": false, "prod-Hoge-user": false, "prod_hoge_user": false, "qa-hoge-user": false, "prod-hoge-": false,
	} {
		if got := FollowsNamingRule(name, envs); got != want {
			t.Errorf("FollowsNamingRule(%q) = %v, want %v", name, got, want)
		}
	}
	if EnvOf("prod-hoge-user") != "prod" || EnvOf("users") != "" {
		t.Error("EnvOf must return the first word, or empty without one")
	}
}

// TestEvaluateFindingsInRuleOrder: `dynops check` prints the findings of a
// table in the order of Rules(), and within one rule in the order the
// resources were read: the table, then its indexes as DescribeTable lists
// them, then its replicas. The cases put many findings under one rule
// (several indexes, several replicas, several consumers) so that a sort that
// is not stable or not by rule shows.
func TestEvaluateFindingsInRuleOrder(t *testing.T) {
	gsis := func(names ...string) []types.GlobalSecondaryIndexDescription {
		var out []types.GlobalSecondaryIndexDescription
		for _, n := range names {
			out = append(out, types.GlobalSecondaryIndexDescription{IndexName: aws.String(n), Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}})
		}
		return out
	}
	replicas := func(regions ...string) []ReplicaState {
		var out []ReplicaState
		for _, r := range regions {
			out = append(out, ReplicaState{Region: r, DeletionProtection: aws.Bool(true), PITR: pitr(35)})
		}
		return out
	}
	consumer := func(fn string) Consumer {
		c := goodConsumer()
		c.UUID, c.FunctionArn = fn, "arn:aws:lambda:eu-west-1:123456789012:function:"+fn
		return c
	}
	cases := []struct {
		name string
		edit func(*TableState)
	}{
		{"compliant table", func(*TableState) {}},
		{"three GSIs and an LSI", func(s *TableState) {
			s.Table.GlobalSecondaryIndexes = gsis("gsi1", "gsi2", "gsi3")
			s.Table.LocalSecondaryIndexes = []types.LocalSecondaryIndexDescription{{IndexName: aws.String("lsi1")}}
		}},
		{"indexes listed out of name order", func(s *TableState) { s.Table.GlobalSecondaryIndexes = gsis("gsi3", "gsi1", "byUser", "gsi2") }},
		{"three replicas", func(s *TableState) { s.Replicas = replicas("us-west-2", "eu-central-1", "ap-northeast-1") }},
		{"everything failing", func(s *TableState) {
			s.Table.TableName = aws.String("Hoge")
			s.Table.DeletionProtectionEnabled = nil
			s.Table.BillingModeSummary = nil
			s.PITR, s.TTL = nil, nil
			s.Table.GlobalSecondaryIndexes = gsis("byUser", "byOrg")
			s.Replicas = []ReplicaState{{Region: "us-west-2", Err: errors.New("AccessDenied")}, {Region: "eu-central-1"}}
		}},
		{"monitoring with two consumers", func(s *TableState) {
			s.Table.GlobalSecondaryIndexes = gsis("gsi1", "gsi2")
			s.Replicas = replicas("us-west-2", "eu-central-1")
			s.Monitoring = &Monitoring{Alarms: fullAlarms(), Consumers: []Consumer{consumer("b"), consumer("a")}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := compliant()
			tc.edit(&s)
			fs := Evaluate(s)
			require.NotEmpty(t, fs)
			order := map[string]int{}
			for i, r := range Rules() {
				order[r.ID] = i
			}
			// The resources of each rule in the order they were read.
			name := *s.Table.TableName
			want := map[string][]string{}
			for _, r := range []string{Name01, Name03, Cap01, Stream01, Prot01, Pitr01, Sec04} {
				want[r] = []string{name}
			}
			for _, g := range s.Table.GlobalSecondaryIndexes {
				want[Name02] = append(want[Name02], name+"/index/"+*g.IndexName)
				want[Idx02] = append(want[Idx02], name+"/index/"+*g.IndexName)
			}
			for _, l := range s.Table.LocalSecondaryIndexes {
				want[Name02] = append(want[Name02], name+"/index/"+*l.IndexName)
				want[Idx02] = append(want[Idx02], name+"/index/"+*l.IndexName)
			}
			for _, r := range s.Replicas {
				want[Prot01] = append(want[Prot01], name+"@"+r.Region)
				want[Pitr01] = append(want[Pitr01], name+"@"+r.Region)
			}
			got := map[string][]string{}
			for i, f := range fs {
				got[f.Rule] = append(got[f.Rule], f.Resource)
				if i > 0 && order[fs[i-1].Rule] > order[f.Rule] {
					t.Errorf("finding %d (%s on %s) comes after %s on %s: not in the order of Rules()", i, f.Rule, f.Resource, fs[i-1].Rule, fs[i-1].Resource)
				}
			}
			assert.Equal(t, Name01, fs[0].Rule, "the first finding is the first rule")
			for rule, res := range want {
				assert.Equal(t, res, got[rule], "%s: resources in the order they were read", rule)
			}
			if s.Monitoring != nil {
				assert.Equal(t, []string{name + "/consumer/b", name + "/consumer/a"}, got[Stream04], "consumers in the order they were read")
			}
		})
	}
}
