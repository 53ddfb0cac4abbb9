package failover

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"github.com/dynops/dynops/internal/permissions"
	"github.com/dynops/dynops/internal/poll"
)

// FenceSid is the Sid of the statement dynops adds to a table's resource
// policy to fence writes in a region; `dynops dr status` recognises it.
const FenceSid = "DynopsDRFenceWrites"

// FailbackFenceSid is the Sid of the fence a failback holds on the region
// it leaves while the pointer moves back; the failback removes it last. So
// this statement still in place outside a running failback means one
// stopped before its end (`dr status`: HALF-DONE), unlike a failover's
// fence (FenceSid), which stays by design.
const FailbackFenceSid = "DynopsDRFenceWritesFailback"

// MigrateFenceSid is the Sid of the fence `dynops migrate cutover` puts on
// the source table; `dynops migrate rollback` removes it, and only it.
const MigrateFenceSid = "DynopsMigrateFenceWrites"

// Owner is the command family that writes a fence and may remove it: each
// removes only its own statements, so that a table fenced by both (a
// migration's source in a region a failover left) keeps the other's.
type Owner string

// Fence owners.
const (
	OwnerDR      Owner = "dr"      // FenceSid, FailbackFenceSid
	OwnerMigrate Owner = "migrate" // MigrateFenceSid
)

// sids are the fence statements of the owner.
func (o Owner) sids() []string {
	if o == OwnerMigrate {
		return []string{MigrateFenceSid}
	}
	return []string{FenceSid, FailbackFenceSid}
}

// ownerOf returns the owner of a fence Sid ("" when it is none of dynops's).
func ownerOf(sid string) Owner {
	for _, o := range []Owner{OwnerDR, OwnerMigrate} {
		if slices.Contains(o.sids(), sid) {
			return o
		}
	}
	return ""
}

// isFenceSid reports whether sid is one of dynops's fence statements.
func isFenceSid(sid string) bool { return ownerOf(sid) != "" }

// FenceSidOf returns the Sid of dynops dr's fence statement in doc
// (FenceSid or FailbackFenceSid), else migrate's, "" when there is none.
func FenceSidOf(doc string) string {
	p, err := parsePolicy(doc)
	if err != nil {
		return ""
	}
	var other string
	for _, s := range p.Statement {
		switch sid := statementSid(s); ownerOf(sid) {
		case OwnerDR:
			return sid
		case OwnerMigrate:
			other = sid
		}
	}
	return other
}

// HasOwnFence reports whether doc carries a fence statement of owner.
func HasOwnFence(doc string, owner Owner) bool {
	p, err := parsePolicy(doc)
	if err != nil {
		return false
	}
	for _, s := range p.Statement {
		if ownerOf(statementSid(s)) == owner {
			return true
		}
	}
	return false
}

// writeActions are the item writes a fence must deny. TransactWriteItems is
// authorised per item as PutItem, UpdateItem or DeleteItem.
var writeActions = []string{
	"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem",
	"dynamodb:PartiQLInsert", "dynamodb:PartiQLUpdate", "dynamodb:PartiQLDelete",
}

// tableActions are the table changes the fence denies too: a fenced table
// must not be changed, dropped, have its items expire differently, lose its
// point-in-time recovery, have the tags protection reads changed, or stream
// its changes somewhere else.
var tableActions = []string{
	"dynamodb:UpdateTable", "dynamodb:DeleteTable", "dynamodb:UpdateTimeToLive",
	"dynamodb:UpdateContinuousBackups", "dynamodb:TagResource", "dynamodb:UntagResource",
	"dynamodb:EnableKinesisStreamingDestination", "dynamodb:DisableKinesisStreamingDestination", "dynamodb:UpdateKinesisStreamingDestination",
}

// policyActions are the policy changes the fence denies when a break-glass
// role is exempt (it lifts the fence). Without one nobody could lift it, so
// they are left out then.
var policyActions = []string{"dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy"}

// MaxPolicyBytes is DynamoDB's limit on a resource policy, whitespace
// counted (PutResourcePolicy: 20 KB).
const MaxPolicyBytes = 20 * 1024

// replicationRole is the service-linked role global tables replicate with:
// denying it writes would stop replication (REPLICATION_NOT_AUTHORIZED), so
// the fence always exempts it.
const replicationRole = "role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication"

// roleARN is an IAM role ARN: a partition, a 12-digit account, a role name
// (with an optional path) and no wildcard.
var roleARN = regexp.MustCompile(`^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b|aws-iso-e|aws-iso-f|aws-eusc):iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$`)

