// Package dr tests modules/dr, the DR wiring of envs/prod and envs/local, and
// `dynops dr` end to end: plans and applies on the target (the local emulator
// by default, real AWS with DYNOPS_TEST_TARGET=aws), CLI runs on stand-in
// tables in two emulator regions, and, on AWS only, a drill of a real global
// table.
package dr

import (
	"testing"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }
