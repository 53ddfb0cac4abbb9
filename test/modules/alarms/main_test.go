// Package alarms tests modules/dynamodb-alarms: offline plan tests of every
// alarm (metric, dimensions, statistic, threshold, period, evaluation periods,
// actions) and of every validation, and apply tests on the target read back
// with DescribeAlarms and GetDashboard, then `dynops check` (DDB-MON-01).
package alarms

import (
	"testing"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }
