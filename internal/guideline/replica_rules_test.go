package guideline

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func pitr(days int32) *types.PointInTimeRecoveryDescription {
	return &types.PointInTimeRecoveryDescription{PointInTimeRecoveryStatus: types.PointInTimeRecoveryStatusEnabled, RecoveryPeriodInDays: aws.Int32(days)}
}

// TestEvaluateReplicas: every replica of a global table is checked in its
// region for DDB-PROT-01 and DDB-PITR-01 (issue 14 bugs 3 and 4), and an
// unreadable replica fails both (fail closed).
func TestEvaluateReplicas(t *testing.T) {
	cases := []struct {
		name       string
		table      int32 // the table's PITR period
		replica    ReplicaState
		prot, pitr Status
	}{
		{"protected, 35 days", 35, ReplicaState{Region: "eu-central-1", DeletionProtection: aws.Bool(true), PITR: pitr(35)}, Pass, Pass},
		{"deletion protection off", 35, ReplicaState{Region: "eu-central-1", DeletionProtection: aws.Bool(false), PITR: pitr(35)}, Fail, Pass},
		{"deletion protection unknown", 35, ReplicaState{Region: "eu-central-1", PITR: pitr(35)}, Fail, Pass},
		{"PITR off", 35, ReplicaState{Region: "us-west-2", DeletionProtection: aws.Bool(true)}, Pass, Fail},
		{"PITR disabled", 35, ReplicaState{Region: "us-west-2", DeletionProtection: aws.Bool(true), PITR: &types.PointInTimeRecoveryDescription{PointInTimeRecoveryStatus: types.PointInTimeRecoveryStatusDisabled}}, Pass, Fail},
		{"table 7 days, replica AWS's 35", 7, ReplicaState{Region: "us-west-2", DeletionProtection: aws.Bool(true), PITR: pitr(35)}, Pass, Fail},
		{"both 7 days is still short", 7, ReplicaState{Region: "us-west-2", DeletionProtection: aws.Bool(true), PITR: pitr(7)}, Pass, Fail},
		{"unreadable replica", 35, ReplicaState{Region: "ap-northeast-1", Err: errors.New("AccessDenied")}, Fail, Fail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := compliant()
			s.PITR = pitr(c.table)
			s.Replicas = []ReplicaState{c.replica}
			fs := Evaluate(s)
			res := "prod-hoge-user@" + c.replica.Region
			if got, f := statusOf(fs, Prot01, res); got != c.prot {
				t.Errorf("DDB-PROT-01 on %s = %q (%s), want %q", res, got, f.Message, c.prot)
			}
			if got, f := statusOf(fs, Pitr01, res); got != c.pitr {
				t.Errorf("DDB-PITR-01 on %s = %q (%s), want %q", res, got, f.Message, c.pitr)
			} else if got == Fail && !strings.Contains(f.Message, c.replica.Region) {
				t.Errorf("the finding must name the replica's region: %s", f.Message)
			}
		})
	}
}

// TestEmptyExceptionReasonIsNoException: issue 14 bug 6. An exception tag
// whose reason is empty (or blank) leaves the rule failing.
func TestEmptyExceptionReasonIsNoException(t *testing.T) {
	for _, reason := range []string{"", " ", "\t"} {
		s := compliant()
		s.Table.DeletionProtectionEnabled = aws.Bool(false)
		s.Tags[ExceptionTagPrefix+Prot01] = reason
		got, f := statusOf(Evaluate(s), Prot01, "prod-hoge-user")
		if got != Fail || !strings.Contains(f.Message, "empty reason") {
			t.Errorf("reason %q: DDB-PROT-01 = %q (%s), want fail naming the empty reason", reason, got, f.Message)
		}
	}
	s := compliant()
	s.Table.DeletionProtectionEnabled = aws.Bool(false)
	s.Tags[ExceptionTagPrefix+Prot01] = "decommission OPS-1"
	if got, f := statusOf(Evaluate(s), Prot01, "prod-hoge-user"); got != Exception || f.Reason != "decommission OPS-1" {
		t.Errorf("with a reason: %q %q, want exception", got, f.Reason)
	}
}

// TestEveryRuleIsInTheGuideline: every rule dynops check reports has its
// section in docs/guideline.md, and findings link to it.
func TestEveryRuleIsInTheGuideline(t *testing.T) {
	b, err := os.ReadFile("../../" + GuidelineFile)
	if err != nil {
		t.Fatalf("the project carries its guideline: %v", err)
	}
	heads := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^### (DDB-[A-Z]+-[0-9]{2})$`).FindAllStringSubmatch(string(b), -1) {
		heads[m[1]] = true
	}
	for _, r := range Rules() {
		if !heads[r.ID] {
			t.Errorf("%s has no section in %s", r.ID, GuidelineFile)
		}
	}
	for _, f := range Evaluate(compliant()) {
		if f.Guideline != DocLink(f.Rule) || !strings.HasPrefix(f.Guideline, "docs/guideline.md#ddb-") {
			t.Errorf("finding %s links %q", f.Rule, f.Guideline)
		}
	}
}
