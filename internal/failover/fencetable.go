package failover

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// FenceTable adds the write fence of migrate (MigrateFenceSid) to the resource policy of the
// table at tableARN, exempting breakGlassRoleARN (optional) and replication:
// only over the revision it read (a concurrent edit is refused, not lost),
// then reads the policy back until it shows the new revision fencing the
// table by its content, several reads in a row (a resource policy applies
// eventually). It returns the policy before, to restore on undo.
// `dynops migrate cutover` fences the source table with it; the statements
// of `dynops dr` stay.
func FenceTable(ctx context.Context, db DynamoDB, tableARN, breakGlassRoleARN string) (before string, err error) {
	before, _, _, err = fenceTable(ctx, db, tableARN, breakGlassRoleARN, MigrateFenceSid, 2*time.Second)
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
	after, err := awaitPolicy(ctx, db, arn, newRev, func(d string) bool { ok, _ := FenceHolds(d, arn, breakGlass); return ok }, interval, time.Minute)
	if err != nil {
		_, why := FenceHolds(after, arn, breakGlass)
		return before, "", true, fmt.Errorf("the fence on %s is not shown by the policy read back (%s): %w", arn, why, err)
	}
	_, by := FenceHolds(after, arn, breakGlass)
	return before, fmt.Sprintf("fence on %s (statement %s denies %s), read back %d times at revision %s", arn, by, joinActions(FencedActions(breakGlass)), readBacks, newRev), true, nil
}

// UnfenceTable removes the write fence `dynops migrate cutover` wrote
// (MigrateFenceSid) from the table's resource policy; every other statement
// stays, a fence of `dynops dr` included. It reports whether there was one.
func UnfenceTable(ctx context.Context, db DynamoDB, tableARN string) (bool, error) {
	had, _, _, err := unfenceTable(ctx, db, tableARN, OwnerMigrate, "", 2*time.Second)
	return had, err
}

// unfenceTable removes owner's fence statements, over the revision it read,
// and reads back until none is left. A table fenced only by a statement
// dynops did not write is refused; another owner's fence stays, and the
// detail says so.
func unfenceTable(ctx context.Context, db DynamoDB, arn string, owner Owner, breakGlass string, interval time.Duration) (had bool, before, detail string, err error) {
	before, rev, err := ResourcePolicy(ctx, db, arn)
	if err != nil {
		return false, "", "", err
	}
	if !HasOwnFence(before, owner) {
		holds, by := FenceHolds(before, arn, breakGlass)
		switch {
		case holds && isFenceSid(by):
			return false, before, fmt.Sprintf("%s carries no fence of dynops %s; the fence of dynops %s (statement %s) stays: that command removes it", arn, owner, ownerOf(by), by), nil
		case holds:
			return false, before, "", fmt.Errorf("%s is fenced by statement %s, which dynops did not write (no %s): remove it yourself, then run the command again", arn, by, strings.Join(owner.sids(), " or "))
		}
		return false, before, fmt.Sprintf("%s carries no fence", arn), nil
	}
	doc, err := withoutOwnFence(before, owner)
	if err != nil {
		return true, before, "", err
	}
	newRev, err := setPolicy(ctx, db, arn, doc, rev, false)
	if err != nil {
		return true, before, "", err
	}
	after, err := awaitPolicy(ctx, db, arn, newRev, func(d string) bool { return !HasOwnFence(d, owner) }, interval, time.Minute)
	if err != nil {
		return true, before, "", fmt.Errorf("the policy of %s read back still carries the fence of dynops %s: %w", arn, owner, err)
	}
	detail = fmt.Sprintf("fence removed from %s, read back %d times (%s); it was dynops %s's", arn, readBacks, policySummary(after), owner)
	if holds, by := FenceHolds(after, arn, breakGlass); holds {
		detail += fmt.Sprintf("; still fenced by statement %s", by)
		if o := ownerOf(by); o != "" {
			detail += fmt.Sprintf(" (dynops %s's: that command removes it)", o)
		}
	}
	return true, before, detail, nil
}

func joinActions(a []string) string { return strings.Join(a, ", ") }
