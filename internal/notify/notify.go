// Package notify tells a team what a runbook run does: each event (a step
// started, finished or failed, an approval asked, given or refused, a
// decision, a break-glass) goes to every configured target: an SNS topic
// (Publish, the event type as a message attribute), a Slack-compatible
// webhook (POST {"text": ...}) and Incident Manager's timeline
// (CreateTimelineEvent). A notification never stops the run: each target
// has a short bound, a failure is handed to Failed (the run prints and
// audits it) and the run goes on. A webhook's URL is a secret: read from
// SSM Parameter Store or Secrets Manager (ResolveSecret), never printed,
// never in an error, the audit or the run state.
package notify

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Event types.
const (
	StepStarted      = "step-started"
	StepFinished     = "step-finished"
	StepFailed       = "step-failed"
	ApprovalWaiting  = "approval-waiting"
	Approved         = "approved"          // `runbook approve` by another caller
	Rejected         = "rejected"          // `runbook reject` by another caller
	ApprovalUsed     = "approval-used"     // the run goes on with the approved plan
	ApprovalRejected = "approval-rejected" // the run stops at a rejected plan
	ApprovalTimedOut = "approval-timed-out"
	Decided          = "decided"
	BreakGlass       = "break-glass"
	CapReached       = "cap-reached"
)

// Event is one thing a run did.
type Event struct {
	Type     string            `json:"type"`
	Incident string            `json:"incident"`
	Runbook  string            `json:"runbook"`
	Step     string            `json:"step,omitempty"`
	Text     string            `json:"text"` // one line for a person
	Detail   map[string]string `json:"detail,omitempty"`
	At       time.Time         `json:"at"`
}

// Line is the event as a person reads it in a channel:
// "[INC-1234] pitr-restore / restore (step-started): step 2/6 started".
func (e Event) Line() string {
	s := fmt.Sprintf("[%s] %s", e.Incident, e.Runbook)
	if e.Step != "" {
		s += " / " + e.Step
	}
	return s + " (" + e.Type + "): " + e.Text
}

// Sink is one notification target.
type Sink interface {
	// Name says what the target is, without secrets (e.g. "webhook
	// ssm:/dynops/oncall/webhook", "SNS topic arn:...").
	Name() string
	Send(ctx context.Context, e Event) error
}

// DefaultTimeout bounds one target's delivery of one event, retries included.
const DefaultTimeout = 5 * time.Second

// maxFailures is how many deliveries in a row a target may fail before the
// run stops trying it (a dead webhook must not cost every step its timeout).
const maxFailures = 2

// Notifier sends events to its sinks, one after the other, in the order
// they happen.
type Notifier struct {
	Sinks []Sink
	// Timeout bounds each sink's delivery of one event (DefaultTimeout).
	Timeout time.Duration
	// Failed is told each delivery that failed; the run goes on.
	Failed func(sink string, e Event, err error)

	failures map[int]int // sink index -> failures in a row
}

// ErrGivenUp is wrapped by the failure after which a target is not tried
// again in this run.
var ErrGivenUp = errors.New("not tried again in this run")

// Notify sends e to every sink. It returns when each delivered it, failed
// or ran out of time; it never fails the caller. A sink that failed
// maxFailures times in a row is not tried again.
func (n *Notifier) Notify(ctx context.Context, e Event) {
	if n == nil {
		return
	}
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if n.failures == nil {
		n.failures = map[int]int{}
	}
	for i, s := range n.Sinks {
		if n.failures[i] >= maxFailures {
			continue
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		err := s.Send(sctx, e)
		cancel()
		if err == nil {
			n.failures[i] = 0
			continue
		}
		if n.failures[i]++; n.failures[i] >= maxFailures {
			err = fmt.Errorf("%w (%d failures in a row: %w)", err, maxFailures, ErrGivenUp)
		}
		if n.Failed != nil {
			n.Failed(s.Name(), e, err)
		}
	}
}