// ValidateBreakGlassARN checks that arn names one IAM role in the partition
// of tableARN: a wildcard, a user, an account root or another partition would
// turn the fence's exemption into a hole (or the fence into a no-op).
func ValidateBreakGlassARN(arn, tableARN string) error {
	if arn == "" {
		return nil
	}
	if strings.ContainsAny(arn, "*?$") || !roleARN.MatchString(arn) {
		return fmt.Errorf("break-glass role %q is not one IAM role ARN (arn:aws:iam::ACCOUNT:role/NAME, no wildcards)", arn)
	}
	if p := partitionOf(tableARN); p != "" && partitionOf(arn) != p {
		return fmt.Errorf("break-glass role %q is in partition %s, the table %s in %s", arn, partitionOf(arn), tableARN, p)
	}
	if a := accountOf(tableARN); a != "" && accountOf(arn) != a {
		return fmt.Errorf("break-glass role %q is in account %s, the table %s in %s: the fence exempts only a role of the table's own account", arn, accountOf(arn), tableARN, a)
	}
	return nil
}

// accountOf returns the account of an ARN ("" when it is not one).
func accountOf(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" {
		return ""
	}
	return parts[4]
}

// replicationRoleARN is the replication service-linked role of the table's account.
func replicationRoleARN(tableARN string) string {
	return "arn:" + partitionOf(tableARN) + ":iam::" + accountOf(tableARN) + ":" + replicationRole
}

// partitionOf returns the partition of an ARN ("" when it is not one).
func partitionOf(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" {
		return ""
	}
	return parts[1]
}

// policy is an IAM policy document; statements are kept as raw JSON so that
// statements dynops did not write pass through unchanged.
type policy struct {
	Version   string            `json:"Version"`
	ID        string            `json:"Id,omitempty"`
	Statement []json.RawMessage `json:"Statement"`
}

func parsePolicy(doc string) (policy, error) {
	p := policy{Version: "2012-10-17"}
	if strings.TrimSpace(doc) == "" {
		return p, nil
	}
	var raw struct {
		Version   string          `json:"Version"`
		ID        string          `json:"Id,omitempty"`
		Statement json.RawMessage `json:"Statement"`
	}
	if err := json.Unmarshal([]byte(doc), &raw); err != nil {
		return p, fmt.Errorf("reading resource policy: %w", err)
	}
	p.Version, p.ID = raw.Version, raw.ID
	s := strings.TrimSpace(string(raw.Statement))
	switch {
	case s == "" || s == "null":
	case strings.HasPrefix(s, "{"): // a single statement may be written without a list
		p.Statement = []json.RawMessage{raw.Statement}
	default:
		if err := json.Unmarshal(raw.Statement, &p.Statement); err != nil {
			return p, fmt.Errorf("reading resource policy statements: %w", err)
		}
	}
	return p, nil
}

func statementSid(s json.RawMessage) string {
	var v struct{ Sid string }
	_ = json.Unmarshal(s, &v)
	return v.Sid
}

// HasFence reports whether a resource policy document carries a statement
// with one of dynops's fence Sids (dr's or migrate's). Whether the policy
// fences the table is FenceHolds: a statement's Sid proves nothing.
func HasFence(doc string) bool {
	p, err := parsePolicy(doc)
	if err != nil {
		return false
	}
	for _, s := range p.Statement {
		if isFenceSid(statementSid(s)) {
			return true
		}
	}
	return false
}

// FencedActions returns what the fence denies: item writes, table changes,
// and policy changes when a break-glass role is exempt.
func FencedActions(breakGlassRoleARN string) []string {
	out := append(slices.Clone(writeActions), tableActions...)
	if breakGlassRoleARN != "" {
		out = append(out, policyActions...)
	}
	return out
}

// fenceStatement denies the fenced actions on tableARN to every principal
// except the break-glass role (when given) and the replication
// service-linked role of the table's account and partition.
func fenceStatement(tableARN, breakGlassRoleARN, sid string) (json.RawMessage, error) {
	parts := strings.SplitN(tableARN, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" || parts[1] == "" || !regexp.MustCompile(`^[0-9]{12}$`).MatchString(parts[4]) {
		return nil, fmt.Errorf("fencing %q: not a table ARN with a partition and an account (arn:PARTITION:dynamodb:REGION:ACCOUNT:table/NAME)", tableARN)
	}
	if err := ValidateBreakGlassARN(breakGlassRoleARN, tableARN); err != nil {
		return nil, err
	}
	exempt := []string{replicationRoleARN(tableARN)}
	if breakGlassRoleARN != "" {
		exempt = append([]string{breakGlassRoleARN}, exempt...)
	}
	return json.Marshal(map[string]any{
		"Sid":       sid,
		"Effect":    "Deny",
		"Principal": "*",
		"Action":    FencedActions(breakGlassRoleARN),
		"Resource":  tableARN,
		"Condition": map[string]any{"ArnNotLike": map[string]any{"aws:PrincipalArn": exempt}},
	})
}

