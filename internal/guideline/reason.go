package guideline

import "regexp"

// One definition of a reason that says why, shared by the three guardrails:
// the modules' *_reason validations (modules/dynamodb-table locals
// reason_placeholder / reason_substance), the Rego policies (policies/data.json
// guideline.reason_placeholder / reason_substance) and `dynops check` (here).
// TestReasonPatternsInSync keeps the copies equal. The patterns are RE2, which
// Terraform's regex(), Rego's regex.match and Go's regexp all speak.
const (
	// ReasonPlaceholderPattern matches a reason that is still a placeholder: a
	// TODO, FIXME, TBD or XXX word anywhere (adopt writes "TODO adopt: say why";
	// an exception tag may join several reasons, so not only as a prefix).
	ReasonPlaceholderPattern = `(?i)(^|[^\p{L}\p{N}])(todo|fixme|tbd|xxx)([^\p{L}\p{N}]|$)`
	// ReasonSubstancePattern matches a reason with at least three letters or
	// digits (shorter ones, such as "x" or "-", say nothing).
	ReasonSubstancePattern = `([\p{L}\p{N}][^\p{L}\p{N}]*){3}`
)

var (
	reasonPlaceholder = regexp.MustCompile(ReasonPlaceholderPattern)
	reasonSubstance   = regexp.MustCompile(ReasonSubstancePattern)
)

// ReasonSaysWhy reports whether an exception reason was written by a person:
// long enough and not a placeholder. Other reasons do not except a rule.
func ReasonSaysWhy(reason string) bool {
	return reasonSubstance.MatchString(reason) && !reasonPlaceholder.MatchString(reason)
}
