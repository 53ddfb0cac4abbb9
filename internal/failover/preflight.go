package failover

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Mode is the direction of a switch.
type Mode string

// Modes of a switch.
const (
	// Failover moves writes away from the active region and leaves it fenced.
	Failover Mode = "failover"
	// Failback returns writes to a fenced region and removes every fence.
	Failback Mode = "failback"
)

// CheckStatus is the outcome of one preflight check.
type CheckStatus string

// Check outcomes: only Fail refuses the switch.
const (
	CheckOK      CheckStatus = "ok"
	CheckWarn    CheckStatus = "warn"
	CheckSkipped CheckStatus = "skipped"
	CheckFail    CheckStatus = "fail"
)

// Check is one preflight check.
type Check struct {
	Name   string      `json:"name"`
	Status CheckStatus `json:"status"`
	Detail string      `json:"detail"`
}

// Rules tune the preflight.
type Rules struct {
	Mode      Mode
	From, To  string
	FromGiven bool // --from was given: pointers that disagree only warn
	// Resume: --from was not given, the pointer already names To (in some
	// or every region) and From is the one other fenced region: a switch
	// that stopped at or after its pointer flip, which this run finishes
	// (see defaultFrom).
	Resume     bool
	MaxLatency time.Duration // --max-replication-latency
	Window     time.Duration // how far back latency is read
	// Force skips the checks the old region cannot answer (a regional outage).
	Force bool
	// AllowUnreplicated accepts tables that are not replicas of one global
	// table (stand-ins, e.g. on the local emulator): nothing replicates.
	AllowUnreplicated bool
	// Drain shapes the wait between the fence and the pointer flip (zero: the defaults).
	Drain DrainRules
}

// Refused returns the failing checks' details, or nil when the switch may go ahead.
func Refused(checks []Check) []string {
	var why []string
	for _, c := range checks {
		if c.Status == CheckFail {
			why = append(why, c.Name+": "+c.Detail)
		}
	}
	return why
}

// Preflight decides whether writes may move from r.From to r.To, check by check.
func Preflight(s State, r Rules) []Check {
	from, fromKnown := s.Region(r.From)
	to, toKnown := s.Region(r.To)
	var checks []Check
	add := func(name string, st CheckStatus, format string, args ...any) {
		checks = append(checks, Check{Name: name, Status: st, Detail: fmt.Sprintf(format, args...)})
	}
	if !toKnown {
		add("target-table", CheckFail, "%s is not one of the table's regions (%s); pass --regions to list them", r.To, strings.Join(s.Target.Regions, ", "))
		return checks
	}
	if !fromKnown {
		add("old-region", CheckFail, "%s is not one of the table's regions (%s); pass --from with one of them", r.From, strings.Join(s.Target.Regions, ", "))
		return checks
	}
	if r.From == r.To {
		add("target-table", CheckFail, "writes are already meant to go to %s (the pointer names it)", r.To)
		return checks
	}

	// The old region: the only checks --force may skip are the ones it cannot answer.
	oldDown := !from.Answers
	switch {
	case oldDown && r.Force:
		add("old-region", CheckSkipped, "%s does not answer (--force): it cannot be fenced or asked for its replication latency; writes it took and did not replicate are lost (RPO)", r.From)
	case oldDown:
		add("old-region", CheckFail, "%s; if the region is down, pass --force to fail over without it", from.Error)
	case !from.TableExists:
		add("old-region", CheckFail, "%s", from.Error)
	default:
		add("old-region", CheckOK, "%s answers; table %s", r.From, from.TableStatus)
	}

	// The target must answer whatever --force says.
	switch {
	case !to.Answers || !to.TableExists:
		add("target-table", CheckFail, "%s", to.Error)
		return checks
	case to.TableStatus != "ACTIVE":
		add("target-table", CheckFail, "table in %s is %s, not ACTIVE", r.To, to.TableStatus)
	default:
		add("target-table", CheckOK, "table in %s is ACTIVE", r.To)
	}

	replicated := s.Replicated(r.From, r.To)
	switch {
	case replicated:
		status := from.Replicas[r.To]
		if status == "" {
			status = to.Replicas[r.To]
		}
		if status == "" || status == "ACTIVE" {
			add("target-replica", CheckOK, "%s is a replica of the global table (ACTIVE)", r.To)
		} else {
			add("target-replica", CheckFail, "replica in %s is %s, not ACTIVE", r.To, status)
		}
	case r.AllowUnreplicated:
		add("target-replica", CheckWarn, "the tables in %s and %s are not replicas of one global table (--allow-unreplicated): nothing replicates between them", r.From, r.To)
	default:
		add("target-replica", CheckFail, "the table in %s lists no replica in %s: it is not a global table, writes made in %s are not there; add the replica (modules/dynamodb-table replicas) or restore in the region (runbooks/dr-restore-in-region.md)", r.To, r.From, r.From)
	}

	checks = append(checks, latencyCheck(from, r, oldDown, replicated))

	checks = append(checks, targetFenceCheck(s, r, to), pausedCheck(s))
	if c, ok := othersCheck(s, r); ok {
		checks = append(checks, c)
	}
	checks = append(checks, pointerCheck(s, r))
	return checks
}

