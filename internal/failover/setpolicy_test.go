package failover

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// policyDB holds one table's resource policy; its writes can land and
// still answer an error (a retry whose first attempt landed).
type policyDB struct {
	DynamoDB
	doc, rev string
	land     bool  // the change lands before writeErr is answered
	writeErr error // answered by Put/DeleteResourcePolicy
	getErr   error
	expected []string // the ExpectedRevisionId of each PutResourcePolicy
	confirm  []bool   // the ConfirmRemoveSelfResourceAccess of each PutResourcePolicy
	gets     int      // GetResourcePolicy calls
	deletes  int      // DeleteResourcePolicy calls
}

func (d *policyDB) PutResourcePolicy(_ context.Context, in *dynamodb.PutResourcePolicyInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutResourcePolicyOutput, error) {
	d.expected = append(d.expected, aws.ToString(in.ExpectedRevisionId))
	d.confirm = append(d.confirm, in.ConfirmRemoveSelfResourceAccess)
	if d.land {
		d.doc, d.rev = aws.ToString(in.Policy), "rev-2"
	}
	return &dynamodb.PutResourcePolicyOutput{RevisionId: aws.String(d.rev)}, d.writeErr
}

func (d *policyDB) DeleteResourcePolicy(context.Context, *dynamodb.DeleteResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteResourcePolicyOutput, error) {
	d.deletes++
	if d.land {
		d.doc, d.rev = "", ""
	}
	return &dynamodb.DeleteResourcePolicyOutput{}, d.writeErr
}

func (d *policyDB) GetResourcePolicy(context.Context, *dynamodb.GetResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.GetResourcePolicyOutput, error) {
	d.gets++
	if d.getErr != nil {
		return nil, d.getErr
	}
	if d.doc == "" {
		return nil, &smithy.GenericAPIError{Code: "PolicyNotFoundException"}
	}
	return &dynamodb.GetResourcePolicyOutput{Policy: aws.String(d.doc), RevisionId: aws.String(d.rev)}, nil
}

// A policy change whose first attempt landed and whose retry was refused
// (the revision moved on, the policy is gone) took, when the policy read
// back is the one wanted; anything else is still refused.
func TestSetPolicyRetriedChange(t *testing.T) {
	const fence = `{"Version":"2012-10-17","Statement":[{"Sid":"DynopsDRFenceWrites","Effect":"Deny"}]}`
	const spaced = "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [{\"Sid\": \"DynopsDRFenceWrites\", \"Effect\": \"Deny\"}]\n}"
	notFound := &smithy.GenericAPIError{Code: "ResourceNotFoundException"}
	changed := &smithy.GenericAPIError{Code: "PolicyNotFoundException"}
	cases := []struct {
		name    string
		db      *policyDB
		doc     string
		wantRev string
		wantErr string
	}{
		{"fence put landed, retry refused (revision moved)", &policyDB{land: true, writeErr: changed}, fence, "rev-2", ""},
		{"fence put landed, read back with other whitespace", &policyDB{land: true, writeErr: changed}, spaced, "rev-2", ""},
		{"unfence delete landed, retry: not found", &policyDB{doc: fence, rev: "rev-1", land: true, writeErr: notFound}, "", "", ""},
		{"someone else's policy: refused", &policyDB{doc: `{"Version":"2012-10-17","Statement":[]}`, rev: "rev-9", writeErr: changed}, fence, "", "changed since it was read"},
		{"delete refused, the policy is still there", &policyDB{doc: fence, rev: "rev-1", writeErr: notFound}, "", "", "ResourceNotFoundException"},
		{"the table is gone: not read as done", &policyDB{doc: fence, rev: "rev-1", writeErr: notFound, getErr: notFound}, "", "", "ResourceNotFoundException"},
		{"another error is not read back", &policyDB{land: true, writeErr: errors.New("AccessDenied")}, fence, "", "AccessDenied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expected := c.db.rev
			rev, err := setPolicy(context.Background(), c.db, "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-session", c.doc, expected, false)
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.wantRev, rev)
		})
	}
}