// FenceHolds reads a resource policy by its content: it fences tableARN when
// one Deny statement, to every principal, covers every action the fence
// denies (item writes and table changes; policy changes too when it exempts
// a role that could lift it) on the table, exempting no one but the
// replication role of the table's account and breakGlass (a role of that
// account; "" : none). Any other exemption is a principal that can still
// write, so the table is not fenced. It returns the holding statement's
// Sid, or why none holds.
func FenceHolds(doc, tableARN, breakGlass string) (bool, string) {
	p, err := parsePolicy(doc)
	if err != nil {
		return false, err.Error()
	}
	if len(p.Statement) == 0 {
		return false, "no resource policy"
	}
	var why []string
	for _, raw := range p.Statement {
		var st struct {
			Sid       string
			Effect    string
			Principal any
			Action    any
			NotAction any
			Resource  any
			Condition map[string]map[string]any
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			why = append(why, "a statement that is not JSON")
			continue
		}
		name := st.Sid
		if name == "" {
			name = "(no Sid)"
		}
		switch {
		case st.Effect != "Deny":
			continue
		case !everyone(st.Principal):
			why = append(why, name+": not every principal")
		case st.NotAction != nil:
			why = append(why, name+": NotAction")
		case !coversAll(strs(st.Action), writeActions):
			why = append(why, name+": does not deny every item write")
		case !coversAll(strs(st.Action), tableActions):
			why = append(why, name+": does not deny "+strings.Join(missing(strs(st.Action), tableActions), ", "))
		case !slices.Contains(strs(st.Resource), tableARN) && !slices.Contains(strs(st.Resource), "*"):
			why = append(why, name+": not on "+tableARN)
		default:
			ok, reason := onlyNamedRoles(st.Condition)
			if ok {
				ok, reason = onlyAllowedExemptions(st.Condition, tableARN, breakGlass)
			}
			if ok && exemptsBreakGlass(st.Condition, breakGlass) && !coversAll(strs(st.Action), policyActions) {
				ok, reason = false, "exempts a role but does not deny "+strings.Join(missing(strs(st.Action), policyActions), ", ")+" to the others: anyone with those rights lifts it"
			}
			if !ok {
				why = append(why, name+": "+reason)
				continue
			}
			return true, name
		}
	}
	if len(why) == 0 {
		return false, "no statement denies item writes"
	}
	return false, strings.Join(why, "; ")
}

func everyone(p any) bool {
	switch v := p.(type) {
	case string:
		return v == "*"
	case map[string]any:
		return slices.Contains(strs(v["AWS"]), "*")
	}
	return false
}

func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// coversAll reports whether actions (as written in a policy) name each of want.
func coversAll(actions, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(actions, func(a string) bool {
			return a == "*" || strings.EqualFold(a, "dynamodb:*") || strings.EqualFold(a, w)
		}) {
			return false
		}
	}
	return true
}

// missing returns the entries of want that actions do not name.
func missing(actions, want []string) []string {
	var out []string
	for _, w := range want {
		if !coversAll(actions, []string{w}) {
			out = append(out, w)
		}
	}
	return out
}

// exemptions lists the principal ARNs the condition exempts.
func exemptions(cond map[string]map[string]any) []string {
	var out []string
	for _, keys := range cond {
		out = append(out, strs(keys["aws:PrincipalArn"])...)
	}
	return out
}

// onlyAllowedExemptions accepts exemptions of the replication role of the
// table's account and of breakGlass (in that account) only.
func onlyAllowedExemptions(cond map[string]map[string]any, tableARN, breakGlass string) (bool, string) {
	for _, a := range exemptions(cond) {
		switch {
		case a == replicationRoleARN(tableARN):
		case breakGlass != "" && a == breakGlass && accountOf(a) == accountOf(tableARN):
		case accountOf(a) != accountOf(tableARN):
			return false, fmt.Sprintf("exempts %q, a role of account %s, not the table's (%s): it can still write", a, accountOf(a), accountOf(tableARN))
		case breakGlass == "":
			return false, fmt.Sprintf("exempts %q, which can still write: no break-glass role was named (pass --break-glass-role-arn %s if it is the break-glass role)", a, a)
		default:
			return false, fmt.Sprintf("exempts %q, which is not the break-glass role %s nor the replication role: it can still write", a, breakGlass)
		}
	}
	return true, ""
}

// exemptsBreakGlass reports whether the condition exempts a role other
// than the replication role.
func exemptsBreakGlass(cond map[string]map[string]any, breakGlass string) bool {
	return breakGlass != "" && slices.Contains(exemptions(cond), breakGlass)
}

// onlyNamedRoles accepts no condition, or ArnNotLike/ArnNotEquals on
// aws:PrincipalArn listing IAM role ARNs without wildcards.
func onlyNamedRoles(cond map[string]map[string]any) (bool, string) {
	for op, keys := range cond {
		if op != "ArnNotLike" && op != "ArnNotEquals" {
			return false, "condition " + op + " can switch the deny off"
		}
		for key, v := range keys {
			if key != "aws:PrincipalArn" {
				return false, "condition on " + key + " can switch the deny off"
			}
			for _, a := range strs(v) {
				if strings.ContainsAny(a, "*?") || !roleARN.MatchString(a) {
					return false, fmt.Sprintf("exempts %q, which is not one named IAM role", a)
				}
			}
		}
	}
	return true, ""
}

// WithFence returns doc with the fence statement added (replacing an older fence).
func WithFence(doc, tableARN, breakGlassRoleARN string) (string, error) {
	return withFence(doc, tableARN, breakGlassRoleARN, FenceSid)
}

// withFence is WithFence with the fence statement's Sid (FenceSid or FailbackFenceSid).
func withFence(doc, tableARN, breakGlassRoleARN, sid string) (string, error) {
	p, err := parsePolicy(doc)
	if err != nil {
		return "", err
	}
	st, err := fenceStatement(tableARN, breakGlassRoleARN, sid)
	if err != nil {
		return "", err
	}
	kept := withoutFence(p.Statement, ownerOf(sid))
	p.Statement = append(kept, st)
	out, err := json.Marshal(p)
	return string(out), err
}

// WithoutFence returns doc without dr's fence statements; "" when nothing is left.
func WithoutFence(doc string) (string, error) { return withoutOwnFence(doc, OwnerDR) }

// withoutOwnFence returns doc without owner's fence statements (another
// owner's stay); "" when nothing is left.
func withoutOwnFence(doc string, owner Owner) (string, error) {
	p, err := parsePolicy(doc)
	if err != nil {
		return "", err
	}
	p.Statement = withoutFence(p.Statement, owner)
	if len(p.Statement) == 0 {
		return "", nil
	}
	out, err := json.Marshal(p)
	return string(out), err
}

func withoutFence(sts []json.RawMessage, owner Owner) []json.RawMessage {
	var kept []json.RawMessage
	for _, s := range sts {
		if ownerOf(statementSid(s)) != owner {
			kept = append(kept, s)
		}
	}
	return kept
}

// ResourcePolicy returns the table's resource policy and its revision ("" when there is none).
func ResourcePolicy(ctx context.Context, db DynamoDB, tableARN string) (doc, revision string, err error) {
	out, err := db.GetResourcePolicy(ctx, &dynamodb.GetResourcePolicyInput{ResourceArn: &tableARN})
	if err != nil {
		if apiCode(err) == "PolicyNotFoundException" {
			return "", "", nil
		}
		return "", "", fmt.Errorf("reading the resource policy of %s: %w", tableARN, err)
	}
	return aws.ToString(out.Policy), aws.ToString(out.RevisionId), nil
}

// ErrPolicyChanged is a policy update refused because the policy is no
// longer the revision read before (a concurrent edit): nothing was lost.
var ErrPolicyChanged = errors.New("the resource policy changed since it was read")

