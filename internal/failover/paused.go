package failover

import (
	"encoding/json"
	"fmt"
	"strings"
)

// FISPauseSidPrefix starts the Sid of the statement AWS FIS adds to a
// replica's resource policy for the action
// aws:dynamodb:global-table-pause-replication (AWS FIS actions reference,
// "Amazon DynamoDB actions"): a Deny to every principal whose
// aws:PrincipalArn is the replication service-linked role, until the
// experiment's end (a DateLessThan on aws:CurrentTime). FIS removes it
// when the experiment ends.
const FISPauseSidPrefix = "DoNotModifyFisDynamoDbPauseReplication"

// ReplicationPause is a statement of a resource policy that denies the
// replication role: replication into (or, on a stream, out of) that
// replica is paused while it holds.
type ReplicationPause struct {
	Sid string `json:"sid"`
	// Until is the statement's aws:CurrentTime bound ("" when it has none).
	Until string `json:"until,omitempty"`
	// FIS is true when the Sid is the one FIS writes.
	FIS bool `json:"fis"`
}

// ReplicationPauses returns the statements of doc that deny the replication
// role by name (a pause of replication), whoever wrote them. dynops's own
// fences exempt that role, so they are never among them.
func ReplicationPauses(doc string) []ReplicationPause {
	p, err := parsePolicy(doc)
	if err != nil {
		return nil
	}
	var out []ReplicationPause
	for _, raw := range p.Statement {
		var st struct {
			Sid       string
			Effect    string
			Condition map[string]map[string]any
		}
		if json.Unmarshal(raw, &st) != nil || st.Effect != "Deny" {
			continue
		}
		names := false
		for op, keys := range st.Condition {
			if strings.HasPrefix(op, "StringNot") || strings.HasPrefix(op, "ArnNot") {
				continue // an exemption of the role, as dynops's fence writes it
			}
			for k, v := range keys {
				if strings.EqualFold(k, "aws:PrincipalArn") {
					for _, arn := range strs(v) {
						names = names || strings.HasSuffix(arn, ":"+replicationRole)
					}
				}
			}
		}
		if !names {
			continue
		}
		rp := ReplicationPause{Sid: st.Sid, FIS: strings.HasPrefix(st.Sid, FISPauseSidPrefix)}
		for op, keys := range st.Condition {
			if strings.HasPrefix(op, "DateLessThan") {
				for k, v := range keys {
					if strings.EqualFold(k, "aws:CurrentTime") && len(strs(v)) > 0 {
						rp.Until = strs(v)[0]
					}
				}
			}
		}
		out = append(out, rp)
	}
	return out
}

// pausedCheck refuses a switch while replication is paused on any replica
// that answers (fail closed: a pause that may have expired still refuses
// until FIS or its owner removes the statement). Writes made while paused
// have not replicated: a failover or its drain would lose them.
func pausedCheck(s State) Check {
	c := Check{Name: "replication-paused", Status: CheckOK}
	var parts []string
	for _, rs := range s.Regions {
		for _, p := range ReplicationPauses(rs.Policy) {
			who := "a statement denying the replication role"
			if p.FIS {
				who = "an AWS FIS experiment (aws:dynamodb:global-table-pause-replication)"
			}
			until := ""
			if p.Until != "" {
				until = " until " + p.Until
			}
			parts = append(parts, fmt.Sprintf("%s: %s, statement %s%s", rs.Region, who, p.Sid, until))
		}
	}
	if len(parts) == 0 {
		c.Detail = "no replica's resource policy denies the replication role"
		return c
	}
	c.Status = CheckFail
	c.Detail = fmt.Sprintf("replication is paused (%s): writes made meanwhile have not replicated and a switch now loses them; wait for the pause to end (aws fis stop-experiment --id ID ends an experiment early), then check dr status", strings.Join(parts, "; "))
	return c
}
