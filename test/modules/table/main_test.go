// Package table tests modules/dynamodb-table: offline plan tests of every
// default and validation (rule IDs in the test names), and apply tests on the
// target (the local emulator by default, real AWS with DYNOPS_TEST_TARGET=aws).
package table

import (
	"testing"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }
