// Package migrate_test runs `dynops migrate` end to end on the target (the
// local emulator unless DYNOPS_TEST_TARGET=aws): the example domain's source
// with a concurrent writer, a killed and resumed backfill, the catch-up, verify,
// cutover with the fence and rollback; and the refusals of bad input.
package migrate_test

import (
	"testing"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }
