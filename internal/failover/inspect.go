package failover

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// Target is what a DR command works on.
type Target struct {
	Table string `json:"table"`
	// Regions holds the table in every region it has (the replicas).
	Regions []string `json:"regions"`
	// Pointer is the SSM parameter, in every region, that names the active region.
	Pointer string `json:"pointer"`
	// HealthChecks are Route 53 health checks by region (optional): the
	// failover records of modules/dr.
	HealthChecks map[string]string `json:"health_checks,omitempty"`
	// BreakGlassRoleARN is the one role a fence may exempt besides
	// replication ("" : none); a fence exempting any other is no fence.
	BreakGlassRoleARN string `json:"break_glass_role_arn,omitempty"`
}

// DefaultPointer is the pointer parameter modules/dr creates for table.
func DefaultPointer(table string) string { return "/dynops/dr/" + table + "/active-region" }

// DiscoverRegions returns home and every replica region the table lists there.
func DiscoverRegions(ctx context.Context, db DynamoDB, table, home string) ([]string, error) {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return nil, fmt.Errorf("describing %s in %s: %w", table, home, err)
	}
	regions := []string{home}
	for _, r := range out.Table.Replicas {
		if name := aws.ToString(r.RegionName); name != home {
			regions = append(regions, name)
		}
	}
	return regions, nil
}

// Latency is ReplicationLatency from one region into another over the window.
type Latency struct {
	Receiving  string        `json:"receiving_region"`
	Max        time.Duration `json:"max_ns"`
	Avg        time.Duration `json:"avg_ns"`
	Datapoints int           `json:"datapoints"`
	Error      string        `json:"error,omitempty"`
}

// KeyAttr is one key attribute of the table.
type KeyAttr struct {
	Name string `json:"name"`
	Type string `json:"type"` // S, N or B
}

// RegionState is what one region says about the table.
type RegionState struct {
	Region string `json:"region"`
	// Answers is false when the region's DynamoDB endpoint did not answer
	// (a regional outage, or no network); Error says why.
	Answers            bool              `json:"answers"`
	Error              string            `json:"error,omitempty"`
	TableExists        bool              `json:"table_exists"`
	TableStatus        string            `json:"table_status,omitempty"`
	TableARN           string            `json:"table_arn,omitempty"`
	DeletionProtection bool              `json:"deletion_protection"`
	Replicas           map[string]string `json:"replicas,omitempty"` // region -> ReplicaStatus, as this region lists them
	HashKey            KeyAttr           `json:"hash_key"`
	RangeKey           *KeyAttr          `json:"range_key,omitempty"`
	// Fenced is read from the policy's content (FenceHolds), not a Sid.
	Fenced bool `json:"fenced"`
	// FenceDetail names the statement that fences, or why none does.
	FenceDetail string `json:"fence_detail,omitempty"`
	// FenceSid is the Sid of dynops's fence statement in the policy
	// (FenceSid, or FailbackFenceSid: a failback's temporary fence), "" when none.
	FenceSid     string    `json:"fence_sid,omitempty"`
	Policy       string    `json:"-"`
	PolicyError  string    `json:"policy_error,omitempty"`
	Pointer      string    `json:"pointer,omitempty"`
	PointerError string    `json:"pointer_error,omitempty"`
	Latency      []Latency `json:"replication_latency,omitempty"`
	// Consistency is the table's MultiRegionConsistency as DescribeTable
	// says it: STRONG (MRSC), EVENTUAL (MREC) or "" (not given: MREC).
	Consistency string `json:"multi_region_consistency,omitempty"`
	// Witnesses are the witness regions of an MRSC table, with their status.
	Witnesses map[string]string `json:"witnesses,omitempty"`
}

// MRSC reports whether any region that answers describes the table as a
// multi-Region strong consistency global table.
func (s State) MRSC() bool {
	for _, rs := range s.Regions {
		if rs.Consistency == string(types.MultiRegionConsistencyStrong) {
			return true
		}
	}
	return false
}

// MRSCNote says what a failover means for an MRSC table; "" for any other.
func (s State) MRSCNote() string {
	if !s.MRSC() {
		return ""
	}
	witnesses := map[string]string{}
	for _, rs := range s.Regions {
		for w, st := range rs.Witnesses {
			witnesses[w] = st
		}
	}
	var ws []string
	for _, w := range slices.Sorted(maps.Keys(witnesses)) {
		ws = append(ws, w+" ("+witnesses[w]+")")
	}
	witness := "no witness (three replicas)"
	if len(ws) > 0 {
		witness = "witness " + strings.Join(ws, ", ")
	}
	return fmt.Sprintf("MULTI-REGION STRONG CONSISTENCY (MRSC), %s: RPO 0, every write that succeeded is in every replica; a failover needs no drain and loses nothing: the application moves its traffic to a replica that answers, which takes writes as long as a majority of the regions (witness included) answers", witness)
}

// State is the table seen from every region.
type State struct {
	Target  Target        `json:"target"`
	Regions []RegionState `json:"regions"`
	// Active is the region every answering pointer names; "" when they disagree or none answers.
	Active string `json:"active_region"`
}

