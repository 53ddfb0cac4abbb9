// Package streamconsumer tests modules/stream-consumer: offline plan tests of
// every event source mapping setting, the DLQ, the IAM policy and the alarms,
// and of every validation; apply tests of the Go example consumer on the
// target, read back with ListEventSourceMappings, GetQueueAttributes and
// DescribeAlarms, then `dynops check` (DDB-STREAM-04/05).
package streamconsumer

import (
	"os"
	"testing"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) {
	code := harness.Run(m, &target)
	if zipPath != "" { // the consumer zip built once for the run
		_ = os.Remove(zipPath)
	}
	os.Exit(code)
}
