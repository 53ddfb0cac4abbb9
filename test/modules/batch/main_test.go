// Package batch tests modules/dynops-batch: offline plans of the Fargate
// compute environment, queue, worker job definition and log group, every
// validation, and the job role asked of a real IAM evaluator (the run's
// tables and prefixes only); and, on AWS only, a sharded diff of a large
// table on Batch (TestLargeTableDiffOnBatchFargate).
package batch

import (
	"testing"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }
