package failover

import (
	"context"
	"fmt"
)

// FenceTable adds the write fence (FenceSid) to the resource policy of the
// table at tableARN, exempting breakGlassRoleARN (optional) and replication,
// and reads it back. It returns the policy before, to restore on undo. It is
// the fence of `dynops dr failover`, for one table: `dynops migrate cutover`
// fences the source table with it.
func FenceTable(ctx context.Context, db DynamoDB, tableARN, breakGlassRoleARN string) (before string, err error) {
	before, _, err = ResourcePolicy(ctx, db, tableARN)
	if err != nil {
		return "", err
	}
	doc, err := WithFence(before, tableARN, breakGlassRoleARN)
	if err != nil {
		return before, err
	}
	if err := setPolicy(ctx, db, tableARN, doc); err != nil {
		return before, err
	}
	after, _, err := ResourcePolicy(ctx, db, tableARN)
	if err != nil {
		return before, err
	}
	if !HasFence(after) {
		return before, fmt.Errorf("the policy read back from %s has no %s statement", tableARN, FenceSid)
	}
	return before, nil
}

// UnfenceTable removes the write fence from the table's resource policy (other
// statements stay) and reads it back. It reports whether there was a fence.
func UnfenceTable(ctx context.Context, db DynamoDB, tableARN string) (bool, error) {
	before, _, err := ResourcePolicy(ctx, db, tableARN)
	if err != nil {
		return false, err
	}
	if !HasFence(before) {
		return false, nil
	}
	doc, err := WithoutFence(before)
	if err != nil {
		return true, err
	}
	if err := setPolicy(ctx, db, tableARN, doc); err != nil {
		return true, err
	}
	after, _, err := ResourcePolicy(ctx, db, tableARN)
	if err != nil {
		return true, err
	}
	if HasFence(after) {
		return true, fmt.Errorf("the policy read back from %s still has the %s statement", tableARN, FenceSid)
	}
	return true, nil
}
