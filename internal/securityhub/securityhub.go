// Package securityhub imports `dynops check` findings into AWS Security Hub
// in the AWS Security Finding Format (ASFF), as a custom integration
// (product ARN arn:PARTITION:securityhub:REGION:ACCOUNT:product/ACCOUNT/default).
//
// Every evaluated finding is imported, passing ones too, under an Id that is
// stable across runs (rule and resource ARN): a failing rule is
// Compliance FAILED; a fixed one is closed: re-imported as PASSED and
// ARCHIVED; an exception is WARNING with its reason. A finding of a checked
// table that no longer exists in this run (a dropped index or replica) is
// ARCHIVED. A rule that passes at its first import is created PASSED with
// its workflow RESOLVED (honoured on creation).
//
// dynops writes only through BatchImportFindings, which IAM binds to its
// own product (product/ACCOUNT/default): it never calls BatchUpdateFindings,
// whose only resource is the hub, so the role that runs `check
// --to-security-hub` needs no right that could suppress or downgrade another
// product's findings (GuardDuty's, Config's, the DynamoDB.* controls'). A
// failing rule archived earlier comes back ACTIVE, which Security Hub answers
// by setting its workflow to NEW again. Imports go in batches of 100, and
// the result is read back with GetFindings before it is reported.
package securityhub

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sh "github.com/aws/aws-sdk-go-v2/service/securityhub"
	"github.com/aws/aws-sdk-go-v2/service/securityhub/types"

	"github.com/dynops/dynops/internal/guideline"
)

// BatchSize is the most findings one BatchImportFindings call takes.
const BatchSize = 100

// SchemaVersion of ASFF.
const SchemaVersion = "2018-10-08"

// GeneratorPrefix starts the GeneratorId of every finding dynops imports.
const GeneratorPrefix = "dynops/"

// Product fields dynops sets on its findings.
const (
	FieldTable    = "dynops/table"
	FieldResource = "dynops/resource"
	FieldRule     = "dynops/rule"
)

// API is the part of the Security Hub client the import uses.
type API interface {
	BatchImportFindings(context.Context, *sh.BatchImportFindingsInput, ...func(*sh.Options)) (*sh.BatchImportFindingsOutput, error)
	GetFindings(context.Context, *sh.GetFindingsInput, ...func(*sh.Options)) (*sh.GetFindingsOutput, error)
}

// Target is where findings go.
type Target struct {
	Partition, Region, Account string
}

// ProductARN is the custom integration's product ARN in the target.
func (t Target) ProductARN() string {
	return fmt.Sprintf("arn:%s:securityhub:%s:%s:product/%s/default", t.Partition, t.Region, t.Account, t.Account)
}

// Result counts what an import did, as read back from Security Hub.
type Result struct {
	ProductARN string `json:"product_arn"`
	Imported   int    `json:"imported"`
	Failed     int    `json:"failed"`    // Compliance FAILED
	Passed     int    `json:"passed"`    // Compliance PASSED
	Warning    int    `json:"exception"` // Compliance WARNING (an exception)
	Resolved   int    `json:"resolved"`  // fixed findings closed this run: PASSED and ARCHIVED
	Archived   int    `json:"archived"`  // findings of resources gone from a checked table
}

// FindingID is the Security Hub Id of a finding: stable across runs, one per
// rule and resource (Finding.Key).
func FindingID(f guideline.Finding) string {
	return GeneratorPrefix + f.Rule + "/" + f.Key()
}

func severity(f guideline.Finding) types.SeverityLabel {
	if f.Status != guideline.Fail {
		return types.SeverityLabelInformational
	}
	switch f.Severity {
	case guideline.Error:
		return types.SeverityLabelMedium
	case guideline.Warning:
		return types.SeverityLabelLow
	}
	return types.SeverityLabelInformational
}

func compliance(s guideline.Status) types.ComplianceStatus {
	switch s {
	case guideline.Pass:
		return types.ComplianceStatusPassed
	case guideline.Exception:
		return types.ComplianceStatusWarning
	}
	return types.ComplianceStatusFailed
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// regionOf returns the region of an ARN (arn:partition:service:region:...).
func regionOf(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return ""
	}
	return parts[3]
}

// ASFF returns f as an ASFF finding for t; createdAt is the existing
// finding's creation time (zero: a new finding).
func ASFF(t Target, f guideline.Finding, now, createdAt time.Time) (types.AwsSecurityFinding, error) {
	if f.ARN == "" {
		return types.AwsSecurityFinding{}, fmt.Errorf("finding %s on %s has no ARN (the table's ARN was not read); Security Hub needs the resource's ARN", f.Rule, f.Resource)
	}
	if createdAt.IsZero() {
		createdAt = now
	}
	title := f.Rule
	if r, ok := guideline.RuleByID(f.Rule); ok {
		title += " " + r.Title
	}
	desc := f.Resource + ": " + f.Message
	if f.Reason != "" {
		desc += " (exception: " + f.Reason + ")"
	}
	resType := "AwsDynamoDbTable"
	if strings.Contains(f.ARN, "/index/") || f.Resource != f.Table && !strings.HasPrefix(f.Resource, f.Table+"@") {
		resType = "Other"
	}
	sev := severity(f)
	types_ := []string{"Software and Configuration Checks/Industry and Regulatory Standards/dynops DynamoDB guideline"}
	c := &types.Compliance{Status: compliance(f.Status), RelatedRequirements: guideline.ControlIDs(f.Rule)}
	if f.Reason != "" {
		c.StatusReasons = []types.StatusReason{{ReasonCode: aws.String("DYNOPS_EXCEPTION"), Description: aws.String(truncate(f.Reason, 2048))}}
	}
	out := types.AwsSecurityFinding{
		SchemaVersion: aws.String(SchemaVersion),
		Id:            aws.String(FindingID(f)),
		ProductArn:    aws.String(t.ProductARN()),
		GeneratorId:   aws.String(GeneratorPrefix + f.Rule),
		AwsAccountId:  aws.String(t.Account),
		Types:         types_,
		CreatedAt:     aws.String(createdAt.UTC().Format(time.RFC3339Nano)),
		UpdatedAt:     aws.String(now.UTC().Format(time.RFC3339Nano)),
		Severity:      &types.Severity{Label: sev},
		FindingProviderFields: &types.FindingProviderFields{
			Severity: &types.FindingProviderSeverity{Label: sev, Original: aws.String(string(f.Severity))},
			Types:    types_,
		},
		Title:         aws.String(truncate(title, 256)),
		Description:   aws.String(truncate(desc, 1024)),
		Remediation:   &types.Remediation{Recommendation: &types.Recommendation{Text: aws.String(truncate(f.Message+" See "+f.Guideline+" in the dynops repository.", 512))}},
		ProductFields: map[string]string{FieldTable: f.Table, FieldResource: f.Resource, FieldRule: f.Rule},
		Resources: []types.Resource{{
			Type: aws.String(resType), Id: aws.String(f.ARN), Partition: types.Partition(partitionOf(f.ARN)), Region: aws.String(regionOf(f.ARN)),
		}},
		Compliance:  c,
		RecordState: types.RecordStateActive,
	}
	if f.Status == guideline.Pass {
		// Honoured on creation only; an existing fixed finding is archived (Import).
		out.Workflow = &types.Workflow{Status: types.WorkflowStatusResolved}
	} else {
		out.Workflow = &types.Workflow{Status: types.WorkflowStatusNew}
	}
	return out, nil
}

func partitionOf(arn string) string {
	parts := strings.SplitN(arn, ":", 3)
	if len(parts) < 3 || parts[1] == "" {
		return "aws"
	}
	return parts[1]
}

// Existing returns dynops's findings in t's product, by Id.
func Existing(ctx context.Context, api API, t Target) (map[string]types.AwsSecurityFinding, error) {
	out := map[string]types.AwsSecurityFinding{}
	in := &sh.GetFindingsInput{
		Filters: &types.AwsSecurityFindingFilters{
			ProductArn:  []types.StringFilter{{Comparison: types.StringFilterComparisonEquals, Value: aws.String(t.ProductARN())}},
			GeneratorId: []types.StringFilter{{Comparison: types.StringFilterComparisonPrefix, Value: aws.String(GeneratorPrefix)}},
		},
		MaxResults: aws.Int32(100),
	}
	p := sh.NewGetFindingsPaginator(api, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("read dynops's findings from Security Hub (GetFindings, product %s): %w", t.ProductARN(), err)
		}
		for _, f := range page.Findings {
			// Filter again here: the filter is the service's, the decision is ours.
			if aws.ToString(f.ProductArn) == t.ProductARN() && strings.HasPrefix(aws.ToString(f.GeneratorId), GeneratorPrefix) {
				out[aws.ToString(f.Id)] = f
			}
		}
	}
	return out, nil
}

// Progress is told how many findings were sent so far.
type Progress func(done, total int)

