// Package guideline holds the rule IDs of the DynamoDB design guideline
// (docs/guideline.md) and the live checks behind `dynops check`: gather a
// table's state from AWS, then evaluate it against the rules without I/O.
package guideline

import (
	"regexp"
	"strings"

	"github.com/dynops/dynops/docs"
)

// Severity of a failing rule: an error fails `dynops check` (exit 1).
type Severity string

// Severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Rule is one guideline rule that dynops checks.
type Rule struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Severity Severity `json:"severity"`
}

// Rule IDs checked on live tables.
const (
	Name01   = "DDB-NAME-01"
	Name02   = "DDB-NAME-02"
	Name03   = "DDB-NAME-03"
	Cap01    = "DDB-CAP-01"
	Cap04    = "DDB-CAP-04"
	Idx02    = "DDB-IDX-02"
	Stream01 = "DDB-STREAM-01"
	Prot01   = "DDB-PROT-01"
	Pitr01   = "DDB-PITR-01"
	Sec02    = "DDB-SEC-02"
	Sec04    = "DDB-SEC-04"
	Mon01    = "DDB-MON-01"
	Stream04 = "DDB-STREAM-04"
	Stream05 = "DDB-STREAM-05"
)

// Rule IDs that are mapped to external controls but not checked on live
// tables (see ControlMappings).
const (
	Cap03 = "DDB-CAP-03"
	DR01  = "DDB-DR-01"
	Sec01 = "DDB-SEC-01"
)

// Rules returns the rules `dynops check` evaluates, in report order.
func Rules() []Rule {
	return []Rule{
		{Name01, "table name is {env}-{product}-{usage}", Error},
		{Name02, "GSI and LSI names are gsi1, gsi2, ... / lsi1, lsi2, ...", Error},
		{Name03, "TTL is on, on attribute ttl", Warning},
		{Cap01, "on-demand, or provisioned with a reason", Error},
		{Cap04, "on-demand tables in protected envs: an on-demand maximum (cost ceiling), alarmed", Error},
		{Idx02, "index projection INCLUDE or KEYS_ONLY; ALL only with approval", Error},
		{Stream01, "stream view type NEW_AND_OLD_IMAGES", Error},
		{Prot01, "deletion protection on", Error},
		{Pitr01, "PITR on with a 35-day recovery period", Error},
		{Mon01, "alarms on table throttling (ThrottledRequests) and GSI throttle events, with actions", Error},
		{Stream04, "stream consumers: bisect, bounded retries and record age, on-failure DLQ", Error},
		{Stream05, "stream consumers: IteratorAge and DLQ depth alarmed", Error},
		{Sec02, "multi-tenant tables: the tenant key is the partition key of the table and of every tenant-scoped GSI", Error},
		{Sec04, "encryption at rest (AWS owned key by default, CMK where required)", Info},
	}
}

// RuleByID returns the rule with id.
func RuleByID(id string) (Rule, bool) {
	for _, r := range Rules() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// ExceptionTagPrefix starts the tag key that records an approved exception to
// a rule, e.g. `dynops:exception:DDB-PITR-01 = compliance 7 days`. The
// Terraform modules write these tags from their *_reason inputs.
const ExceptionTagPrefix = "dynops:exception:"

// DefaultEnvs are the environments a table name may start with.
func DefaultEnvs() []string { return []string{"local", "dev", "stg", "prod"} }

var nameWords = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)+$`)

// EnvOf returns the environment a table belongs to by its name (DDB-NAME-01),
// or "" when the name does not follow the convention.
func EnvOf(table string) string {
	env, _, ok := strings.Cut(table, "-")
	if !ok {
		return ""
	}
	return env
}

// FollowsNamingRule reports whether name follows DDB-NAME-01,
// {env}-{product}-{usage} with env in envs (DynamoDB itself accepts more:
// restore.CheckDynamoDBTableName).
func FollowsNamingRule(name string, envs []string) bool {
	if !nameWords.MatchString(name) || strings.Count(name, "-") < 2 {
		return false
	}
	env := EnvOf(name)
	for _, e := range envs {
		if e == env {
			return true
		}
	}
	return false
}

// RuleHelp returns rule's section of docs/guideline.md (the text under its
// ### heading, whitespace joined), or "" when the guideline has no such section.
func RuleHelp(rule string) string {
	_, after, ok := strings.Cut(docs.Guideline, "\n### "+rule+"\n")
	if !ok {
		return ""
	}
	for _, end := range []string{"\n### ", "\n## "} {
		if i := strings.Index(after, end); i >= 0 {
			after = after[:i]
		}
	}
	return strings.Join(strings.Fields(after), " ")
}
