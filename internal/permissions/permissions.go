// Package permissions is the one place that says which IAM actions each dynops
// command needs. modules/dynamodb-access builds the dynops-operator policy from
// the JSON rendered here (operator-actions.json), and the README table comes
// from the same source; `go generate ./internal/permissions` rewrites both and
// a test fails when they drift or when a command has no entry.
package permissions

//go:generate go run ./gen

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Command is one dynops command (its cobra path without "dynops") and the IAM
// actions it calls.
type Command struct {
	Path    string
	Actions []string
}

// Commands returns the command -> actions table. Add a command with one line:
// its path as `dynops help` shows it, and every IAM action its AWS calls need.
func Commands() []Command {
	return []Command{
		// --to-security-hub imports into and resolves in this account's Security Hub
		// (the module scopes them to the account's hub and its own product/ACCOUNT/default).
		{"check", []string{"dynamodb:ListTables", "dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups", "dynamodb:DescribeTimeToLive", "dynamodb:ListTagsOfResource", "securityhub:BatchImportFindings", "securityhub:GetFindings"}},
		{"pitr status", []string{"dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups"}},
		// A restore writes the new table's items: AWS checks the item actions on the target too.
		{"pitr restore", []string{"dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups", "dynamodb:DescribeTimeToLive", "dynamodb:ListTagsOfResource", "dynamodb:GetResourcePolicy", "dynamodb:RestoreTableToPointInTime", "dynamodb:Scan", "dynamodb:Query", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:UpdateTable", "dynamodb:UpdateContinuousBackups", "dynamodb:UpdateTimeToLive", "dynamodb:TagResource", "dynamodb:PutResourcePolicy"}},
		// --damage-stream reads --to's stream for the keys written in the damage window;
		// --from-export asks DynamoDB to vouch for the export.
		{"pitr repair", []string{"dynamodb:DescribeTable", "dynamodb:DescribeExport", "dynamodb:ListTagsOfResource", "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:DescribeStream", "dynamodb:GetShardIterator", "dynamodb:GetRecords"}},
		{"pitr verify", []string{"dynamodb:GetItem"}},
		// --source-export/--target-export read an export; --engine writes the run's
		// plan and reads its shards' results under --run-prefix.
		{"table diff", []string{"dynamodb:DescribeTable", "dynamodb:Scan", "s3:ListBucket", "s3:GetObject", "s3:PutObject"}},
		// A shard of a sharded run: Scan segments and export files in, objects under the run's prefix out.
		{"shard run", []string{"dynamodb:Scan", "s3:ListBucket", "s3:GetObject", "s3:PutObject"}},
		{"table adopt", []string{"dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups", "dynamodb:DescribeTimeToLive", "dynamodb:ListTagsOfResource", "dynamodb:DescribeContributorInsights", "dynamodb:GetResourcePolicy", "application-autoscaling:DescribeScalableTargets"}},
		{"dlq inspect", []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"}},
		{"dlq redrive", []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:SendMessage", "sqs:ListQueueTags", "dynamodb:GetShardIterator", "dynamodb:GetRecords", "lambda:InvokeFunction", "lambda:GetFunctionConfiguration", "lambda:ListTags"}},
		{"export full", []string{"dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups", "dynamodb:ExportTableToPointInTime", "dynamodb:DescribeExport", "s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl"}},
		{"export incremental", []string{"dynamodb:DescribeTable", "dynamodb:DescribeContinuousBackups", "dynamodb:ExportTableToPointInTime", "dynamodb:DescribeExport", "dynamodb:GetItem", "dynamodb:PutItem", "s3:PutObject", "s3:AbortMultipartUpload", "s3:PutObjectAcl", "cloudwatch:PutMetricData"}},
		{"export list", []string{"dynamodb:ListExports", "dynamodb:DescribeTable"}},
		{"export status", []string{"dynamodb:DescribeExport"}},
		{"export wait", []string{"dynamodb:DescribeExport"}},
		{"export verify", []string{"s3:ListBucket", "s3:GetObject"}},
		{"export apply", []string{"dynamodb:DescribeTable", "dynamodb:DescribeExport", "dynamodb:ListTagsOfResource", "dynamodb:TagResource", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "s3:ListBucket", "s3:GetObject"}},
		{"export revert", []string{"dynamodb:DescribeTable", "dynamodb:DescribeExport", "dynamodb:ListTagsOfResource", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "s3:ListBucket", "s3:GetObject"}},
		{"export import", []string{"dynamodb:ImportTable", "dynamodb:DescribeImport", "dynamodb:DescribeTable", "dynamodb:Scan", "dynamodb:UpdateTable", "dynamodb:UpdateContinuousBackups", "dynamodb:UpdateTimeToLive", "dynamodb:TagResource", "dynamodb:DescribeContinuousBackups", "dynamodb:DescribeTimeToLive", "dynamodb:ListTagsOfResource", "dynamodb:GetResourcePolicy", "dynamodb:PutItem", "dynamodb:BatchWriteItem", "dynamodb:CreateTable", "s3:ListBucket", "s3:GetObject", "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogGroups", "logs:DescribeLogStreams", "logs:PutRetentionPolicy"}},
		{"dr status", []string{"dynamodb:DescribeTable", "dynamodb:GetResourcePolicy", "ssm:GetParameter", "cloudwatch:GetMetricData", "route53:GetHealthCheck"}},
		// --pause-template: is an experiment of the env's pause template running?
		{"dr failover", append(drActions(), "fis:ListExperiments")},
		{"dr failback", drActions()},
		// --pause-replication starts, watches and stops the AWS FIS experiment of
		// modules/dr's template (the module scopes fis to the env's template IDs).
		{"dr drill", append(drActions(), "cloudwatch:DescribeAlarms", "fis:GetExperimentTemplate", "fis:StartExperiment", "fis:GetExperiment", "fis:StopExperiment")},
		// runbook run runs other commands (their own entries); itself it only
		// writes the audit trail: the central copy (--audit-log-group), which
		// any command may write. (sts:GetCallerIdentity, called by every run
		// for the audit identity, needs no IAM grant.)
		// With --state-bucket it reads and conditionally writes the team's
		// shared run state and lease (s3:PutObject with If-Match/If-None-Match),
		// and the env's destructive-run cap there. Notifications publish to the
		// env's SNS topic, read the webhook's URL (an SSM SecureString under the
		// AWS managed key, or a Secrets Manager secret) and add Incident
		// Manager timeline events.
		{"runbook run", []string{"logs:CreateLogStream", "logs:PutLogEvents", "s3:GetObject", "s3:PutObject", "s3:ListBucket",
			"sns:Publish", "ssm:GetParameter", "secretsmanager:GetSecretValue", "ssm-incidents:CreateTimelineEvent"}},
		// Anyone with read access to the state prefix follows a run.
		{"runbook status", []string{"s3:GetObject", "s3:ListBucket"}},
		// An approval or rejection is a conditional write of the shared state,
		// notified to the env's topic and webhook (docs/oncall-team.md).
		{"runbook approve", []string{"s3:GetObject", "s3:PutObject", "s3:ListBucket", "sns:Publish", "ssm:GetParameter", "secretsmanager:GetSecretValue"}},
		{"runbook reject", []string{"s3:GetObject", "s3:PutObject", "s3:ListBucket", "sns:Publish", "ssm:GetParameter", "secretsmanager:GetSecretValue"}},
		{"dlq move", []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:SendMessage", "sqs:StartMessageMoveTask", "sqs:ListMessageMoveTasks", "sqs:ListQueueTags", "sqs:ListDeadLetterSourceQueues"}},
		{"migrate plan", []string{"dynamodb:DescribeTable", "dynamodb:Scan", "dynamodb:DescribeContinuousBackups", "dynamodb:DescribeTimeToLive", "dynamodb:ListTagsOfResource"}},
		{"migrate backfill", []string{"dynamodb:DescribeTable", "dynamodb:DescribeStream", "dynamodb:Scan", "dynamodb:BatchWriteItem"}},
		{"migrate catch-up", []string{"dynamodb:DescribeStream", "dynamodb:GetShardIterator", "dynamodb:GetRecords", "dynamodb:PutItem", "dynamodb:DeleteItem"}},
		{"migrate verify", []string{"dynamodb:DescribeTable", "dynamodb:Scan"}},
		{"item get", []string{"dynamodb:DescribeTable", "dynamodb:GetItem"}},
		{"item query", []string{"dynamodb:DescribeTable", "dynamodb:Query"}},
		{"item put", []string{"dynamodb:DescribeTable", "dynamodb:ListTagsOfResource", "dynamodb:GetItem", "dynamodb:PutItem"}},
		{"item update", []string{"dynamodb:DescribeTable", "dynamodb:ListTagsOfResource", "dynamodb:GetItem", "dynamodb:UpdateItem"}},
		{"item delete", []string{"dynamodb:DescribeTable", "dynamodb:ListTagsOfResource", "dynamodb:GetItem", "dynamodb:DeleteItem"}},
		{"migrate cutover", []string{"dynamodb:DescribeTable", "dynamodb:GetResourcePolicy", "dynamodb:PutResourcePolicy", "dynamodb:DescribeStream", "dynamodb:GetShardIterator", "dynamodb:GetRecords", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:Scan", "ssm:GetParameter", "ssm:PutParameter"}},
		{"migrate rollback", []string{"dynamodb:DescribeTable", "dynamodb:GetResourcePolicy", "dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy", "ssm:GetParameter", "ssm:PutParameter"}},
	}
}

// drActions are what `dynops dr failover|failback|drill` call in both
// regions: read the table, fence it with a resource policy, flip the
// pointer, switch Route 53 health checks, and write the canary item.
func drActions() []string {
	return []string{"dynamodb:DescribeTable", "dynamodb:ListTagsOfResource", "dynamodb:GetResourcePolicy", "dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy",
		"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:DeleteItem", "ssm:GetParameter", "ssm:PutParameter",
		"cloudwatch:GetMetricData", "route53:GetHealthCheck", "route53:UpdateHealthCheck"}
}

// Roles that hold the actions of Commands(): the operator holds every action
// but the break-glass ones, which only the break-glass role holds (and only
// with MFA): they can switch a table's protection off.
const (
	OperatorRole   = "dynops-operator"
	BreakGlassRole = "dynops-break-glass"
)

// BreakGlass lists the actions that can switch a table's protection off or
// move its data without a fence: a resource policy can grant more than an
// identity policy (or remove a fence), UpdateTable turns deletion protection
// off, UpdateContinuousBackups turns PITR off, UpdateTimeToLive on an
// attribute holding past epochs deletes items, and PutParameter flips the DR
// and migration pointers (writes move without the fence). IAM cannot tell
// "on" from "off" for them, so every use (also the restore paths that switch
// protection on) needs the break-glass role.
func BreakGlass() []string {
	return []string{"dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy", "dynamodb:UpdateTable", "dynamodb:UpdateContinuousBackups", "dynamodb:UpdateTimeToLive", "ssm:PutParameter"}
}

// RoleFor names the role (of modules/dynamodb-access) that holds action.
func RoleFor(action string) string {
	if slices.Contains(BreakGlass(), action) {
		return BreakGlassRole
	}
	return OperatorRole
}

// Unscoped lists the actions IAM cannot scope to a resource: they need
// Resource "*" (the Service Authorization Reference lists no resource type).
func Unscoped() []string {
	return []string{
		"dynamodb:ListTables", "dynamodb:ListBackups", "dynamodb:ListExports", "dynamodb:ListImports",
		"dynamodb:ListGlobalTables", "dynamodb:ListContributorInsights", "dynamodb:DescribeLimits",
		"dynamodb:DescribeEndpoints", "dynamodb:DescribeReservedCapacity", "dynamodb:DescribeReservedCapacityOfferings", "dynamodb:ListStreams",
		"s3:ListAllMyBuckets", "sqs:ListQueues", "lambda:ListEventSourceMappings", "lambda:ListFunctions",
		"cloudwatch:DescribeAlarms", "cloudwatch:GetMetricData", "cloudwatch:GetMetricStatistics", "cloudwatch:PutMetricData",
		"backup:ListBackupVaults", "tag:GetResources", "application-autoscaling:DescribeScalableTargets", "fis:ListExperiments",
	}
}

// Scope is where an action's Resource comes from: "*" for actions IAM cannot
// scope, otherwise the service prefix, which the module maps to env-scoped
// ARNs (DDB-SEC-03), e.g. dynamodb -> table/${env}-*.
func Scope(action string) string {
	if slices.Contains(Unscoped(), action) {
		return "*"
	}
	service, _, _ := strings.Cut(action, ":")
	return service
}

// Statement is one group of actions sharing a scope, as the module reads it.
type Statement struct {
	Scope   string   `json:"scope"`
	Actions []string `json:"actions"`
}

// Document is operator-actions.json. Statements are the operator's actions
// (its documented set, grouped by scope); BreakGlass are the actions only the
// break-glass role holds, grouped the same way. Each role's documented set is
// also its cap: modules/dynamodb-access denies every other action (NotAction).
type Document struct {
	Comment    string              `json:"_comment"`
	Commands   map[string][]string `json:"commands"`
	Statements []Statement         `json:"statements"`
	BreakGlass []Statement         `json:"break_glass"`
}

// Validate reports malformed entries: empty or duplicate paths, actions that
// are not service:Action, or wildcards (the operator gets exact actions).
func Validate(cmds []Command) error {
	seen := map[string]bool{}
	for _, c := range cmds {
		if c.Path == "" || len(c.Actions) == 0 {
			return fmt.Errorf("permissions: entry %q needs a command path and at least one action", c.Path)
		}
		if seen[c.Path] {
			return fmt.Errorf("permissions: command %q is listed twice", c.Path)
		}
		seen[c.Path] = true
		for _, a := range c.Actions {
			service, name, ok := strings.Cut(a, ":")
			if !ok || service == "" || name == "" || strings.ContainsAny(a, "*? ") {
				return fmt.Errorf("permissions: command %q: action %q must be an exact service:Action (no wildcards, DDB-SEC-01)", c.Path, a)
			}
		}
	}
	return nil
}

// Render returns operator-actions.json for cmds: the per-command table and
// the union of actions grouped by scope, both sorted, so output is stable.
func Render(cmds []Command) ([]byte, error) {
	if err := Validate(cmds); err != nil {
		return nil, err
	}
	doc := Document{
		Comment:  "Generated by `go generate ./internal/permissions` from internal/permissions; do not edit.",
		Commands: map[string][]string{},
	}
	var operator, breakGlass []string
	for _, c := range cmds {
		acts := slices.Clone(c.Actions)
		sort.Strings(acts)
		doc.Commands[c.Path] = slices.Compact(acts)
		for _, a := range c.Actions {
			if RoleFor(a) == BreakGlassRole {
				breakGlass = append(breakGlass, a)
			} else {
				operator = append(operator, a)
			}
		}
	}
	doc.Statements = byScope(operator)
	doc.BreakGlass = byScope(breakGlass)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("permissions: encoding operator-actions.json: %w", err)
	}
	return append(b, '\n'), nil
}

// byScope groups actions by Scope, sorted and without duplicates.
func byScope(actions []string) []Statement {
	groups := map[string][]string{}
	for _, a := range actions {
		groups[Scope(a)] = append(groups[Scope(a)], a)
	}
	out := []Statement{}
	for _, s := range slices.Sorted(maps.Keys(groups)) {
		acts := groups[s]
		sort.Strings(acts)
		out = append(out, Statement{Scope: s, Actions: slices.Compact(acts)})
	}
	return out
}

// Markdown returns the README table of command -> actions.
func Markdown(cmds []Command) string {
	sorted := slices.Clone(cmds)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var b strings.Builder
	b.WriteString("| command | IAM actions | break-glass role (with MFA) for |\n|---|---|---|\n")
	for _, c := range sorted {
		acts := slices.Clone(c.Actions)
		sort.Strings(acts)
		var bg []string
		for _, a := range slices.Compact(acts) {
			if RoleFor(a) == BreakGlassRole {
				bg = append(bg, a)
			}
		}
		need := "-"
		if len(bg) > 0 {
			need = "`" + strings.Join(bg, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `dynops %s` | %s | %s |\n", c.Path, "`"+strings.Join(slices.Compact(acts), "`, `")+"`", need)
	}
	return b.String()
}

// README markers around the generated table.
const (
	BeginMarker = "<!-- BEGIN_DYNOPS_OPERATOR_ACTIONS -->"
	EndMarker   = "<!-- END_DYNOPS_OPERATOR_ACTIONS -->"
)

// Inject replaces the text between BeginMarker and EndMarker in doc with table.
func Inject(doc, table string) (string, error) {
	before, rest, ok := strings.Cut(doc, BeginMarker)
	if !ok {
		return "", fmt.Errorf("permissions: marker %s not found", BeginMarker)
	}
	_, after, ok := strings.Cut(rest, EndMarker)
	if !ok {
		return "", fmt.Errorf("permissions: marker %s not found", EndMarker)
	}
	return before + BeginMarker + "\n" + table + EndMarker + after, nil
}

// Generated files, relative to the repository root.
const (
	JSONFile   = "modules/dynamodb-access/operator-actions.json"
	ReadmeFile = "modules/dynamodb-access/README.md"
)

// Generate returns the contents the generated files must have, keyed by their
// path relative to the repository root; readme is the README as it is now
// (only the text between the markers changes).
func Generate(cmds []Command, readme string) (map[string][]byte, error) {
	js, err := Render(cmds)
	if err != nil {
		return nil, err
	}
	md, err := Inject(readme, Markdown(cmds))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ReadmeFile, err)
	}
	return map[string][]byte{JSONFile: js, ReadmeFile: []byte(md)}, nil
}
