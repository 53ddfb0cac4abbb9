package check_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	sh "github.com/aws/aws-sdk-go-v2/service/securityhub"
	shtypes "github.com/aws/aws-sdk-go-v2/service/securityhub/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/securityhub"
	"github.com/dynops/dynops/test/helpers/harness"
)

// updateWatch forwards every Security Hub call to the emulator and counts
// BatchUpdateFindings requests (PATCH /findings/batchupdate): dynops must
// never make one, since its only resource is the hub, where it reaches every
// product's findings.
type updateWatch struct{ updates atomic.Int32 }

func (s *updateWatch) handler(t *testing.T, emulator string) http.Handler {
	u, err := url.Parse(emulator)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/findings/batchupdate" {
			s.updates.Add(1)
		}
		proxy.ServeHTTP(w, r)
	})
}

// TestCheckToSecurityHubRoundTrip: check --to-security-hub imports every
// finding in ASFF (read back from the emulator's Security Hub); after the
// table is fixed, a second run re-imports the same Ids as PASSED and closes
// them (ARCHIVED); a dropped index's finding is archived; a closed finding
// stays closed while it passes and comes back ACTIVE when it fails again.
// No run calls BatchUpdateFindings.
func TestCheckToSecurityHubRoundTrip(t *testing.T) {
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	hub := sh.NewFromConfig(cfg)
	if target.OnEmulator() {
		watch := &updateWatch{}
		srv := httptest.NewServer(watch.handler(t, target.Endpoint()))
		t.Cleanup(srv.Close)
		t.Setenv("AWS_ENDPOINT_URL_SECURITYHUB", srv.URL)
		t.Cleanup(func() {
			assert.Zero(t, watch.updates.Load(), "dynops called BatchUpdateFindings")
		})
	}

	db := dynamodb.NewFromConfig(cfg)
	name := "dev-" + harness.UniqueID() + "-hub"
	createTable(t, db, &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("user_id"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("email"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("user_id"), KeyType: types.KeyTypeHash}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("email-index"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("email"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}},
	})
	t.Cleanup(func() {
		_, _ = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name), DeletionProtectionEnabled: aws.Bool(false)})
		_, _ = db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	require.NoError(t, err)
	arn := aws.ToString(desc.Table.TableArn)
	account := target.AccountID(t)
	product := securityhub.Target{Partition: "aws", Region: target.Region, Account: account}.ProductARN()
	protID := securityhub.GeneratorPrefix + "DDB-PROT-01/" + arn
	indexID := securityhub.GeneratorPrefix + "DDB-NAME-02/" + arn + "/index/email-index"

	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	out, errOut, code := target.Dynops(t, audit, "check", "--table", name, "--to-security-hub", "-o", "json")
	assert.Equal(t, 1, code, "the check still fails on its rules: %s", errOut)
	var rep struct {
		Findings    []json.RawMessage
		SecurityHub securityhub.Result `json:"security_hub"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, len(rep.Findings), rep.SecurityHub.Imported, "every finding, passing ones too, is imported")
	assert.Equal(t, product, rep.SecurityHub.ProductARN)

	hubFindings := func() map[string]shtypes.AwsSecurityFinding {
		got, err := securityhub.Existing(ctx, hub, securityhub.Target{Partition: "aws", Region: target.Region, Account: account})
		require.NoError(t, err)
		return got
	}
	first := hubFindings()
	prot, ok := first[protID]
	require.True(t, ok, "DDB-PROT-01 is in Security Hub under its stable Id")
	assert.Equal(t, shtypes.ComplianceStatusFailed, prot.Compliance.Status)
	assert.Contains(t, prot.Compliance.RelatedRequirements, "AWS Security Hub DynamoDB.6")
	assert.Equal(t, arn, aws.ToString(prot.Resources[0].Id))
	assert.Equal(t, "AwsDynamoDbTable", aws.ToString(prot.Resources[0].Type))
	for _, f := range first {
		for name, v := range map[string]*string{"SchemaVersion": f.SchemaVersion, "Id": f.Id, "ProductArn": f.ProductArn, "GeneratorId": f.GeneratorId,
			"AwsAccountId": f.AwsAccountId, "CreatedAt": f.CreatedAt, "UpdatedAt": f.UpdatedAt, "Title": f.Title, "Description": f.Description} {
			assert.NotEmpty(t, aws.ToString(v), "ASFF required attribute %s of %s", name, aws.ToString(f.Id))
		}
		assert.NotEmpty(t, f.Types, "Types")
		assert.NotEmpty(t, f.Resources, "Resources")
		assert.NotEmpty(t, f.Severity.Label, "Severity.Label")
		assert.Equal(t, account, aws.ToString(f.AwsAccountId))
	}
	require.Contains(t, first, indexID)

	// Fix deletion protection and drop the badly named index, then re-run.
	_, err = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name), DeletionProtectionEnabled: aws.Bool(true)})
	require.NoError(t, err)
	_, err = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String("email-index")}}}})
	require.NoError(t, err)

	hubResult := func() securityhub.Result {
		t.Helper()
		out, errOut, _ := target.Dynops(t, audit, "check", "--table", name, "--to-security-hub", "-o", "json")
		assert.Contains(t, errOut, "Security Hub ("+product+")")
		var rep struct {
			SecurityHub securityhub.Result `json:"security_hub"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rep))
		return rep.SecurityHub
	}
	res := hubResult()
	second := hubFindings()
	prot = second[protID]
	assert.Equal(t, shtypes.ComplianceStatusPassed, prot.Compliance.Status, "the fixed rule is PASSED under the same Id")
	assert.Equal(t, shtypes.RecordStateArchived, prot.RecordState, "and closed: ARCHIVED")
	assert.Equal(t, aws.ToString(first[protID].CreatedAt), aws.ToString(prot.CreatedAt), "CreatedAt is kept on update")
	assert.Equal(t, shtypes.RecordStateArchived, second[indexID].RecordState, "the dropped index's finding is archived")
	onIndex := 0
	for id := range first {
		if strings.HasSuffix(id, "/index/email-index") {
			onIndex++
		}
	}
	assert.Equal(t, onIndex, res.Archived, "every finding of the dropped index is archived")
	assert.GreaterOrEqual(t, res.Resolved, 1, "the fixed DDB-PROT-01 is closed")

	// A third run changes nothing it does not need to: nothing left to close,
	// and the closed finding stays ARCHIVED while it passes.
	res = hubResult()
	assert.Zero(t, res.Resolved, "closed findings are not closed again")
	assert.Zero(t, res.Archived, "archived findings are not archived again")
	assert.Equal(t, shtypes.RecordStateArchived, hubFindings()[protID].RecordState)

	// Broken again: the same Id comes back FAILED and ACTIVE.
	_, err = db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name), DeletionProtectionEnabled: aws.Bool(false)})
	require.NoError(t, err)
	hubResult()
	prot = hubFindings()[protID]
	assert.Equal(t, shtypes.ComplianceStatusFailed, prot.Compliance.Status)
	assert.Equal(t, shtypes.RecordStateActive, prot.RecordState, "a failing rule is an active finding again")
}