// Region returns the state of region r.
func (s State) Region(r string) (RegionState, bool) {
	for _, rs := range s.Regions {
		if rs.Region == r {
			return rs, true
		}
	}
	return RegionState{}, false
}

// Pointers returns the pointer value of every region where it could be read.
func (s State) Pointers() map[string]string {
	m := map[string]string{}
	for _, rs := range s.Regions {
		if rs.PointerError == "" && rs.Pointer != "" {
			m[rs.Region] = rs.Pointer
		}
	}
	return m
}

// HalfDone describes a switch that stopped between its steps (killed, or a
// step failed), or "" when the state is consistent: the region every pointer
// names is fenced (a failover fenced the old region and never flipped the
// pointer), or the pointers disagree (a flip reached some regions only).
func (s State) HalfDone() string {
	ptrs := s.Pointers()
	values := map[string]bool{}
	for _, v := range ptrs {
		values[v] = true
	}
	if len(values) > 1 {
		var parts []string
		for _, r := range s.Regions {
			if v, ok := ptrs[r.Region]; ok {
				parts = append(parts, r.Region+" says "+v)
			}
		}
		return fmt.Sprintf("HALF-DONE: the pointers disagree (%s): a switch stopped while flipping them; run the same dynops dr failover/failback again to finish it", strings.Join(parts, ", "))
	}
	if s.Active == "" {
		return ""
	}
	// The region to finish the switch to: the one other replica not
	// fenced (a failover stopped after fencing every other), else any.
	var others, open []string
	for _, r := range s.Regions {
		if r.Region != s.Active {
			others = append(others, r.Region)
			if !r.Fenced {
				open = append(open, r.Region)
			}
		}
	}
	if len(open) == 1 {
		others = open
	}
	if len(others) > 1 {
		others = []string{"REGION (one of " + strings.Join(others, ", ") + ")"}
	}
	if a, ok := s.Region(s.Active); ok && a.Fenced {
		if a.FenceSid == FailbackFenceSid {
			return fmt.Sprintf("HALF-DONE: the active region %s is fenced but the pointer still names it (a failback stopped between its fence, statement %s, and the pointer flip): writes go nowhere; finish it with `dynops dr failback --table %s --to %s --yes`",
				s.Active, FailbackFenceSid, s.Target.Table, strings.Join(others, ","))
		}
		return fmt.Sprintf("HALF-DONE: the active region %s is fenced but the pointer still names it (a failover stopped between the fence and the pointer flip, e.g. during its drain): writes go nowhere; finish it with `dynops dr failover --table %s --to %s --yes`, or undo it with `dynops dr failback --table %s --to %s --yes`",
			s.Active, s.Target.Table, strings.Join(others, ","), s.Target.Table, s.Active)
	}
	// A failback's fence outlives the failback only when it stopped after
	// its pointer flip and before its last step (unfence-old): the pointer
	// names where writes go back to, the region left still refuses writes.
	// Not the end state of anything: a finished failback leaves no fence,
	// a failover leaves its own (FenceSid).
	var left []string
	for _, r := range s.Regions {
		if r.Region != s.Active && r.FenceSid == FailbackFenceSid {
			left = append(left, r.Region)
		}
	}
	if len(left) > 0 {
		return fmt.Sprintf("HALF-DONE: the pointer names %s, but %s still carries the temporary fence of a failback (statement %s), which a finished failback removes: a failback stopped after its pointer flip, before unfencing %s; finish it with `dynops dr failback --table %s --to %s --yes`",
			s.Active, strings.Join(left, ","), FailbackFenceSid, strings.Join(left, ","), s.Target.Table, s.Active)
	}
	return ""
}

// Replicated reports whether the tables in a and b are replicas of one global table.
func (s State) Replicated(a, b string) bool {
	ra, _ := s.Region(a)
	rb, _ := s.Region(b)
	_, ab := ra.Replicas[b]
	_, ba := rb.Replicas[a]
	return ab || ba
}

// Inspect reads the table, its fence, the pointer and ReplicationLatency in
// every region of t. A region that does not answer is recorded, not an error.
func Inspect(ctx context.Context, clients Regional, t Target, window time.Duration, now time.Time) State {
	s := State{Target: t}
	for _, r := range t.Regions {
		s.Regions = append(s.Regions, inspectRegion(ctx, clients(r), t, r, window, now))
	}
	s.Active = s.activeRegion()
	return s
}

// activeRegion is the region every readable pointer names, "" when they
// disagree or none can be read.
func (s State) activeRegion() string {
	seen := map[string]bool{}
	for _, v := range s.Pointers() {
		seen[v] = true
	}
	if len(seen) == 1 {
		for v := range seen {
			return v
		}
	}
	return ""
}

