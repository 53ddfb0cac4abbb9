package awsconfig

import (
	"fmt"
	"sync"
)

// Unanswered remembers, for one dynops run, the endpoints (per region) that
// let an operation run into its timeout. A later call to the same endpoint
// fails at once with the same kind of error instead of waiting out another
// timeout: a command that makes several calls (protection, the audit's
// caller lookup, the work itself) against a half-dead region then fails
// within about one --timeout, not one per call. Safe for concurrent use; the
// Factory makes one per run and passes it in every Options.
type Unanswered struct {
	mu sync.Mutex
	m  map[string]*TimeoutError
}

func unansweredKey(endpoint, region string) string { return endpoint + "|" + region }

func (u *Unanswered) add(endpoint, region string, e *TimeoutError) {
	if u == nil || endpoint == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]*TimeoutError{}
	}
	if _, ok := u.m[unansweredKey(endpoint, region)]; !ok {
		u.m[unansweredKey(endpoint, region)] = e
	}
}

func (u *Unanswered) first(endpoint, region string) *TimeoutError {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.m[unansweredKey(endpoint, region)]
}

// notTriedAgain is returned, without sending, for a call to an endpoint that
// already timed out in this run; it is not retryable.
type notTriedAgain struct{ first *TimeoutError }

func (e *notTriedAgain) Error() string {
	return fmt.Sprintf("not sent: %s did not answer %s %s earlier in this run", e.first.Endpoint, e.first.Service, e.first.Operation)
}
