// Package security tests the DDB-SEC-05/06 modules: offline plans of
// modules/dynamodb-vpc-endpoint and modules/cloudtrail-data-events, and
// applies on the target (the emulator by default) read back from the service.
package security

import (
	"testing"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }
