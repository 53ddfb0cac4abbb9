package guideline

import (
	"fmt"
	"strings"
)

// Frameworks whose controls the guideline's rules are mapped to.
const (
	SecurityHub = "AWS Security Hub"
	AWSConfig   = "AWS Config"
	Checkov     = "checkov"
	Trivy       = "trivy"
	Prowler     = "Prowler"
)

// Relation says how a rule stands to the external controls it is mapped to.
type Relation string

// Relations.
const (
	// Stricter: the rule asks what the controls ask, and more (Note says what).
	Stricter Relation = "stricter"
	// Looser: the controls ask more than the rule's default (Note says how to meet them).
	Looser Relation = "looser"
	// Related: the controls are on the rule's topic, but `dynops check` does
	// not evaluate them (Note says where the rule is enforced instead).
	Related Relation = "related"
)

// Control is one external control: a Security Hub control, an AWS Config
// managed rule, a checkov, trivy or Prowler check.
type Control struct {
	Framework string `json:"framework"`
	ID        string `json:"id"`
	Title     string `json:"title"`
	// Source is where the ID and its meaning were confirmed.
	Source string `json:"-"`
}

// Mapping is a guideline rule's external controls.
type Mapping struct {
	Rule     string
	Relation Relation
	Controls []Control
	Note     string
}

// Where each control's ID and meaning were confirmed (the tools' own sources
// and AWS's documentation), so the mapping can be re-checked when they change.
const (
	srcSecurityHub = "https://docs.aws.amazon.com/securityhub/latest/userguide/dynamodb-controls.html; prowler-cloud/prowler prowler/compliance/aws/aws_foundational_security_best_practices_aws.json"
	srcConfig      = "https://docs.aws.amazon.com/config/latest/developerguide/"
	srcCheckov     = "bridgecrewio/checkov checkov/terraform/checks/"
	srcTrivy       = "aquasecurity/trivy-checks checks/cloud/aws/dynamodb/"
	srcProwler     = "prowler-cloud/prowler prowler/providers/aws/services/dynamodb/"
)