// Import sends findings (of the tables checked) to t and closes what was
// fixed (archived); it reads the result back before returning it.
func Import(ctx context.Context, api API, t Target, tables []string, findings []guideline.Finding, now time.Time, progress Progress) (Result, error) {
	res := Result{ProductARN: t.ProductARN()}
	before, err := Existing(ctx, api, t)
	if err != nil {
		return res, err
	}
	var batch []types.AwsSecurityFinding
	var closed []string
	want := map[string]types.ComplianceStatus{}
	for _, f := range findings {
		id := FindingID(f)
		var created time.Time
		prev, had := before[id]
		if had {
			created, _ = time.Parse(time.RFC3339Nano, aws.ToString(prev.CreatedAt))
		}
		a, err := ASFF(t, f, now, created)
		if err != nil {
			return res, err
		}
		if _, dup := want[id]; dup {
			return res, fmt.Errorf("two findings of %s on %s share the Security Hub Id %s", f.Rule, f.Resource, id)
		}
		want[id] = a.Compliance.Status
		// Fixed since the last import, or closed before and passing still:
		// ARCHIVED, so that it leaves Security Hub's active findings.
		if had && a.Compliance.Status == types.ComplianceStatusPassed && (!isResolved(prev) || prev.RecordState == types.RecordStateArchived) {
			a.RecordState = types.RecordStateArchived
			if prev.RecordState != types.RecordStateArchived {
				closed = append(closed, id)
			}
		}
		batch = append(batch, a)
	}
	checked := map[string]bool{}
	for _, tb := range tables {
		checked[tb] = true
	}
	var gone []string
	for id, prev := range before {
		if _, still := want[id]; still || !checked[prev.ProductFields[FieldTable]] || prev.RecordState == types.RecordStateArchived {
			continue
		}
		gone = append(gone, id)
	}
	sort.Strings(gone)
	for _, id := range gone {
		batch = append(batch, archived(before[id], now))
	}
	for i := 0; i < len(batch); i += BatchSize {
		part := batch[i:min(i+BatchSize, len(batch))]
		out, err := api.BatchImportFindings(ctx, &sh.BatchImportFindingsInput{Findings: part})
		if err != nil {
			return res, fmt.Errorf("import findings %d-%d of %d into Security Hub (%s): %w; the earlier batches are imported, re-run to finish", i+1, i+len(part), len(batch), t.ProductARN(), err)
		}
		if n := aws.ToInt32(out.FailedCount); n > 0 {
			var why []string
			for _, ff := range out.FailedFindings {
				why = append(why, aws.ToString(ff.Id)+": "+aws.ToString(ff.ErrorCode)+" "+aws.ToString(ff.ErrorMessage))
			}
			return res, fmt.Errorf("Security Hub refused %d finding(s): %s", n, strings.Join(why, "; "))
		}
		if progress != nil {
			progress(i+len(part), len(batch))
		}
	}
	res.Imported = len(findings)
	res.Archived = len(gone)
	res.Resolved = len(closed)

	// Read back: every finding is there with the compliance status sent.
	after, err := Existing(ctx, api, t)
	if err != nil {
		return res, err
	}
	for id, st := range want {
		got, ok := after[id]
		if !ok || got.Compliance == nil || got.Compliance.Status != st {
			return res, fmt.Errorf("Security Hub does not show finding %s as %s after the import (read back with GetFindings)", id, st)
		}
		switch st {
		case types.ComplianceStatusPassed:
			res.Passed++
		case types.ComplianceStatusWarning:
			res.Warning++
		default:
			res.Failed++
		}
	}
	for _, id := range append(gone, closed...) {
		if after[id].RecordState != types.RecordStateArchived {
			return res, fmt.Errorf("Security Hub does not show finding %s as ARCHIVED after the import (read back with GetFindings)", id)
		}
	}
	return res, nil
}

// archived is an existing finding of dynops's, re-imported as ARCHIVED with
// only the fields a provider sets (none that Security Hub adds itself).
func archived(prev types.AwsSecurityFinding, now time.Time) types.AwsSecurityFinding {
	fields := map[string]string{}
	for k, v := range prev.ProductFields {
		if strings.HasPrefix(k, GeneratorPrefix) {
			fields[k] = v
		}
	}
	return types.AwsSecurityFinding{
		SchemaVersion: aws.String(SchemaVersion),
		Id:            prev.Id,
		ProductArn:    prev.ProductArn,
		GeneratorId:   prev.GeneratorId,
		AwsAccountId:  prev.AwsAccountId,
		Types:         prev.Types,
		CreatedAt:     prev.CreatedAt,
		UpdatedAt:     aws.String(now.UTC().Format(time.RFC3339Nano)),
		Severity:      prev.Severity,
		Title:         prev.Title,
		Description:   aws.String(truncate("resource no longer found by dynops check: "+aws.ToString(prev.Description), 1024)),
		ProductFields: fields,
		Resources:     prev.Resources,
		Compliance:    prev.Compliance,
		RecordState:   types.RecordStateArchived,
	}
}

func isResolved(f types.AwsSecurityFinding) bool {
	return f.Workflow != nil && f.Workflow.Status == types.WorkflowStatusResolved
}
