package failover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
)

// FenceSid is the Sid of the statement dynops adds to a table's resource
// policy to fence writes in a region; `dynops dr status` recognises it.
const FenceSid = "DynopsDRFenceWrites"

// fencedActions are the item writes the fence denies. TransactWriteItems is
// authorised per item as PutItem, UpdateItem or DeleteItem.
var fencedActions = []string{
	"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem",
	"dynamodb:PartiQLInsert", "dynamodb:PartiQLUpdate", "dynamodb:PartiQLDelete",
}

// replicationRole is the service-linked role global tables replicate with:
// denying it writes would stop replication (REPLICATION_NOT_AUTHORIZED), so
// the fence always exempts it.
const replicationRole = "role/aws-service-role/replication.dynamodb.amazonaws.com/AWSServiceRoleForDynamoDBReplication"

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

// HasFence reports whether a resource policy document carries the fence.
func HasFence(doc string) bool {
	p, err := parsePolicy(doc)
	if err != nil {
		return false
	}
	for _, s := range p.Statement {
		if statementSid(s) == FenceSid {
			return true
		}
	}
	return false
}

// fenceStatement denies item writes on tableARN to every principal except the
// break-glass role (when given) and the replication service-linked role.
func fenceStatement(tableARN, breakGlassRoleARN string) (json.RawMessage, error) {
	account := "*"
	if parts := strings.Split(tableARN, ":"); len(parts) > 4 && parts[4] != "" {
		account = parts[4]
	}
	exempt := []string{"arn:aws:iam::" + account + ":" + replicationRole}
	if breakGlassRoleARN != "" {
		exempt = append([]string{breakGlassRoleARN}, exempt...)
	}
	return json.Marshal(map[string]any{
		"Sid":       FenceSid,
		"Effect":    "Deny",
		"Principal": "*",
		"Action":    fencedActions,
		"Resource":  tableARN,
		"Condition": map[string]any{"ArnNotLike": map[string]any{"aws:PrincipalArn": exempt}},
	})
}

// WithFence returns doc with the fence statement added (replacing an older fence).
func WithFence(doc, tableARN, breakGlassRoleARN string) (string, error) {
	p, err := parsePolicy(doc)
	if err != nil {
		return "", err
	}
	st, err := fenceStatement(tableARN, breakGlassRoleARN)
	if err != nil {
		return "", err
	}
	kept := withoutFence(p.Statement)
	p.Statement = append(kept, st)
	out, err := json.Marshal(p)
	return string(out), err
}

// WithoutFence returns doc without the fence statement; "" when nothing is left.
func WithoutFence(doc string) (string, error) {
	p, err := parsePolicy(doc)
	if err != nil {
		return "", err
	}
	p.Statement = withoutFence(p.Statement)
	if len(p.Statement) == 0 {
		return "", nil
	}
	out, err := json.Marshal(p)
	return string(out), err
}

func withoutFence(sts []json.RawMessage) []json.RawMessage {
	var kept []json.RawMessage
	for _, s := range sts {
		if statementSid(s) != FenceSid {
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

// setPolicy writes doc as the table's resource policy, or deletes the policy
// when doc is "". DynamoDB refuses a policy change within 15 s of the last
// one; setPolicy waits and retries for up to a minute.
func setPolicy(ctx context.Context, db DynamoDB, tableARN, doc string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		var err error
		if doc == "" {
			_, err = db.DeleteResourcePolicy(ctx, &dynamodb.DeleteResourcePolicyInput{ResourceArn: &tableARN})
			if apiCode(err) == "PolicyNotFoundException" {
				err = nil
			}
		} else {
			_, err = db.PutResourcePolicy(ctx, &dynamodb.PutResourcePolicyInput{ResourceArn: &tableARN, Policy: &doc})
		}
		if err == nil {
			return nil
		}
		switch apiCode(err) {
		case "ResourceInUseException", "LimitExceededException", "ThrottlingException":
			if time.Now().Before(deadline) {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(3 * time.Second):
					continue
				}
			}
		}
		return fmt.Errorf("writing the resource policy of %s: %w", tableARN, err)
	}
}

func apiCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}
