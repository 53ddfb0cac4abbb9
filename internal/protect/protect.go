// Package protect is the one place that decides whether a target of a
// destructive dynops command (a table, queue, function, bucket, SSM
// parameter) is protected, that is: needs its name typed before dynops
// changes it.
//
// The rule fails closed. A target is protected unless dynops can show it is
// not:
//
//   - its tags could not be read: protected (dynops cannot show anything);
//   - an env tag (the `env` tag the modules write) or the name's first word
//     names a protected env (prod, production, prd, live, ... compared
//     case-insensitively): protected;
//   - an env tag names a known unprotected env (local, dev, stg, or one the
//     settings add): not protected;
//   - no env tag, and the name parses under DDB-NAME-01 ({env}-{product}-{usage},
//     lower case) with a known unprotected env: not protected;
//   - anything else (a name outside DDB-NAME-01, an unknown env): protected.
//
// Every Decision carries the reason, so prompts, errors and the audit record
// say which tag, name or setting decided.
package protect

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/arn"

	"github.com/dynops/dynops/internal/guideline"
)

// Kind is what sort of resource a target is.
type Kind string

// Kinds of targets.
const (
	Table     Kind = "table"
	Queue     Kind = "queue"
	Function  Kind = "function"
	Bucket    Kind = "bucket"
	Parameter Kind = "SSM parameter"
)

// EnvTagKeys are the tag keys read as the target's environment (compared
// case-insensitively); the modules write `env`.
var envTagKeys = []string{"env", "environment"}

// BuiltinProtected are the envs that are always protected, whatever the
// settings say.
func BuiltinProtected() []string {
	return []string{"prod", "production", "prd", "live", "prod1", "prod2", "prd1", "prd2"}
}

// BuiltinUnprotected are the envs known to be safe to change with --yes
// alone: the guideline's envs (guideline.DefaultEnvs) that are not protected.
func BuiltinUnprotected() []string {
	var out []string
	for _, e := range guideline.DefaultEnvs() {
		if !slices.Contains(BuiltinProtected(), e) {
			out = append(out, e)
		}
	}
	return out
}

// Policy says which envs are protected and which are known not to be. An
// env in neither list is unknown, hence protected. Build it with NewPolicy or
// LoadPolicy; the zero Policy protects everything.
type Policy struct {
	// protected and unprotected map a lower-case env to the setting that
	// listed it ("built-in", "--protected-envs", "DYNOPS_PROTECTED_ENVS", ...).
	protected   map[string]string
	unprotected map[string]string
}

// NewPolicy returns the built-in policy.
func NewPolicy() Policy {
	p := Policy{protected: map[string]string{}, unprotected: map[string]string{}}
	p.AddProtected("built-in", BuiltinProtected()...)
	p.AddUnprotected("built-in", BuiltinUnprotected()...)
	return p
}

// AddProtected marks envs as protected, naming the setting that listed them.
func (p *Policy) AddProtected(source string, envs ...string) {
	if p.protected == nil {
		p.protected = map[string]string{}
	}
	for _, e := range envs {
		if e = norm(e); e != "" {
			if _, ok := p.protected[e]; !ok {
				p.protected[e] = source
			}
		}
	}
}

// AddUnprotected marks envs as known and unprotected. A protected env stays
// protected: protection always wins.
func (p *Policy) AddUnprotected(source string, envs ...string) {
	if p.unprotected == nil {
		p.unprotected = map[string]string{}
	}
	for _, e := range envs {
		if e = norm(e); e != "" {
			if _, ok := p.unprotected[e]; !ok {
				p.unprotected[e] = source
			}
		}
	}
}

// ProtectedEnvs lists the protected envs, sorted.
func (p Policy) ProtectedEnvs() []string { return keys(p.protected) }

// UnprotectedEnvs lists the envs known to be unprotected (protected ones
// excluded), sorted.
func (p Policy) UnprotectedEnvs() []string {
	var out []string
	for _, e := range keys(p.unprotected) {
		if _, prot := p.protected[e]; !prot {
			out = append(out, e)
		}
	}
	return out
}

