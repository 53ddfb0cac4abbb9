package check_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
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

// batchUpdateShim forwards every Security Hub call to the emulator, except
// BatchUpdateFindings (PATCH /findings/batchupdate), which moto 5.2.1 does
// not implement (404, measured): the shim applies the workflow update to the
// emulator's stored finding through GetFindings + BatchImportFindings, and
// records the identifiers it was asked to resolve. Everything else is the
// emulator's own behaviour over HTTP.
type batchUpdateShim struct {
	hub      *sh.Client
	resolved []string
}

func (s *batchUpdateShim) handler(t *testing.T, emulator string) http.Handler {
	u, err := url.Parse(emulator)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPatch || r.URL.Path != "/findings/batchupdate" {
			proxy.ServeHTTP(w, r)
			return
		}
		var in struct {
			FindingIdentifiers []struct{ Id, ProductArn string }
			Workflow           struct{ Status string }
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		all, err := s.hub.GetFindings(r.Context(), &sh.GetFindingsInput{})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		byID := map[string]shtypes.AwsSecurityFinding{}
		for _, f := range all.Findings {
			byID[aws.ToString(f.Id)] = f
		}
		var update []shtypes.AwsSecurityFinding
		var processed []map[string]string
		for _, id := range in.FindingIdentifiers {
			f, ok := byID[id.Id]
			if !ok {
				continue
			}
			f.Workflow = &shtypes.Workflow{Status: shtypes.WorkflowStatus(in.Workflow.Status)}
			update = append(update, f)
			processed = append(processed, map[string]string{"Id": id.Id, "ProductArn": id.ProductArn})
			s.resolved = append(s.resolved, id.Id)
		}
		if len(update) > 0 {
			if _, err := s.hub.BatchImportFindings(r.Context(), &sh.BatchImportFindingsInput{Findings: update}); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"ProcessedFindings": processed, "UnprocessedFindings": []any{}})
	})
}

// TestCheckToSecurityHubRoundTrip_BatchUpdateShimmed: check --to-security-hub
// imports every finding in ASFF (read back from the emulator's Security
// Hub); after the table is fixed, a second run re-imports the same Ids as
// PASSED and resolves them; a dropped index's finding is archived. Only
// BatchUpdateFindings goes through the shim above (moto lacks it).
func TestCheckToSecurityHubRoundTrip_BatchUpdateShimmed(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("the shim stands in for moto's missing BatchUpdateFindings; on AWS, TestCheckToSecurityHub covers the real call")
	}
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	hub := sh.NewFromConfig(cfg)
	shim := &batchUpdateShim{hub: hub}
	srv := httptest.NewServer(shim.handler(t, target.Endpoint()))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_SECURITYHUB", srv.URL)

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

	_, errOut, _ = target.Dynops(t, audit, "check", "--table", name, "--to-security-hub")
	assert.Contains(t, errOut, "Security Hub ("+product+")")
	second := hubFindings()
	prot = second[protID]
	assert.Equal(t, shtypes.ComplianceStatusPassed, prot.Compliance.Status, "the fixed rule is PASSED under the same Id")
	require.NotNil(t, prot.Workflow)
	assert.Equal(t, shtypes.WorkflowStatusResolved, prot.Workflow.Status, "and RESOLVED")
	assert.Equal(t, aws.ToString(first[protID].CreatedAt), aws.ToString(prot.CreatedAt), "CreatedAt is kept on update")
	assert.Equal(t, shtypes.RecordStateArchived, second[indexID].RecordState, "the dropped index's finding is archived")
	assert.Contains(t, shim.resolved, protID)
	assert.Contains(t, shim.resolved, indexID)

	// A third run changes nothing it does not need to: nothing left to resolve.
	shim.resolved = nil
	_, _, _ = target.Dynops(t, audit, "check", "--table", name, "--to-security-hub")
	assert.Empty(t, shim.resolved, "resolved findings are not resolved again")
}
