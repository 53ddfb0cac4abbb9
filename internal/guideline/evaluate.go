package guideline

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Status of a rule on a resource.
type Status string

// Statuses.
const (
	Pass      Status = "pass"
	Fail      Status = "fail"
	Exception Status = "exception" // fails the default, with an approved reason
)

// Finding is the result of one rule on one resource.
type Finding struct {
	Table    string   `json:"table"`
	Resource string   `json:"resource"` // the table, or table/index/gsi1
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Status   Status   `json:"status"`
	Message  string   `json:"message"`
	Reason   string   `json:"reason,omitempty"` // the exception's reason
	// Guideline is where the rule is explained: docs/guideline.md#<rule-id>.
	Guideline string `json:"guideline"`
	// ARN of the resource: the table, its index, or its replica in another
	// region (a stream consumer's finding carries the table's ARN); empty
	// when the table's ARN was not read.
	ARN string `json:"arn,omitempty"`
	// Controls are the external controls the rule covers (ControlMappings).
	Controls []Control `json:"controls,omitempty"`
}

// GuidelineFile is the project's guideline, which findings point at.
const GuidelineFile = "docs/guideline.md"

// DocLink returns the guideline section of rule, e.g. docs/guideline.md#ddb-pitr-01.
func DocLink(rule string) string { return GuidelineFile + "#" + strings.ToLower(rule) }

// Failing reports whether the finding fails the check (an error-level failure).
func (f Finding) Failing() bool { return f.Status == Fail && f.Severity == Error }

// TableState is what the checks need to know about a live table.
type TableState struct {
	Table      types.TableDescription
	PITR       *types.PointInTimeRecoveryDescription
	TTL        *types.TimeToLiveDescription
	Tags       map[string]string
	AllowedEnv []string
	// Protected: the table is in a protected env (internal/protect's
	// decision, made by the caller: Clients.Protected). DDB-CAP-04 asks
	// an on-demand maximum of those tables only.
	Protected bool
	// Monitoring around the table (DDB-MON-01, DDB-STREAM-04/05); nil: not
	// gathered, and those rules are not evaluated.
	Monitoring *Monitoring
	// Replicas of a global table, read in their own regions (DDB-PROT-01,
	// DDB-PITR-01 on every replica).
	Replicas []ReplicaState
}

// ReplicaState is what the checks read about one replica, in its region.
type ReplicaState struct {
	Region             string
	DeletionProtection *bool
	PITR               *types.PointInTimeRecoveryDescription
	// Err is why the replica could not be read; the checks then treat it as
	// unprotected (fail closed).
	Err error
}

// Exceptions returns the approved exceptions recorded in the table's tags: rule ID to reason.
func (s TableState) Exceptions() map[string]string {
	out := map[string]string{}
	for k, v := range s.Tags {
		if id, ok := strings.CutPrefix(k, ExceptionTagPrefix); ok {
			out[id] = v
		}
	}
	return out
}

var indexName = map[string]*regexp.Regexp{
	"gsi": regexp.MustCompile(`^gsi[1-9][0-9]*$`),
	"lsi": regexp.MustCompile(`^lsi[1-9][0-9]*$`),
}