// envState is what the policy says of one env.
func (p Policy) envState(env string) (protected, known bool, source string) {
	env = norm(env)
	if s, ok := p.protected[env]; ok {
		return true, true, s
	}
	if s, ok := p.unprotected[env]; ok {
		return false, true, s
	}
	return true, false, ""
}

// Target is what the decision looks at.
type Target struct {
	Kind Kind
	// Name is the resource's name (a queue's name, not its URL; a
	// function's name, not its ARN).
	Name string
	// ARN is the resource's ARN when it was read (a function's unqualified
	// ARN): what a decision about this very resource is keyed by.
	ARN string
	// Tags are the tags read from the service (or, for a resource about to
	// be created, the tags it will get; see TagsFrom).
	Tags map[string]string
	// TagsFrom says where Tags come from, e.g. "ListTagsOfResource".
	TagsFrom string
	// TagsErr is set when reading the tags failed: the target is protected.
	TagsErr error
}

// Decision is the outcome for one target.
type Decision struct {
	Kind      Kind   `json:"kind"`
	Name      string `json:"name"`
	ARN       string `json:"arn,omitempty"`
	Protected bool   `json:"protected"`
	// Env is the environment the decision found ("" when none).
	Env string `json:"env,omitempty"`
	// Reason says which tag, name or setting decided.
	Reason string `json:"reason"`
}

// String is "table prod-a-b (protected: ...)".
func (d Decision) String() string {
	state := "not protected"
	if d.Protected {
		state = "protected"
	}
	return fmt.Sprintf("%s %s (%s: %s)", d.Kind, d.Name, state, d.Reason)
}

// Decide decides whether t is protected under p. It is the only function in
// dynops that makes this decision.
func (p Policy) Decide(t Target) Decision {
	d := Decision{Kind: t.Kind, Name: t.Name, ARN: t.ARN, Protected: true}
	if strings.TrimSpace(t.Name) == "" {
		d.Reason = "the target has no name"
		return d
	}
	if t.TagsErr != nil {
		d.Reason = fmt.Sprintf("its tags could not be read, so dynops cannot show it is not protected: %v", t.TagsErr)
		return d
	}

	// Tag evidence: every env-like tag counts; any protected or unknown one wins.
	var tagEnv, tagKey string
	for _, k := range sortedTagKeys(t.Tags) {
		if !isEnvKey(k) {
			continue
		}
		v := strings.TrimSpace(t.Tags[k])
		if v == "" {
			d.Reason = fmt.Sprintf("its %s tag is empty", k)
			return d
		}
		prot, known, src := p.envState(v)
		switch {
		case prot && known:
			d.Env, d.Reason = norm(v), fmt.Sprintf("tag %s=%s (%s) is a protected env (%s)", k, v, tagsFrom(t), src)
			return d
		case !known:
			d.Env, d.Reason = norm(v), fmt.Sprintf("tag %s=%s (%s) is not a known unprotected env (%s); add it with DYNOPS_UNPROTECTED_ENVS or the config file if it is safe", k, v, tagsFrom(t), strings.Join(p.UnprotectedEnvs(), ", "))
			return d
		}
		if tagEnv == "" {
			tagEnv, tagKey = norm(v), k
		}
	}

	// Name evidence: the first word, compared case-insensitively, of the
	// table's own name when it was given as an ARN.
	name, err := resourceName(t)
	if err != nil {
		d.Reason = err.Error()
		return d
	}
	first := firstWord(name)
	if prot, known, src := p.envState(first); prot && known {
		d.Env, d.Reason = first, fmt.Sprintf("its name starts with %q, a protected env (%s)", first, src)
		return d
	}

	if tagEnv != "" {
		_, _, src := p.envState(tagEnv)
		d.Protected, d.Env = false, tagEnv
		d.Reason = fmt.Sprintf("tag %s=%s (%s) is an unprotected env (%s)", tagKey, t.Tags[tagKey], tagsFrom(t), src)
		return d
	}
	env := guideline.EnvOf(name)
	if guideline.FollowsNamingRule(name, p.UnprotectedEnvs()) {
		_, _, src := p.envState(env)
		d.Protected, d.Env = false, env
		d.Reason = fmt.Sprintf("no env tag, and its name follows DDB-NAME-01 with env %q, an unprotected env (%s)", env, src)
		return d
	}
	if guideline.FollowsNamingRule(name, []string{env}) {
		d.Env = env
		d.Reason = fmt.Sprintf("no env tag, and env %q of its name is not a known unprotected env (%s)", env, strings.Join(p.UnprotectedEnvs(), ", "))
		return d
	}
	d.Reason = "no env tag, and its name does not follow DDB-NAME-01 ({env}-{product}-{usage} in lower case), so its env is unknown"
	return d
}

