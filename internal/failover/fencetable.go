package failover

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// FenceTable adds the write fence (FenceSid) to the resource policy of the
// table at tableARN, exempting breakGlassRoleARN (optional) and replication:
// only over the revision it read (a concurrent edit is refused, not lost),
// then reads the policy back until it shows the new revision fencing the
// table by its content, several reads in a row (a resource policy applies
// eventually). It returns the policy before, to restore on undo. It is the
// fence of `dynops dr failover`; `dynops migrate cutover` fences the source
// table with it.
func FenceTable(ctx context.Context, db DynamoDB, tableARN, breakGlassRoleARN string) (before string, err error) {
	before, _, _, err = fenceTable(ctx, db, tableARN, breakGlassRoleARN, FenceSid, 2*time.Second)
	return before, err
}

// fenceTable also reports whether the policy was changed (there is something to undo).
// sid is the fence statement's Sid: FenceSid, or FailbackFenceSid for the
// temporary fence of a failback.
func fenceTable(ctx context.Context, db DynamoDB, arn, breakGlass, sid string, interval time.Duration) (before, detail string, changed bool, err error) {
	before, rev, err := ResourcePolicy(ctx, db, arn)
	if err != nil {
		return "", "", false, err
	}
	doc, err := withFence(before, arn, breakGlass, sid)
	if err != nil {
		return before, "", false, err
	}
	newRev, err := setPolicy(ctx, db, arn, doc, rev, breakGlass != "")
	if err != nil {
		return before, "", false, err
	}
	after, err := awaitPolicy(ctx, db, arn, newRev, func(d string) bool { ok, _ := FenceHolds(d, arn); return ok }, interval, time.Minute)
	if err != nil {
		_, why := FenceHolds(after, arn)
		return before, "", true, fmt.Errorf("the fence on %s is not shown by the policy read back (%s): %w", arn, why, err)
	}
	_, by := FenceHolds(after, arn)
	return before, fmt.Sprintf("fence on %s (statement %s denies %s), read back %d times at revision %s", arn, by, joinActions(FencedActions(breakGlass)), readBacks, newRev), true, nil
}

// UnfenceTable removes the write fence dynops wrote from the table's resource
// policy (other statements stay), over the revision it read, and reads back
// until the table is no longer fenced by any statement. It reports whether
// there was a fence; a fence dynops did not write is refused.
func UnfenceTable(ctx context.Context, db DynamoDB, tableARN string) (bool, error) {
	had, _, _, err := unfenceTable(ctx, db, tableARN, 2*time.Second)
	return had, err
}

func unfenceTable(ctx context.Context, db DynamoDB, arn string, interval time.Duration) (had bool, before, detail string, err error) {
	before, rev, err := ResourcePolicy(ctx, db, arn)
	if err != nil {
		return false, "", "", err
	}
	if !HasFence(before) {
		if holds, by := FenceHolds(before, arn); holds {
			return false, before, "", fmt.Errorf("%s is fenced by statement %s, which dynops did not write (no %s or %s): remove it yourself, then run the command again", arn, by, FenceSid, FailbackFenceSid)
		}
		return false, before, fmt.Sprintf("%s carries no fence", arn), nil
	}
	doc, err := WithoutFence(before)
	if err != nil {
		return true, before, "", err
	}
	newRev, err := setPolicy(ctx, db, arn, doc, rev, false)
	if err != nil {
		return true, before, "", err
	}
	after, err := awaitPolicy(ctx, db, arn, newRev, func(d string) bool { ok, _ := FenceHolds(d, arn); return !ok && !HasFence(d) }, interval, time.Minute)
	if err != nil {
		return true, before, "", fmt.Errorf("the policy of %s read back still fences it: %w", arn, err)
	}
	return true, before, fmt.Sprintf("fence removed from %s, read back %d times (%s)", arn, readBacks, policySummary(after)), nil
}

func joinActions(a []string) string { return strings.Join(a, ", ") }