// fenceOwner names the fence statement a region carries and who owns it.
func fenceOwner(rs RegionState) string {
	switch ownerOf(rs.FenceSid) {
	case OwnerDR:
		if rs.FenceSid == FailbackFenceSid {
			return fmt.Sprintf("the temporary fence of a failback that did not finish (statement %s, owner dynops dr)", rs.FenceSid)
		}
		return fmt.Sprintf("the fence of an earlier failover (statement %s, owner dynops dr)", rs.FenceSid)
	case OwnerMigrate:
		return fmt.Sprintf("the fence of a migration cutover (statement %s, owner dynops migrate; `dynops migrate rollback` removes it)", rs.FenceSid)
	}
	return fmt.Sprintf("a fence dynops did not write (%s)", rs.FenceDetail)
}

// targetFenceCheck says which fence the target carries and who owns it.
// A failover's target must carry no fence. A failback removes the fences
// of dynops dr and no other: a target fenced only by a statement dynops
// did not write is refused (the failback could not lift it), and a
// migration's fence is named, with what it leaves: writes to the table
// there stay denied until `dynops migrate rollback`.
func targetFenceCheck(s State, r Rules, to RegionState) Check {
	c := Check{Name: "target-fence", Status: CheckOK}
	hasDR := ownerOf(to.FenceSid) == OwnerDR
	hasMigrate := ownerOf(to.FenceSid) == OwnerMigrate || HasOwnFence(to.Policy, OwnerMigrate)
	migrate := fmt.Sprintf("the fence of a migration cutover (statement %s, owner dynops migrate)", MigrateFenceSid)
	switch {
	case to.PolicyError != "":
		c.Status, c.Detail = CheckFail, to.PolicyError
	case r.Mode == Failover && to.Fenced:
		c.Status = CheckFail
		c.Detail = fmt.Sprintf("%s carries %s", r.To, fenceOwner(to))
		if hasDR {
			c.Detail += fmt.Sprintf(": to return there, run `dynops dr failback --table %s --to %s`", s.Target.Table, r.To)
		} else {
			c.Detail += ": writes moved there would be denied"
		}
	case r.Mode == Failover && hasMigrate:
		c.Status, c.Detail = CheckFail, fmt.Sprintf("%s carries %s: writes moved there would be denied", r.To, migrate)
	case r.Mode == Failover:
		c.Detail = fmt.Sprintf("%s is not fenced", r.To)
	case hasDR && hasMigrate:
		c.Status = CheckWarn
		c.Detail = fmt.Sprintf("%s carries %s and %s: this failback removes the first only; writes to %s there stay denied until `dynops migrate rollback`", r.To, fenceOwner(to), migrate, s.Target.Table)
	case hasDR && to.Fenced:
		c.Detail = fmt.Sprintf("%s carries %s; this failback removes it", r.To, fenceOwner(to))
	case hasDR:
		c.Status = CheckFail
		c.Detail = fmt.Sprintf("%s carries statement %s of dynops dr, which does not fence (%s): fix or remove it first", r.To, to.FenceSid, to.FenceDetail)
	case hasMigrate:
		c.Status = CheckWarn
		c.Detail = fmt.Sprintf("%s carries no fence of dynops dr, only %s: this failback leaves it, so writes to %s there stay denied until `dynops migrate rollback`", r.To, migrate, s.Target.Table)
	case to.Fenced:
		c.Status = CheckFail
		c.Detail = fmt.Sprintf("%s is fenced by %s: dr failback removes only the fences of dynops dr; remove that statement yourself first", r.To, fenceOwner(to))
	default:
		c.Detail = fmt.Sprintf("%s carries no fence: this failback moves writes there and removes the fences of dynops dr from the other replicas", r.To)
	}
	return c
}

// othersCheck covers the replicas that are neither the old region nor
// the target (three or more regions): a failover fences each (so that
// only the target takes writes), a failback removes its own fences from
// each. Each must answer, or the switch needs --force and says what it
// leaves undone. ok is false with two regions.
func othersCheck(s State, r Rules) (Check, bool) {
	others := othersOf(s.Target, r.From, r.To)
	if len(others) == 0 {
		return Check{}, false
	}
	c := Check{Name: "other-replicas", Status: CheckOK}
	var parts []string
	for _, region := range others {
		rs, _ := s.Region(region)
		switch {
		case !rs.Answers && r.Force:
			c.Status = worse(c.Status, CheckWarn)
			if r.Mode == Failover {
				parts = append(parts, fmt.Sprintf("%s does not answer (--force): it will NOT be fenced and could take writes", region))
			} else {
				parts = append(parts, fmt.Sprintf("%s does not answer (--force): its fence stays", region))
			}
		case !rs.Answers:
			c.Status = CheckFail
			parts = append(parts, fmt.Sprintf("%s; a replica dynops cannot fence could take writes after the switch: if the region is down, pass --force", rs.Error))
		case !rs.TableExists:
			c.Status = CheckFail
			parts = append(parts, rs.Error)
		case rs.PolicyError != "":
			c.Status = CheckFail
			parts = append(parts, rs.PolicyError)
		case r.Mode == Failover && rs.Fenced:
			parts = append(parts, fmt.Sprintf("%s carries %s already", region, fenceOwner(rs)))
		case r.Mode == Failover:
			parts = append(parts, fmt.Sprintf("%s will be fenced", region))
		case HasOwnFence(rs.Policy, OwnerMigrate):
			parts = append(parts, fmt.Sprintf("%s: its fences of dynops dr are removed, the migration's (%s) stays", region, MigrateFenceSid))
		case rs.Fenced:
			parts = append(parts, fmt.Sprintf("%s carries %s: removed at the end", region, fenceOwner(rs)))
		default:
			parts = append(parts, fmt.Sprintf("%s is not fenced: fenced while the pointer moves, then unfenced", region))
		}
	}
	c.Detail = strings.Join(parts, "; ")
	return c, true
}

func worse(a, b CheckStatus) CheckStatus {
	rank := map[CheckStatus]int{CheckOK: 0, CheckSkipped: 1, CheckWarn: 2, CheckFail: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func latencyCheck(from RegionState, r Rules, oldDown, replicated bool) Check {
	c := Check{Name: "replication-latency"}
	l, _ := from.LatencyInto(r.To)
	switch {
	case oldDown && r.Force:
		c.Status, c.Detail = CheckSkipped, fmt.Sprintf("%s does not answer (--force): its ReplicationLatency into %s cannot be read", r.From, r.To)
	case l.Error != "" && r.Force:
		c.Status, c.Detail = CheckSkipped, fmt.Sprintf("CloudWatch in %s does not answer (--force): %s", r.From, l.Error)
	case l.Error != "":
		c.Status, c.Detail = CheckFail, l.Error+"; if the region is down, pass --force"
	case l.Datapoints == 0 && !replicated:
		c.Status, c.Detail = CheckSkipped, fmt.Sprintf("no ReplicationLatency from %s into %s in the last %s, and the tables are not replicas: nothing to measure", r.From, r.To, r.Window)
	case l.Datapoints == 0:
		c.Status, c.Detail = CheckWarn, fmt.Sprintf("no ReplicationLatency from %s into %s in the last %s (no writes replicated in that window)", r.From, r.To, r.Window)
	case l.Max > r.MaxLatency:
		c.Status, c.Detail = CheckFail, fmt.Sprintf("ReplicationLatency %s -> %s max %s (avg %s) over the last %s is above --max-replication-latency %s: writes made in %s may not be in %s yet; wait and retry", r.From, r.To, l.Max, l.Avg, r.Window, r.MaxLatency, r.From, r.To)
	default:
		c.Status, c.Detail = CheckOK, fmt.Sprintf("ReplicationLatency %s -> %s max %s, avg %s (%d datapoints, last %s) <= %s", r.From, r.To, l.Max, l.Avg, l.Datapoints, r.Window, r.MaxLatency)
	}
	return c
}

func pointerCheck(s State, r Rules) Check {
	c := Check{Name: "pointer"}
	to, _ := s.Region(r.To)
	if to.PointerError != "" {
		c.Status, c.Detail = CheckFail, to.PointerError
		return c
	}
	var others []string
	for _, reg := range slices.Sorted(maps.Keys(s.Pointers())) {
		if v := s.Pointers()[reg]; v != r.From {
			others = append(others, reg+"="+v)
		}
	}
	resumed := r.Resume && len(others) > 0
	for _, v := range s.Pointers() {
		resumed = resumed && (v == r.To || v == r.From)
	}
	switch {
	case len(others) == 0:
		c.Status, c.Detail = CheckOK, fmt.Sprintf("%s names %s in every region that answers", s.Target.Pointer, r.From)
	case resumed:
		c.Status, c.Detail = CheckOK, fmt.Sprintf("%s already names %s (%s): an earlier switch stopped midway; this %s finishes the move from %s (every step is idempotent)", s.Target.Pointer, r.To, describePointers(s), r.Mode, r.From)
	case r.FromGiven:
		c.Status, c.Detail = CheckWarn, fmt.Sprintf("%s does not name --from %s in %s; this switch sets it to %s everywhere", s.Target.Pointer, r.From, strings.Join(others, ", "), r.To)
	default:
		c.Status, c.Detail = CheckFail, fmt.Sprintf("%s does not name %s in %s (an earlier switch stopped midway?): roll that back, or pass --from with the region that takes writes", s.Target.Pointer, r.From, strings.Join(others, ", "))
	}
	return c
}