// TableProtected decides a table whose tags were read (ListTagsOfResource)
// under p: the shape guideline.Clients.Protected takes (DDB-CAP-04 asks a
// cost ceiling of protected tables only).
func (p Policy) TableProtected(name string, tags map[string]string) bool {
	return p.Decide(Target{Kind: Table, Name: name, Tags: tags, TagsFrom: "ListTagsOfResource"}).Protected
}

// resourceName is the name the name rule reads: a table given as an ARN
// (arn:PARTITION:dynamodb:REGION:ACCOUNT:table/NAME[/index/...]) is judged
// by NAME, like a bare name; an ARN that is not a table's cannot be judged.
func resourceName(t Target) (string, error) {
	if t.Kind != Table || !strings.HasPrefix(strings.TrimSpace(t.Name), "arn:") {
		return t.Name, nil
	}
	a, err := arn.Parse(strings.TrimSpace(t.Name))
	name, ok := strings.CutPrefix(a.Resource, "table/")
	if err != nil || a.Service != "dynamodb" || !ok || name == "" {
		return "", fmt.Errorf("%q is not a DynamoDB table ARN (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME), so its env cannot be read from its name", t.Name)
	}
	name, _, _ = strings.Cut(name, "/")
	return name, nil
}

func tagsFrom(t Target) string {
	if t.TagsFrom == "" {
		return "read from the service"
	}
	return t.TagsFrom
}

func isEnvKey(k string) bool {
	for _, e := range envTagKeys {
		if strings.EqualFold(strings.TrimSpace(k), e) {
			return true
		}
	}
	return false
}

// firstWord is the name's first word in lower case: up to the first -, _, .,
// / or : (so PROD-hoge-legacy, Prod_hoge and prod.hoge all start with prod).
func firstWord(name string) string {
	name = strings.TrimLeft(name, "-_./: ")
	if i := strings.IndexAny(name, "-_./: "); i >= 0 {
		name = name[:i]
	}
	return norm(name)
}

func norm(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedTagKeys(m map[string]string) []string { return keys(m) }

// BreakGlassRole is the name (after the modules' {env}-{product}-dynamodb-
// prefix) of the role that may take an exception on a protected target
// (modules/dynamodb-access: the operator's set plus the break-glass actions,
// in a session with MFA).
const BreakGlassRole = "dynops-break-glass"

// IsBreakGlass reports whether callerArn (sts:GetCallerIdentity) is a
// session of the break-glass role: arn:PARTITION:sts::ACCOUNT:assumed-role/
// [PREFIX-]dynops-break-glass/SESSION.
func IsBreakGlass(callerArn string) bool {
	a, err := arn.Parse(callerArn)
	if err != nil || a.Service != "sts" {
		return false
	}
	parts := strings.Split(a.Resource, "/")
	if len(parts) != 3 || parts[0] != "assumed-role" {
		return false
	}
	return parts[1] == BreakGlassRole || strings.HasSuffix(parts[1], "-"+BreakGlassRole)
}