// controlMappings is the one place the rules' external controls are
// recorded. docs/guideline.md's mapping section is generated from it
// (ControlsMarkdown; a test keeps the two equal). An ID is listed only when
// it was confirmed against the source named in the Control; Security Hub
// DynamoDB.5 is left out because its meaning could not be confirmed.
var controlMappings = []Mapping{
	{Rule: Cap01, Relation: Stricter, Controls: []Control{
		{SecurityHub, "DynamoDB.1", "DynamoDB tables should automatically scale capacity with demand", srcSecurityHub},
		{AWSConfig, "dynamodb-autoscaling-enabled", "on-demand, or provisioned with auto scaling", srcConfig + "dynamodb-autoscaling-enabled.html"},
		{Checkov, "CKV2_AWS_16", "Ensure that Auto Scaling is enabled on your DynamoDB tables", srcCheckov + "graph_checks/aws/AutoScalingEnableOnDynamoDBTables.yaml"},
		{Prowler, "dynamodb_table_autoscaling_enabled", "DynamoDB table uses on-demand capacity or has auto scaling enabled", srcProwler + "dynamodb_table_autoscaling_enabled"},
	}, Note: "a PROVISIONED table also needs a recorded reason; auto scaling on the table and every GSI is enforced at plan (module, Rego), and `dynops check` does not read Application Auto Scaling back"},
	{Rule: Cap03, Relation: Related, Controls: []Control{
		{SecurityHub, "DynamoDB.3", "DynamoDB Accelerator (DAX) clusters should be encrypted at rest", srcSecurityHub},
		{SecurityHub, "DynamoDB.7", "DynamoDB Accelerator clusters should be encrypted in transit", srcSecurityHub},
		{Trivy, "AVD-AWS-0023", "DAX Cluster should always encrypt data at rest", srcTrivy + "enable_at_rest_encryption.rego"},
		{Prowler, "dynamodb_accelerator_cluster_encryption_enabled", "DAX cluster encrypted at rest", srcProwler + "dynamodb_accelerator_cluster_encryption_enabled"},
		{Prowler, "dynamodb_accelerator_cluster_in_transit_encryption_enabled", "DAX cluster encrypted in transit", srcProwler + "dynamodb_accelerator_cluster_in_transit_encryption_enabled"},
	}, Note: "the guideline refuses DAX without an exception (Rego); `dynops check` does not read DAX clusters, so a cluster kept under an exception is left to these controls"},
	{Rule: Prot01, Relation: Stricter, Controls: []Control{
		{SecurityHub, "DynamoDB.6", "DynamoDB tables should have deletion protection enabled", srcSecurityHub},
		{AWSConfig, "dynamodb-table-deletion-protection-enabled", "deletion protection enabled", srcConfig + "dynamodb-table-deletion-protection-enabled.html"},
		{Prowler, "dynamodb_table_deletion_protection_enabled", "DynamoDB table has deletion protection enabled", srcProwler + "dynamodb_table_deletion_protection_enabled"},
	}, Note: "dynops reads every replica of a global table in its own region, and a replica it cannot read fails"},
	{Rule: Pitr01, Relation: Stricter, Controls: []Control{
		{SecurityHub, "DynamoDB.2", "DynamoDB tables should have point-in-time recovery enabled", srcSecurityHub},
		{AWSConfig, "dynamodb-pitr-enabled", "point-in-time recovery enabled", srcConfig + "dynamodb-pitr-enabled.html"},
		{Checkov, "CKV_AWS_28", "Ensure DynamoDB point in time recovery (backup) is enabled", srcCheckov + "resource/aws/DynamodbRecovery.py"},
		{Checkov, "CKV_AWS_165", "Ensure DynamoDB point in time recovery (backup) is enabled for global tables (aws_dynamodb_global_table)", srcCheckov + "resource/aws/DynamoDBGlobalTableRecovery.py"},
		{Trivy, "AVD-AWS-0024", "Point in time recovery should be enabled to protect DynamoDB table", srcTrivy + "enable_recovery.rego"},
		{Prowler, "dynamodb_tables_pitr_enabled", "DynamoDB table has point-in-time recovery (PITR) enabled", srcProwler + "dynamodb_tables_pitr_enabled"},
	}, Note: "dynops also asks a 35-day recovery period (shorter only with a reason) and reads every replica in its own region; the controls ask only that PITR is on"},
	{Rule: DR01, Relation: Related, Controls: []Control{
		{SecurityHub, "DynamoDB.4", "DynamoDB tables should be present in a backup plan", srcSecurityHub},
		{AWSConfig, "dynamodb-in-backup-plan", "table present in an AWS Backup plan", srcConfig + "dynamodb-in-backup-plan.html"},
		{AWSConfig, "dynamodb-resources-protected-by-backup-plan", "table protected by a backup plan", srcConfig + "dynamodb-resources-protected-by-backup-plan.html"},
		{Prowler, "dynamodb_table_protected_by_backup_plan", "DynamoDB table is protected by a backup plan", srcProwler + "dynamodb_table_protected_by_backup_plan"},
	}, Note: "backup plans come from `modules/dr` (backup & restore pattern); `dynops check` does not read AWS Backup"},
	{Rule: Sec01, Relation: Related, Controls: []Control{
		{Prowler, "dynamodb_table_cross_account_access", "DynamoDB table resource-based policy does not allow cross-account access", srcProwler + "dynamodb_table_cross_account_access"},
	}, Note: "dynops scopes identity policies (`modules/dynamodb-access`, Rego); it does not read table resource policies"},
	{Rule: Sec04, Relation: Looser, Controls: []Control{
		{AWSConfig, "dynamodb-table-encrypted-kms", "table encrypted with AWS KMS (optionally with listed keys)", srcConfig + "dynamodb-table-encrypted-kms.html"},
		{Checkov, "CKV_AWS_119", "Ensure DynamoDB Tables are encrypted using a KMS Customer Managed CMK", srcCheckov + "resource/aws/DynamoDBTablesEncrypted.py"},
		{Checkov, "CKV_AWS_271", "Ensure DynamoDB table replica KMS encryption uses CMK", srcCheckov + "resource/aws/DynamoDBTableReplicaKMSUsesCMK.py"},
		{Trivy, "AVD-AWS-0025", "DynamoDB tables should use at rest encryption with a Customer Managed Key", srcTrivy + "table_customer_key.rego"},
		{Prowler, "dynamodb_tables_kms_cmk_encryption_enabled", "DynamoDB table is encrypted at rest with AWS KMS", srcProwler + "dynamodb_tables_kms_cmk_encryption_enabled"},
	}, Note: "the guideline's default is the AWS owned key, which these controls fail; where an auditor runs them, set `aws_managed_key_enabled` (AWS Config, Prowler) or `kms_key_arn` (checkov, trivy: a customer managed key)"},
}

// NoExternalEquivalent is what the mapping says of a rule no public rule set covers.
const NoExternalEquivalent = "no external equivalent"

// ControlMappings returns the rules' external controls, in guideline order.
func ControlMappings() []Mapping { return controlMappings }

// ControlsOf returns the external controls mapped to rule (nil: none).
func ControlsOf(rule string) []Control {
	for _, m := range controlMappings {
		if m.Rule == rule {
			return m.Controls
		}
	}
	return nil
}

// ControlIDs returns a rule's controls as "Framework ID" strings, for tags
// and text formats.
func ControlIDs(rule string) []string {
	var out []string
	for _, c := range ControlsOf(rule) {
		out = append(out, c.Framework+" "+c.ID)
	}
	return out
}

// ControlsMarkdown renders the mapping of every rule in ids (the guideline's
// rule IDs, in order) as the body of docs/guideline.md's mapping section.
func ControlsMarkdown(ids []string) string {
	var b strings.Builder
	b.WriteString("| Rule | Relation | External controls | Where dynops differs |\n|---|---|---|---|\n")
	for _, id := range ids {
		m, ok := mappingOf(id)
		if !ok {
			fmt.Fprintf(&b, "| [%s](#%s) | - | %s | - |\n", id, strings.ToLower(id), NoExternalEquivalent)
			continue
		}
		var cs []string
		for _, c := range m.Controls {
			cs = append(cs, fmt.Sprintf("%s `%s`", c.Framework, c.ID))
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s |\n", id, strings.ToLower(id), m.Relation, strings.Join(cs, "<br>"), m.Note)
	}
	return b.String()
}

func mappingOf(rule string) (Mapping, bool) {
	for _, m := range controlMappings {
		if m.Rule == rule {
			return m, true
		}
	}
	return Mapping{}, false
}