func inspectRegion(ctx context.Context, c Clients, t Target, region string, window time.Duration, now time.Time) RegionState {
	rs := RegionState{Region: region, Answers: true}
	dt, err := c.DynamoDB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &t.Table})
	switch {
	case apiCode(err) == "ResourceNotFoundException":
		rs.Error = fmt.Sprintf("table %s does not exist in %s", t.Table, region)
	case err != nil:
		rs.Answers = false
		rs.Error = fmt.Sprintf("DynamoDB in %s does not answer: %v", region, err)
		return rs
	default:
		readTable(&rs, dt.Table)
	}
	if rs.TableExists {
		rs.Policy, _, err = ResourcePolicy(ctx, c.DynamoDB, rs.TableARN)
		if err != nil {
			rs.PolicyError = err.Error()
		}
		rs.Fenced, rs.FenceDetail = FenceHolds(rs.Policy, rs.TableARN, t.BreakGlassRoleARN)
		rs.FenceSid = FenceSidOf(rs.Policy)
		if !rs.Fenced && HasFence(rs.Policy) {
			// dynops' statement is there but does not fence: say so (e.g. a wildcard exemption).
			rs.FenceDetail = "statement " + FenceSid + " present but NOT a fence: " + rs.FenceDetail
		}
	}
	p, err := c.SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: &t.Pointer})
	switch {
	case apiCode(err) == "ParameterNotFound":
		rs.PointerError = fmt.Sprintf("parameter %s does not exist in %s (apply modules/dr)", t.Pointer, region)
	case err != nil:
		rs.PointerError = fmt.Sprintf("reading %s in %s: %v", t.Pointer, region, err)
	default:
		rs.Pointer = aws.ToString(p.Parameter.Value)
	}
	for _, other := range t.Regions {
		if other != region {
			rs.Latency = append(rs.Latency, replicationLatency(ctx, c.CloudWatch, t.Table, other, window, now))
		}
	}
	return rs
}

func readTable(rs *RegionState, t *types.TableDescription) {
	rs.TableExists = true
	rs.TableStatus = string(t.TableStatus)
	rs.TableARN = aws.ToString(t.TableArn)
	rs.DeletionProtection = aws.ToBool(t.DeletionProtectionEnabled)
	attrTypes := map[string]string{}
	for _, a := range t.AttributeDefinitions {
		attrTypes[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	for _, k := range t.KeySchema {
		ka := KeyAttr{Name: aws.ToString(k.AttributeName), Type: attrTypes[aws.ToString(k.AttributeName)]}
		if k.KeyType == "HASH" {
			rs.HashKey = ka
		} else {
			rs.RangeKey = &ka
		}
	}
	rs.Consistency = string(t.MultiRegionConsistency)
	for _, w := range t.GlobalTableWitnesses {
		if rs.Witnesses == nil {
			rs.Witnesses = map[string]string{}
		}
		rs.Witnesses[aws.ToString(w.RegionName)] = string(w.WitnessStatus)
	}
	if len(t.Replicas) > 0 {
		rs.Replicas = map[string]string{}
		for _, r := range t.Replicas {
			rs.Replicas[aws.ToString(r.RegionName)] = string(r.ReplicaStatus)
		}
	}
}

// replicationLatency reads the ReplicationLatency metric the source region
// publishes for receiving (namespace AWS/DynamoDB, dimensions TableName and
// ReceivingRegion): the maximum and the average over window.
func replicationLatency(ctx context.Context, cw CloudWatch, table, receiving string, window time.Duration, now time.Time) Latency {
	l := Latency{Receiving: receiving}
	metric := &cwtypes.Metric{
		Namespace:  aws.String("AWS/DynamoDB"),
		MetricName: aws.String("ReplicationLatency"),
		Dimensions: []cwtypes.Dimension{
			{Name: aws.String("TableName"), Value: aws.String(table)},
			{Name: aws.String("ReceivingRegion"), Value: aws.String(receiving)},
		},
	}
	q := func(id, stat string) cwtypes.MetricDataQuery {
		return cwtypes.MetricDataQuery{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{Metric: metric, Period: aws.Int32(60), Stat: aws.String(stat)}}
	}
	in := &cloudwatch.GetMetricDataInput{
		StartTime:         aws.Time(now.Add(-window)),
		EndTime:           aws.Time(now.Add(time.Minute)),
		MetricDataQueries: []cwtypes.MetricDataQuery{q("maximum", "Maximum"), q("average", "Average")},
	}
	var sum float64
	for p := cloudwatch.NewGetMetricDataPaginator(cw, in); p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			l.Error = fmt.Sprintf("reading ReplicationLatency into %s: %v", receiving, err)
			return l
		}
		for _, r := range out.MetricDataResults {
			for _, v := range r.Values {
				d := time.Duration(v * float64(time.Millisecond)) // the metric is in milliseconds
				switch aws.ToString(r.Id) {
				case "maximum":
					l.Max = max(l.Max, d)
				case "average":
					sum += v
					l.Datapoints++
				}
			}
		}
	}
	if l.Datapoints > 0 {
		l.Avg = time.Duration(sum / float64(l.Datapoints) * float64(time.Millisecond))
	}
	return l
}

// LatencyInto returns the latency region src reports into dst.
func (rs RegionState) LatencyInto(dst string) (Latency, bool) {
	for _, l := range rs.Latency {
		if l.Receiving == dst {
			return l, true
		}
	}
	return Latency{}, false
}