// Evaluate checks one table against every rule and returns the findings, in rule order.
func Evaluate(s TableState) []Finding {
	name := deref(s.Table.TableName)
	exc := s.Exceptions()
	var out []Finding
	add := func(rule, resource string, ok bool, msg string) {
		r, _ := RuleByID(rule)
		f := Finding{Table: name, Resource: resource, Rule: rule, Severity: r.Severity, Status: Pass, Message: msg, Guideline: DocLink(rule),
			ARN: ResourceARN(deref(s.Table.TableArn), name, resource), Controls: ControlsOf(rule)}
		if !ok {
			f.Status = Fail
			if reason, has := exc[rule]; has {
				switch {
				case strings.TrimSpace(reason) == "":
					// An exception must say why (DDB-EXC-01): an empty reason is no exception.
					f.Message += "; its exception tag " + ExceptionTagPrefix + rule + " has an empty reason, so it does not count (DDB-EXC-01)"
				case !ReasonSaysWhy(reason):
					// A placeholder (adopt's "TODO adopt: say why", FIXME, TBD) or a
					// reason too short to say anything is no exception either.
					f.Message += fmt.Sprintf("; its exception tag %s%s is a placeholder (%q): write why the rule is relaxed, or it does not count (DDB-EXC-01)", ExceptionTagPrefix, rule, reason)
				default:
					f.Status, f.Reason = Exception, reason
				}
			}
		}
		out = append(out, f)
	}
	envs := s.AllowedEnv
	if len(envs) == 0 {
		envs = DefaultEnvs()
	}

	// DDB-NAME-01
	if FollowsNamingRule(name, envs) {
		add(Name01, name, true, "name is {env}-{product}-{usage}")
	} else {
		add(Name01, name, false, fmt.Sprintf("name %q is not {env}-{product}-{usage} in lower case with env one of %s; recreate the table under a compliant name", name, strings.Join(envs, ",")))
	}

	// DDB-NAME-02 and DDB-IDX-02, per index
	type idx struct {
		kind, name string
		proj       *types.Projection
	}
	var idxs []idx
	for _, g := range s.Table.GlobalSecondaryIndexes {
		idxs = append(idxs, idx{"gsi", deref(g.IndexName), g.Projection})
	}
	for _, l := range s.Table.LocalSecondaryIndexes {
		idxs = append(idxs, idx{"lsi", deref(l.IndexName), l.Projection})
	}
	for _, i := range idxs {
		res := name + "/index/" + i.name
		if indexName[i.kind].MatchString(i.name) {
			add(Name02, res, true, fmt.Sprintf("%s name %s is a sequence name", strings.ToUpper(i.kind), i.name))
		} else {
			add(Name02, res, false, fmt.Sprintf("%s name %q is not a sequence name (%s1, %s2, ...); index names must not be built from key attributes", strings.ToUpper(i.kind), i.name, i.kind, i.kind))
		}
		pt := types.ProjectionTypeAll
		if i.proj != nil {
			pt = i.proj.ProjectionType
		}
		if pt == types.ProjectionTypeAll {
			add(Idx02, res, false, "projection ALL needs architect approval; use INCLUDE with the attributes queries read, or KEYS_ONLY")
		} else {
			add(Idx02, res, true, "projection "+string(pt))
		}
	}

	// DDB-NAME-03: TTL on `ttl`
	ttlOn := s.TTL != nil && (s.TTL.TimeToLiveStatus == types.TimeToLiveStatusEnabled || s.TTL.TimeToLiveStatus == types.TimeToLiveStatusEnabling)
	switch {
	case ttlOn && deref(s.TTL.AttributeName) == "ttl":
		add(Name03, name, true, "TTL on attribute ttl")
	case ttlOn:
		add(Name03, name, false, fmt.Sprintf("TTL is on attribute %q; the guideline names it ttl (Number, epoch seconds)", deref(s.TTL.AttributeName)))
	default:
		add(Name03, name, false, "TTL is off; enable it on attribute ttl from the start")
	}

	// DDB-CAP-01
	mode := types.BillingModeProvisioned
	if s.Table.BillingModeSummary != nil {
		mode = s.Table.BillingModeSummary.BillingMode
	}
	if mode == types.BillingModePayPerRequest {
		add(Cap01, name, true, "billing mode PAY_PER_REQUEST")
	} else {
		add(Cap01, name, false, "billing mode PROVISIONED without a recorded reason; switch to PAY_PER_REQUEST or record the reason (provisioned_reason in the module)")
	}

	evaluateCostCeiling(s, mode, add)

	// DDB-STREAM-01
	if ss := s.Table.StreamSpecification; ss != nil && isTrue(ss.StreamEnabled) {
		if ss.StreamViewType == types.StreamViewTypeNewAndOldImages {
			add(Stream01, name, true, "stream view type NEW_AND_OLD_IMAGES")
		} else {
			add(Stream01, name, false, fmt.Sprintf("stream view type %s; consumers and global tables need NEW_AND_OLD_IMAGES", ss.StreamViewType))
		}
	} else {
		add(Stream01, name, true, "streams off")
	}

	// DDB-PROT-01
	if isTrue(s.Table.DeletionProtectionEnabled) {
		add(Prot01, name, true, "deletion protection on")
	} else {
		add(Prot01, name, false, "deletion protection is off; turn it on (aws dynamodb update-table --deletion-protection-enabled)")
	}

	// DDB-PITR-01
	switch {
	case s.PITR == nil || s.PITR.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusEnabled:
		add(Pitr01, name, false, "point-in-time recovery is off; enable it with a 35-day recovery period")
	case s.PITR.RecoveryPeriodInDays != nil && *s.PITR.RecoveryPeriodInDays < 35:
		add(Pitr01, name, false, fmt.Sprintf("recovery period is %d days; the guideline wants 35", *s.PITR.RecoveryPeriodInDays))
	default:
		add(Pitr01, name, true, "PITR on, 35-day recovery period")
	}

	evaluateReplicas(s, name, add)

	// DDB-SEC-04: always encrypted at rest; report which key.
	key := "AWS owned key"
	if sse := s.Table.SSEDescription; sse != nil && sse.SSEType == types.SSETypeKms {
		key = "KMS key " + deref(sse.KMSMasterKeyArn)
	}
	add(Sec04, name, true, "encrypted at rest with the "+key)

	evaluateTenantKeys(s, add)

	if s.Monitoring != nil {
		evaluateMonitoring(s, add)
	}

	sort.SliceStable(out, func(i, j int) bool { return ruleOrder(out[i].Rule) < ruleOrder(out[j].Rule) })
	return out
}

