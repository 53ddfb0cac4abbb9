package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/exportwindow"
	"github.com/dynops/dynops/internal/testctx"
)

// FindSource takes exactly one full export under the prefix: with a
// manifest, or (the emulator) one data folder; anything else is refused
// with what it found.
func TestFindSource(t *testing.T) {
	ctx := testctx.Bounded(t)
	write := func(t *testing.T, root string, s exporttest.Spec) {
		_, err := exporttest.Write(root, s)
		require.NoError(t, err)
	}
	dataOnly := func(t *testing.T, root, dir string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, dir), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, dir, "a.json.gz"), []byte("x"), 0o644))
	}
	cases := []struct {
		name   string
		setup  func(t *testing.T, root string)
		prefix string
		want   Source
		err    string
	}{
		{"one full export", func(t *testing.T, r string) {
			write(t, r, exporttest.Spec{Prefix: "full", ExportID: "01-f", FileItems: []int{2, 3}})
		}, "full", Source{Bucket: "bkt", DataPrefix: "full/AWSDynamoDB/01-f/data/", Items: 5, Manifest: true}, ""},
		{"an incremental export", func(t *testing.T, r string) {
			write(t, r, exporttest.Spec{Prefix: "inc", ExportID: "01-i", Incremental: true, Records: [][]exporttest.Record{{}}})
		}, "inc", Source{}, "is an incremental export: import a FULL export (the baseline) instead"},
		{"two exports", func(t *testing.T, r string) {
			write(t, r, exporttest.Spec{Prefix: "full", ExportID: "01-f", FileItems: []int{1}})
			write(t, r, exporttest.Spec{Prefix: "full", ExportID: "02-f", FileItems: []int{1}})
		}, "full", Source{}, "2 exports under"},
		{"one data folder without a manifest (the emulator)", func(t *testing.T, r string) {
			dataOnly(t, r, "emu/AWSDynamoDB/x/data")
		}, "emu", Source{Bucket: "bkt", DataPrefix: "emu/AWSDynamoDB/x/data/", Items: -1}, ""},
		{"two data folders", func(t *testing.T, r string) {
			dataOnly(t, r, "emu/AWSDynamoDB/x/data")
			dataOnly(t, r, "emu/AWSDynamoDB/y/data")
		}, "emu", Source{}, "2 data folders under"},
		{"nothing", func(t *testing.T, r string) {}, "none", Source{}, "no export under"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			c.setup(t, root)
			store := exportverify.DirStore{Root: root}
			got, err := FindSource(ctx, store, "bkt", c.prefix)
			if c.err != "" {
				assert.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			claim, named := got.Claim()
			assert.Equal(t, c.want.Manifest, named, "a manifest is a claim to vouch for")
			if named {
				assert.Equal(t, strings.TrimSuffix(c.want.DataPrefix, "data/")+exportverify.SummaryName, claim.SummaryKey)
				assert.Equal(t, got.ExportArn, claim.Summary.ExportArn)
			}
			got.ExportArn, got.claim = "", exportverify.Claim{}
			assert.Equal(t, c.want, got)
		})
	}
	// Two exports are named by their folders.
	root := t.TempDir()
	write(t, root, exporttest.Spec{Prefix: "full", ExportID: "01-f", FileItems: []int{1}})
	write(t, root, exporttest.Spec{Prefix: "full", ExportID: "02-f", FileItems: []int{1}})
	_, err := FindSource(ctx, exportverify.DirStore{Root: root}, "bkt", "full")
	assert.ErrorContains(t, err, "full/AWSDynamoDB/01-f, full/AWSDynamoDB/02-f")
}

func TestParseKeyAndKeySchema(t *testing.T) {
	for spec, want := range map[string]string{"user_id:S": "S", "n:n": "N", "bin:B": "B"} {
		d, err := ParseKey(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, types.ScalarAttributeType(want), d.AttributeType, spec)
	}
	for _, bad := range []string{"user_id", ":S", "user_id:X", "user_id:", "user_id:SS", ""} {
		_, err := ParseKey(bad)
		assert.ErrorContains(t, err, "write NAME:TYPE with TYPE S, N or B", bad)
	}
	hash, _ := ParseKey("pk:S")
	rng, _ := ParseKey("sk:N")
	s := KeySchema(hash, nil)
	assert.Equal(t, []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}}, s.KeySchema)
	assert.Equal(t, []types.AttributeDefinition{hash}, s.Attributes)
	s = KeySchema(hash, &rng)
	assert.Equal(t, []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}}, s.KeySchema)
	assert.Equal(t, []types.AttributeDefinition{hash, rng}, s.Attributes)
}

type metricsRecorder struct {
	in  *cloudwatch.PutMetricDataInput
	err error
}

func (m *metricsRecorder) PutMetricData(_ context.Context, in *cloudwatch.PutMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error) {
	m.in = in
	return &cloudwatch.PutMetricDataOutput{}, m.err
}

// Every step publishes every metric; a failed step publishes no lag (the
// missing point alarms).
func TestPublishMetrics(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	values := func(in *cloudwatch.PutMetricDataInput) map[string]float64 {
		out := map[string]float64{}
		for _, d := range in.MetricData {
			assert.Equal(t, []cwtypes.Dimension{{Name: aws.String("TableName"), Value: aws.String("dev-hoge-user")}}, d.Dimensions)
			assert.Equal(t, now, aws.ToTime(d.Timestamp))
			out[aws.ToString(d.MetricName)] = aws.ToFloat64(d.Value)
		}
		return out
	}
	cw := &metricsRecorder{}
	out := Outcome{Table: "dev-hoge-user", Lag: 90 * time.Second, Failed: make([]exportwindow.InFlight, 2)}
	require.NoError(t, PublishMetrics(testctx.Bounded(t), cw, out, nil, now))
	assert.Equal(t, "dynops/Export", aws.ToString(cw.in.Namespace))
	assert.Equal(t, map[string]float64{"FailedExports": 2, "Gaps": 0, "StepErrors": 0, "LagSeconds": 90}, values(cw.in))

	out = Outcome{Table: "dev-hoge-user", Lag: time.Hour, Gap: true}
	require.NoError(t, PublishMetrics(testctx.Bounded(t), cw, out, errors.New("throttled"), now))
	assert.Equal(t, map[string]float64{"FailedExports": 0, "Gaps": 1, "StepErrors": 1}, values(cw.in))

	cw.err = errors.New("AccessDenied")
	assert.ErrorContains(t, PublishMetrics(testctx.Bounded(t), cw, out, nil, now), "publishing export metrics of dev-hoge-user: AccessDenied")
}
