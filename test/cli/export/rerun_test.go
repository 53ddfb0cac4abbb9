package export

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/export"
)

// TestExportFullRunAgainTakesItsEarlierExport: `export full` run again into
// the same prefix (a runbook step resumed after a SIGKILL that landed after
// its ExportTableToPointInTime) takes the export already there as its own
// instead of starting a second one beside it, which verify counted twice
// and import refused as "2 data folders" (issue 43, the DR journey). A
// run into another prefix still starts its own.
func TestExportFullRunAgainTakesItsEarlierExport(t *testing.T) {
	fx := newFixture(t, 5)
	run := func(prefix string) (export.Export, string) {
		t.Helper()
		out, errOut, code := fx.dynops(t, "export", "full", "--table", fx.table, "--bucket", fx.bucket, "--prefix", prefix, "--wait", "-o", "json")
		require.Equal(t, 0, code, errOut)
		var es []export.Export
		require.NoError(t, json.Unmarshal([]byte(out), &es), out)
		require.Len(t, es, 1)
		return es[0], errOut
	}
	first, _ := run("dr/once")
	again, errOut := run("dr/once")
	assert.Equal(t, first.Arn, again.Arn, "the second run is the first export")
	assert.Contains(t, errOut, "taken as this run's instead of starting another")
	other, _ := run("dr/other")
	assert.NotEqual(t, first.Arn, other.Arn, "another prefix gets its own export")

	folders := map[string]bool{}
	objs, err := fx.s3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(fx.bucket), Prefix: aws.String("dr/once/")})
	require.NoError(t, err)
	for _, o := range objs.Contents {
		if rest, ok := strings.CutPrefix(aws.ToString(o.Key), "dr/once/AWSDynamoDB/"); ok {
			folders[strings.SplitN(rest, "/", 2)[0]] = true
		}
	}
	assert.Len(t, folders, 1, "one export folder under the prefix: %v", folders)
}