func ruleOrder(id string) int {
	for i, r := range Rules() {
		if r.ID == id {
			return i
		}
	}
	return len(Rules())
}

// Key identifies the finding's resource across runs and accounts: its ARN,
// and for a resource that has no ARN of its own here (a stream consumer,
// located by its table's ARN) the ARN with the resource's path under the
// table (".../table/t/consumer/fn"). Without an ARN, the resource name.
func (f Finding) Key() string {
	if f.ARN == "" {
		return f.Resource
	}
	if rest, ok := strings.CutPrefix(f.Resource, f.Table+"/"); ok && !strings.HasPrefix(rest, "index/") {
		return f.ARN + "/" + rest
	}
	return f.ARN
}

var regionName = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)

// ResourceARN returns the ARN of a finding's resource from its table's ARN:
// name/index/gsi1 is the index ARN, name@region the replica's table ARN in
// that region; anything else (a stream consumer) the table's ARN.
func ResourceARN(tableARN, name, resource string) string {
	if tableARN == "" {
		return ""
	}
	if idx, ok := strings.CutPrefix(resource, name+"/index/"); ok {
		return tableARN + "/index/" + idx
	}
	if region, ok := strings.CutPrefix(resource, name+"@"); ok && regionName.MatchString(region) {
		// arn:partition:dynamodb:region:account:table/name
		parts := strings.SplitN(tableARN, ":", 6)
		if len(parts) == 6 {
			parts[3] = region
			return strings.Join(parts, ":")
		}
	}
	return tableARN
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func isTrue(b *bool) bool { return b != nil && *b }

// evaluateReplicas checks deletion protection and PITR of every replica of a
// global table in its own region (DDB-PROT-01, DDB-PITR-01). A replica that
// could not be read fails both: dynops cannot show it is protected.
func evaluateReplicas(s TableState, name string, add func(rule, resource string, ok bool, msg string)) {
	for _, r := range s.Replicas {
		res := name + "@" + r.Region
		if r.Err != nil {
			msg := fmt.Sprintf("replica in %s could not be read (%v); treated as unprotected until it can be", r.Region, r.Err)
			add(Prot01, res, false, msg)
			add(Pitr01, res, false, msg)
			continue
		}
		if isTrue(r.DeletionProtection) {
			add(Prot01, res, true, "replica deletion protection on")
		} else {
			add(Prot01, res, false, fmt.Sprintf("replica in %s has deletion protection off; manage it with modules/dynamodb-table-replica (deletion_protection_enabled) or aws dynamodb update-table --region %s --deletion-protection-enabled", r.Region, r.Region))
		}
		switch {
		case r.PITR == nil || r.PITR.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusEnabled:
			add(Pitr01, res, false, fmt.Sprintf("replica in %s has point-in-time recovery off", r.Region))
		case r.PITR.RecoveryPeriodInDays != nil && s.PITR != nil && s.PITR.RecoveryPeriodInDays != nil && *r.PITR.RecoveryPeriodInDays != *s.PITR.RecoveryPeriodInDays:
			add(Pitr01, res, false, fmt.Sprintf("replica in %s keeps %d days of PITR, the table %d", r.Region, *r.PITR.RecoveryPeriodInDays, *s.PITR.RecoveryPeriodInDays))
		case r.PITR.RecoveryPeriodInDays != nil && *r.PITR.RecoveryPeriodInDays < 35:
			add(Pitr01, res, false, fmt.Sprintf("replica in %s keeps %d days of PITR; the guideline wants 35", r.Region, *r.PITR.RecoveryPeriodInDays))
		default:
			add(Pitr01, res, true, "replica PITR on, same period as the table")
		}
	}
}