// setPolicy writes doc as the table's resource policy, or deletes the policy
// when doc is "", only if the policy is still at revision expected (the one
// read before; "" = there was none): a concurrent edit is refused, never
// overwritten. confirmSelf lets a policy deny the caller further policy
// changes (the fence with a break-glass role, which keeps them). It returns
// the new revision ("" after a delete). DynamoDB refuses a policy change
// within 15 s of the last one; setPolicy waits and retries for up to a minute.
func setPolicy(ctx context.Context, db DynamoDB, tableARN, doc, expected string, confirmSelf bool) (string, error) {
	if len(doc) > MaxPolicyBytes {
		return "", fmt.Errorf("the resource policy for %s would be %d bytes, over DynamoDB's %d-byte limit: shorten the table's own statements", tableARN, len(doc), MaxPolicyBytes)
	}
	var rev string
	var busy error // the last refusal that a later attempt may not meet
	err := poll.Until(ctx, poll.Options{Interval: 3 * time.Second, Timeout: time.Minute, What: "DynamoDB to accept a change of the resource policy of " + tableARN},
		func(ctx context.Context) (bool, string, error) {
			r, err := writePolicy(ctx, db, tableARN, doc, expected, confirmSelf)
			switch apiCode(err) {
			case "ResourceInUseException", "LimitExceededException", "ThrottlingException":
				busy = err
				return false, apiCode(err), nil
			}
			if err != nil && !errors.Is(err, ErrPolicyChanged) {
				return false, "", fmt.Errorf("writing the resource policy of %s: %w", tableARN, err)
			}
			rev = r
			return err == nil, "", err
		})
	if errors.Is(err, poll.ErrTimeout) && busy != nil {
		return "", fmt.Errorf("writing the resource policy of %s: %w", tableARN, busy)
	}
	return rev, err
}

// writePolicy is one attempt of setPolicy.
func writePolicy(ctx context.Context, db DynamoDB, tableARN, doc, expected string, confirmSelf bool) (string, error) {
	var err error
	var rev string
	switch {
	case doc == "" && expected == "":
		return "", nil // no policy before, none wanted
	case doc == "":
		_, err = db.DeleteResourcePolicy(ctx, &dynamodb.DeleteResourcePolicyInput{ResourceArn: &tableARN, ExpectedRevisionId: &expected})
		err = permissions.Explain(err, "dynamodb:DeleteResourcePolicy")
	default:
		want := expected
		if want == "" {
			want = "NO_POLICY"
		}
		in := &dynamodb.PutResourcePolicyInput{ResourceArn: &tableARN, Policy: &doc, ExpectedRevisionId: &want}
		if confirmSelf {
			in.ConfirmRemoveSelfResourceAccess = true
		}
		var out *dynamodb.PutResourcePolicyOutput
		if out, err = db.PutResourcePolicy(ctx, in); err == nil {
			rev = aws.ToString(out.RevisionId)
		}
		err = permissions.Explain(err, "dynamodb:PutResourcePolicy")
	}
	if err == nil {
		return rev, nil
	}
	switch apiCode(err) {
	case "PolicyNotFoundException", "ResourceNotFoundException":
		// The SDK retries a change whose answer was lost; when the first
		// attempt had landed, the retry is refused (the revision moved on,
		// or the policy is gone). The change took when the policy now is
		// the one wanted (read back).
		if cur, curRev, rerr := ResourcePolicy(ctx, db, tableARN); rerr == nil && samePolicy(cur, doc) {
			return curRev, nil
		}
	}
	if apiCode(err) == "PolicyNotFoundException" {
		return "", fmt.Errorf("%w: %s is no longer at revision %q (someone changed it): run the command again to work on the current policy: %v", ErrPolicyChanged, tableARN, expected, err)
	}
	return "", err
}

// samePolicy compares two policy documents ("" is none), whitespace aside.
func samePolicy(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, []byte(a)) != nil || json.Compact(&cb, []byte(b)) != nil {
		return a == b
	}
	return ca.String() == cb.String()
}

// readBacks is how many reads in a row must show a policy change: the
// resource policy applies eventually, and one read may see an old copy.
const readBacks = 3

// awaitPolicy reads the table's policy until readBacks reads in a row show
// revision rev (any revision when rev is "": a delete) and ok(doc) holds, or
// timeout passes. It returns the last document read.
func awaitPolicy(ctx context.Context, db DynamoDB, tableARN, rev string, ok func(doc string) bool, interval, timeout time.Duration) (string, error) {
	streak := 0
	var doc, got string
	err := poll.Until(ctx, poll.Options{Interval: interval, Timeout: timeout, What: "the resource policy of " + tableARN},
		func(ctx context.Context) (bool, string, error) {
			var err error
			if doc, got, err = ResourcePolicy(ctx, db, tableARN); err != nil {
				return false, "", err
			}
			if (rev == "" || got == rev) && ok(doc) {
				streak++
			} else {
				streak = 0
			}
			return streak >= readBacks, "revision " + got, nil
		})
	if errors.Is(err, poll.ErrTimeout) {
		return doc, fmt.Errorf("the policy of %s read back for %s did not show the change %d times in a row (last revision %q, want %q)", tableARN, timeout, readBacks, got, rev)
	}
	return doc, err
}

func apiCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}
