// Package throttle says why DynamoDB throttled a request and what to do
// about it. DynamoDB's throttling exceptions (ThrottlingException,
// ProvisionedThroughputExceededException, RequestLimitExceeded) carry
// ThrottlingReasons: a reason <Table|Index><Read|Write><LimitType> and the
// ARN of the table or index. Explain classifies one into a cause (hot key,
// on-demand maximum, account quota, provisioned capacity) with the fix for
// that cause; a Recorder counts every throttled attempt of a run per reason
// (the SDK retries throttles, so most never reach a command), through
// Middleware on the run's DynamoDB clients.
//
// Sources: the DynamoDB API reference ThrottlingReason and the developer
// guide's "DynamoDB throttling resolution guide" (16 reasons in four
// families) and "CloudWatch throttling metrics".
package throttle

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Cause is the family of a throttling reason: each has its own fix.
type Cause string

// The causes, from the reason's LimitType suffix.
const (
	HotKey      Cause = "hot key"                  // KeyRangeThroughputExceeded
	OnDemandMax Cause = "on-demand maximum"        // MaxOnDemandThroughputExceeded
	Account     Cause = "account quota"            // AccountLimitExceeded
	Provisioned Cause = "provisioned capacity"     // ProvisionedThroughputExceeded
	Unknown     Cause = "no reason given"          // an exception without ThrottlingReasons (older endpoints, emulators)
	Other       Cause = "reason unknown to dynops" // a reason DynamoDB added after this release
)

// NoReason is the reason counted for a throttle that carried none.
const NoReason = "Unspecified"

// suffixes map the LimitType of a reason to its cause.
var suffixes = []struct {
	suffix string
	cause  Cause
}{
	{"KeyRangeThroughputExceeded", HotKey},
	{"MaxOnDemandThroughputExceeded", OnDemandMax},
	{"AccountLimitExceeded", Account},
	{"ProvisionedThroughputExceeded", Provisioned},
}

// Reason is one throttling reason of an exception.
type Reason struct {
	Reason   string `json:"reason"`
	Resource string `json:"resource,omitempty"` // the table or index ARN
}

// Explanation is a reason classified: the cause, what was throttled and what to do.
type Explanation struct {
	Reason
	Cause Cause  `json:"cause"`
	Table string `json:"table,omitempty"`
	Index string `json:"index,omitempty"`
	// Write: a write was throttled (else a read).
	Write  bool   `json:"write"`
	Advice string `json:"advice"`
}

// Reasons returns the throttling reasons of err's DynamoDB throttling
// exception, and whether err is one. An exception without reasons gives
// one Reason{NoReason}.
func Reasons(err error) ([]Reason, bool) {
	var list []types.ThrottlingReason
	var te *types.ThrottlingException
	var pe *types.ProvisionedThroughputExceededException
	var re *types.RequestLimitExceeded
	switch {
	case errors.As(err, &te):
		list = te.ThrottlingReasons
	case errors.As(err, &pe):
		list = pe.ThrottlingReasons
	case errors.As(err, &re):
		list = re.ThrottlingReasons
	default:
		return nil, false
	}
	if len(list) == 0 {
		return []Reason{{Reason: NoReason}}, true
	}
	out := make([]Reason, 0, len(list))
	for _, r := range list {
		reason := aws.ToString(r.Reason)
		if reason == "" {
			reason = NoReason
		}
		out = append(out, Reason{Reason: reason, Resource: aws.ToString(r.Resource)})
	}
	return out, true
}

// Explain classifies r. key, when not empty, is the key the command was
// reading or writing (named in a hot key's advice).
func Explain(r Reason, key string) Explanation {
	e := Explanation{Reason: r, Cause: Other}
	e.Table, e.Index = resourceNames(r.Resource)
	e.Write = strings.Contains(r.Reason, "Write")
	if r.Reason == NoReason {
		e.Cause = Unknown
	}
	for _, s := range suffixes {
		if strings.HasSuffix(r.Reason, s.suffix) {
			e.Cause = s.cause
		}
	}
	e.Advice = advice(e, key)
	return e
}

// what names the throttled table or index for a sentence.
func (e Explanation) what() string {
	switch {
	case e.Index != "":
		return fmt.Sprintf("index %s of table %s", e.Index, e.Table)
	case e.Table != "":
		return "table " + e.Table
	}
	return "the table"
}

func advice(e Explanation, key string) string {
	rw, units, input := "read", "MaxReadRequestUnits", "max_read_request_units"
	if e.Write {
		rw, units, input = "write", "MaxWriteRequestUnits", "max_write_request_units"
	}
	switch e.Cause {
	case HotKey:
		k := "one partition key"
		if key != "" {
			k = "the key " + key
		}
		ci := "aws dynamodb update-contributor-insights --table-name " + orT(e.Table)
		if e.Index != "" {
			ci += " --index-name " + e.Index
		}
		ci += " --contributor-insights-action ENABLE --contributor-insights-mode THROTTLED_KEYS"
		return fmt.Sprintf("hot key: %ss to %s of %s exceed one partition's limit (in any capacity mode; more capacity does not help); "+
			"find the keys with Contributor Insights in throttled-keys mode (%s), then spread the key (write sharding) or cache its reads (runbooks/throttling.md#hot-key)",
			rw, k, e.what(), ci)
	case OnDemandMax:
		return fmt.Sprintf("the on-demand maximum of %s caps its %ss (the cost ceiling doing its job): if the traffic is expected, raise %s "+
			"(UpdateTable OnDemandThroughput, or the module input on_demand_throughput.%s) (runbooks/throttling.md#on-demand-maximum)",
			e.what(), rw, units, input)
	case Account:
		return fmt.Sprintf("%s reached the account's per-table %s throughput quota in its region: request an increase in Service Quotas "+
			"(service DynamoDB, \"Table-level %s throughput limit\") (runbooks/throttling.md#account-quota)", e.what(), rw, rw)
	case Provisioned:
		return fmt.Sprintf("%s uses more than its provisioned %s capacity: raise the capacity or its auto scaling maximum, or switch it to on-demand "+
			"(runbooks/throttling.md#provisioned-capacity)", e.what(), rw)
	case Unknown:
		return "DynamoDB gave no reason (an endpoint that predates throttling reasons, or an emulator): read the per-cause throttle metrics in CloudWatch (runbooks/throttling.md#diagnose)"
	}
	return "a throttling reason this dynops does not know: see the DynamoDB developer guide's throttling resolution guide (runbooks/throttling.md#diagnose)"
}

