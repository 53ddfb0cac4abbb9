package securityhub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	sh "github.com/aws/aws-sdk-go-v2/service/securityhub"
	"github.com/aws/aws-sdk-go-v2/service/securityhub/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/securityhub"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// counting passes every call to the real client and records the size of
// each BatchImportFindings request.
type counting struct {
	*sh.Client
	batches []int
}

func (c *counting) BatchImportFindings(ctx context.Context, in *sh.BatchImportFindingsInput, o ...func(*sh.Options)) (*sh.BatchImportFindingsOutput, error) {
	c.batches = append(c.batches, len(in.Findings))
	return c.Client.BatchImportFindings(ctx, in, o...)
}

// TestImportBatchesOf100AndReadsBack: 250 findings go in batches of 100,
// 100, 50, and all 250 are read back (GetFindings pages of 100) with the
// status sent; a finding without an ARN is refused before anything is sent.
func TestImportBatchesOf100AndReadsBack(t *testing.T) {
	ctx := context.Background()
	account := target.AccountID(t)
	tg := securityhub.Target{Partition: "aws", Region: target.Region, Account: account}
	api := &counting{Client: sh.NewFromConfig(target.AWSConfig(t))}
	run := harness.UniqueID()
	var fs []guideline.Finding
	var tables []string
	for i := range 250 {
		name := fmt.Sprintf("dev-%s-t%03d", run, i)
		st := guideline.Fail
		if i%2 == 0 {
			st = guideline.Pass
		}
		tables = append(tables, name)
		fs = append(fs, guideline.Finding{Table: name, Resource: name, Rule: guideline.Pitr01, Severity: guideline.Error, Status: st,
			Message: "m", Guideline: guideline.DocLink(guideline.Pitr01), ARN: fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", target.Region, account, name)})
	}
	res, err := securityhub.Import(ctx, api, tg, tables, fs, time.Now(), nil)
	require.NoError(t, err)
	assert.Equal(t, []int{100, 100, 50}, api.batches)
	assert.Equal(t, 250, res.Imported)
	assert.Equal(t, 125, res.Failed)
	assert.Equal(t, 125, res.Passed)

	got, err := securityhub.Existing(ctx, api, tg)
	require.NoError(t, err)
	for _, f := range fs {
		g, ok := got[securityhub.FindingID(f)]
		require.True(t, ok, f.Resource)
		want := types.ComplianceStatusFailed
		if f.Status == guideline.Pass {
			want = types.ComplianceStatusPassed
		}
		assert.Equal(t, want, g.Compliance.Status)
	}

	api.batches = nil
	noARN := fs[1]
	noARN.ARN = ""
	_, err = securityhub.Import(ctx, api, tg, tables, append([]guideline.Finding{fs[0]}, noARN), time.Now(), nil)
	require.ErrorContains(t, err, "has no ARN")
	assert.Empty(t, api.batches, "nothing is sent when one finding cannot be imported")
}

func TestProductARN(t *testing.T) {
	assert.Equal(t, "arn:aws:securityhub:eu-west-1:111111111111:product/111111111111/default",
		securityhub.Target{Partition: "aws", Region: "eu-west-1", Account: "111111111111"}.ProductARN())
}
