package failover

// Which way a switch goes: --from and --to defaulted from the state (the
// active region, the fenced ones), a resume of a switch cut short, and the
// other replicas of a table.

import (
	"fmt"
	"strings"
)

// defaultFrom is the region a switch moves writes away from when --from is
// not given: the one the pointer names, except when the pointer already
// names --to (in every region, or in some: a flip cut short) and exactly one
// other region is fenced. Then a switch of the same direction got to its
// pointer flip and stopped (killed, or a later
// step failed: the canary, the replication check, a failback's unfence of
// the old region): this run resumes it from that fenced region, every step
// being idempotent, instead of refusing a switch "to where writes already
// go" and leaving the rest undone. And a failback --to the region a
// failover fenced without flipping the pointer undoes that failover.
func defaultFrom(s State, r Rules) (from string, resume bool) {
	if r.To == "" || (s.Active != r.To && s.Active != "") {
		return s.Active, false
	}
	var fenced []string
	for _, f := range s.Fenced() {
		if f != r.To {
			fenced = append(fenced, f)
		}
	}
	if len(fenced) == 1 {
		return fenced[0], true
	}
	if len(fenced) > 1 && s.Active == r.To {
		// Three or more replicas, all but To fenced: which one took
		// writes before cannot be told (ambiguousFrom asks for --from).
		return "", false
	}
	// A failover that stopped between its fence and its pointer flip left
	// the pointer naming its own, fenced, region; the failback to it (the
	// undo HalfDone names) comes from the one other region.
	if to, ok := s.Region(r.To); ok && r.Mode == Failback && to.Fenced && len(fenced) == 0 && len(s.Regions) == 2 {
		for _, reg := range s.Regions {
			if reg.Region != r.To {
				return reg.Region, true
			}
		}
	}
	return s.Active, false
}

// defaultTo is the region a switch goes to when --to is not given: for a
// failback the one region a dynops dr fence holds (a migration's fence is
// not a failover's), for a failover the one other region.
func defaultTo(s State, r Rules) string {
	if c := toCandidates(s, r); len(c) == 1 {
		return c[0]
	}
	return ""
}

func toCandidates(s State, r Rules) []string {
	var candidates []string
	if r.Mode == Failback {
		return s.FencedBy(OwnerDR)
	}
	for _, reg := range s.Target.Regions {
		if reg != r.From {
			candidates = append(candidates, reg)
		}
	}
	return candidates
}

// ambiguousTo says why no --to could be chosen, naming the replicas.
func ambiguousTo(s State, r Rules) string {
	c := toCandidates(s, r)
	replicas := strings.Join(s.Target.Regions, ", ")
	switch {
	case r.Mode == Failback && len(c) == 0:
		return fmt.Sprintf("no replica carries a fence of dynops dr (replicas: %s; pointer: %s): pass --to with the region writes return to", replicas, describePointers(s))
	case r.Mode == Failback:
		return fmt.Sprintf("%d replicas carry a fence of dynops dr (%s; replicas: %s): pass --to with the region writes return to, one of %s", len(c), strings.Join(c, ", "), replicas, strings.Join(c, ", "))
	}
	return fmt.Sprintf("the table has %d replicas (%s): pass --to with the region writes move to, one of %s", len(s.Target.Regions), replicas, strings.Join(c, ", "))
}

// ambiguousFrom says why --from could not be chosen when the pointer
// already names --to: more than one other replica is fenced, so which
// one took writes before cannot be told.
func ambiguousFrom(s State, r Rules) string {
	var fenced []string
	for _, f := range s.Fenced() {
		if f != r.To {
			fenced = append(fenced, f)
		}
	}
	if len(fenced) == 0 {
		return fmt.Sprintf("writes are already meant to go to %s (the pointer names it in every region) and no other replica is fenced: nothing to switch", r.To)
	}
	return fmt.Sprintf("the pointer already names %s and %s are fenced: an earlier %s got past its pointer flip; pass --from with the region writes came from (one of %s) to finish it", r.To, strings.Join(fenced, ", "), r.Mode, strings.Join(fenced, ", "))
}

// othersOf are the replicas of a switch from -> to that are neither: with
// three or more regions, each could take writes, so each is fenced too.
func othersOf(t Target, from, to string) []string {
	var out []string
	for _, r := range t.Regions {
		if r != from && r != to {
			out = append(out, r)
		}
	}
	return out
}