func orT(s string) string {
	if s == "" {
		return "TABLE"
	}
	return s
}

// resourceNames reads the table and index names of a DynamoDB ARN
// (arn:aws:dynamodb:REGION:ACCOUNT:table/T[/index/I]).
func resourceNames(arn string) (table, index string) {
	i := strings.Index(arn, ":table/")
	if i < 0 {
		return "", ""
	}
	parts := strings.Split(arn[i+len(":table/"):], "/")
	table = parts[0]
	if len(parts) >= 3 && parts[1] == "index" {
		index = parts[2]
	}
	return table, index
}

// Describe is the message of a throttling error: each reason, what was
// throttled and what to do (key as in Explain). "" when err is not a
// DynamoDB throttling exception.
func Describe(err error, key string) string {
	rs, ok := Reasons(err)
	if !ok {
		return ""
	}
	lines := make([]string, 0, len(rs))
	for _, r := range rs {
		e := Explain(r, key)
		lines = append(lines, fmt.Sprintf("throttled (%s) on %s: %s", e.Reason.Reason, e.what(), e.Advice))
	}
	return strings.Join(lines, "; ")
}

// Recorder counts the throttled attempts of a run, per reason. The zero
// value is not usable; a nil *Recorder records nothing.
type Recorder struct {
	mu     sync.Mutex
	counts map[string]int64
	first  map[string]Reason // the first resource seen per reason
	order  []string
	// onFirst is told of the first throttle of each reason (the progress line).
	onFirst func(Explanation)
}

// NewRecorder returns a Recorder; onFirst, when not nil, is called once per
// reason, at its first throttle.
func NewRecorder(onFirst func(Explanation)) *Recorder {
	return &Recorder{counts: map[string]int64{}, first: map[string]Reason{}, onFirst: onFirst}
}

// Observe records err when it is a DynamoDB throttling exception.
func (r *Recorder) Observe(err error) {
	if r == nil || err == nil {
		return
	}
	rs, ok := Reasons(err)
	if !ok {
		return
	}
	var fresh []Reason
	r.mu.Lock()
	for _, x := range rs {
		if _, seen := r.first[x.Reason]; !seen {
			r.first[x.Reason] = x
			r.order = append(r.order, x.Reason)
			fresh = append(fresh, x)
		}
		r.counts[x.Reason]++
	}
	r.mu.Unlock()
	if r.onFirst != nil {
		for _, x := range fresh {
			r.onFirst(Explain(x, ""))
		}
	}
}

// Counts returns the throttled attempts per reason (nil when none).
func (r *Recorder) Counts() map[string]int64 {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.counts) == 0 {
		return nil
	}
	out := make(map[string]int64, len(r.counts))
	for k, v := range r.counts {
		out[k] = v
	}
	return out
}

// Summary is one line per reason, in the order they were first met:
// "<n> x <reason> on <what>: <advice>". Empty when nothing was throttled.
func (r *Recorder) Summary() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.order))
	for _, reason := range r.order {
		e := Explain(r.first[reason], "")
		out = append(out, fmt.Sprintf("%d x %s on %s: %s", r.counts[reason], reason, e.what(), e.Advice))
	}
	return out
}

// AuditCounts are Counts named for the audit record: throttled.<reason>.
func (r *Recorder) AuditCounts() map[string]int64 {
	c := r.Counts()
	if c == nil {
		return nil
	}
	out := make(map[string]int64, len(c))
	for k, v := range c {
		out["throttled."+k] = v
	}
	return out
}

// keyed is a throttling error of a request on one key: its message names
// the key in each hot-key advice.
type keyed struct {
	err error
	key string
}

func (k *keyed) Error() string { return k.err.Error() + "\n" + Describe(k.err, k.key) }
func (k *keyed) Unwrap() error { return k.err }

// WithKey returns err with its throttling reasons explained for key (the
// key as DynamoDB JSON, which the audit log hashes); err unchanged when it
// is not a throttling exception.
func WithKey(err error, key string) error {
	if _, ok := Reasons(err); !ok {
		return err
	}
	return &keyed{err: err, key: key}
}

// Unexplained is Describe(err, "") for an error whose message does not
// explain its throttling reasons yet (WithKey did not wrap it): what root
// adds to a failed command's message.
func Unexplained(err error) string {
	var k *keyed
	if errors.As(err, &k) {
		return ""
	}
	return Describe(err, "")
}
