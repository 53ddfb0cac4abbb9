// Package testctx gives unit tests a context that ends: a run that would wait
// forever (a paging loop that never stops, a wait nothing ends) fails its
// test on the deadline instead of hanging the package until go test's
// -timeout, which would hide which test hung and stop every later test.
package testctx

import (
	"context"
	"testing"
	"time"
)

// Limit is how long a bounded context lives. Unit tests with in-memory fakes
// finish in well under a second; a minute leaves room for a loaded machine.
const Limit = time.Minute

// Bounded returns a context that is cancelled after Limit or when the test
// ends, whichever comes first.
func Bounded(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), Limit)
	t.Cleanup(cancel)
	return ctx
}
