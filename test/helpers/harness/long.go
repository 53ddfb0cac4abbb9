package harness

import (
	"os"
	"testing"
)

// LongEnv turns on the long suites (make test-long): day-2 walks and
// shape matrices that apply to the emulator many times, too much terraform
// for the CI budget (docs/testing.md, "Long suites").
const LongEnv = "DYNOPS_TEST_LONG"

// Long skips t unless the long suites are on, saying what it covers and
// how to run it.
func Long(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(LongEnv) != "1" {
		t.Skipf("make test-long only (the CI budget): %s", what)
	}
}
