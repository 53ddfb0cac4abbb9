// Package export tests `dynops export` end to end on the target (the local
// emulator by default, real AWS with DYNOPS_TEST_TARGET=aws) and
// modules/dynamodb-export with offline plans.
package export

import (
	"testing"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }
