package exportverify_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
)

// fakeDescriber answers DescribeExport with desc (or err) and records the
// region and ARN asked.
type fakeDescriber struct {
	desc   *types.ExportDescription
	err    error
	region string
	arn    string
	asked  int
}

func (f *fakeDescriber) DescribeExport(_ context.Context, in *dynamodb.DescribeExportInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeExportOutput, error) {
	f.asked++
	f.arn = aws.ToString(in.ExportArn)
	if f.err != nil {
		return nil, f.err
	}
	return &dynamodb.DescribeExportOutput{ExportDescription: f.desc}, nil
}

// timedStore is a local copy whose objects S3 last wrote at written.
type timedStore struct {
	exportverify.DirStore
	written time.Time
}

func (s timedStore) Stat(ctx context.Context, key string) (exportverify.Object, error) {
	o, err := s.DirStore.Stat(ctx, key)
	o.LastModified = s.written
	return o, err
}

const vouchTable = "arn:aws:dynamodb:eu-central-1:111122223333:table/prod-hoge-user"

// vouchFixture writes one incremental export of vouchTable in bucket
// "exports" and returns its claim and the description DynamoDB would give.
func vouchFixture(t *testing.T) (string, exportverify.Claim, *types.ExportDescription) {
	t.Helper()
	root := t.TempDir()
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	spec := exporttest.Spec{Prefix: "incident/INC-1", ExportID: "01772326800000-abcd0001", Incremental: true, FileItems: []int{3, 0},
		TableArn: vouchTable, Bucket: "exports", From: from, To: from.Add(time.Hour), EndTime: from.Add(time.Hour + 10*time.Minute)}
	w, err := exporttest.Write(root, spec)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, w.SummaryKey))
	require.NoError(t, err)
	var sum exportverify.Summary
	require.NoError(t, json.Unmarshal(b, &sum))
	at := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return &v
	}
	desc := &types.ExportDescription{
		ExportArn: aws.String(sum.ExportArn), ExportStatus: types.ExportStatusCompleted, TableArn: aws.String(vouchTable),
		S3Bucket: aws.String("exports"), S3Prefix: aws.String("incident/INC-1"), ExportManifest: aws.String(w.SummaryKey),
		StartTime: at(sum.StartTime), EndTime: at(sum.EndTime), ExportType: types.ExportTypeIncrementalExport, ItemCount: aws.Int64(3),
		IncrementalExportSpecification: &types.IncrementalExportSpecification{ExportFromTime: at(sum.ExportFromTime),
			ExportToTime: at(sum.ExportToTime), ExportViewType: types.ExportViewTypeNewAndOldImages},
	}
	return root, exportverify.Claim{SummaryKey: w.SummaryKey, Summary: sum}, desc
}

// TestVouchAsksDynamoDB_FakeBecauseTheEmulatorKeepsNoExportRecords: the
// decision on DynamoDB's answer, with a fake DescribeExport (the emulator
// keeps no record of exports it did not run, so it can neither vouch for a
// fixture nor contradict one): an export DynamoDB agrees with is verified;
// one it cannot answer for (not found, access denied) is refused unless a
// reason accepts it; one it contradicts (status, table, bucket, prefix,
// manifest, times, type, view, count) is refused whatever the reason; a data
// file written after DynamoDB's end is refused.
func TestVouchAsksDynamoDB_FakeBecauseTheEmulatorKeepsNoExportRecords(t *testing.T) {
	ctx := context.Background()
	root, claim, desc := vouchFixture(t)
	want := exportverify.Expect{TableArn: vouchTable, Bucket: "exports"}
	store := timedStore{DirStore: exportverify.DirStore{Root: root}, written: aws.ToTime(desc.EndTime).Add(-time.Minute)}
	trust := func(f *fakeDescriber, reason string) exportverify.Trust {
		return exportverify.Trust{Unverified: reason, Describer: func(region string) exportverify.ExportDescriber {
			f.region = region
			return f
		}}
	}

	t.Run("DynamoDB agrees: verified, asked in the export's region", func(t *testing.T) {
		f := &fakeDescriber{desc: desc}
		v, err := exportverify.Vouch(ctx, store, claim, want, trust(f, ""))
		require.NoError(t, err)
		assert.True(t, v.Verified)
		assert.Equal(t, "eu-central-1", f.region)
		assert.Equal(t, claim.Summary.ExportArn, f.arn)
		assert.Equal(t, claim.Summary.ExportArn, v.ExportArn)
	})
	for name, answer := range map[string]error{
		"not found":     &types.ExportNotFoundException{Message: aws.String("Export not found")},
		"access denied": &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform dynamodb:DescribeExport"},
	} {
		t.Run("DynamoDB cannot answer ("+name+"): refused without a reason, accepted with one", func(t *testing.T) {
			_, err := exportverify.Vouch(ctx, store, claim, want, trust(&fakeDescriber{err: answer}, ""))
			require.ErrorIs(t, err, exportverify.ErrUnvouched)
			assert.Contains(t, err.Error(), claim.Summary.ExportArn, "names the export")
			assert.Contains(t, err.Error(), "--unverified-exports", "names the fix")
			assert.Contains(t, err.Error(), answer.Error(), "says what DynamoDB answered")
			v, err := exportverify.Vouch(ctx, store, claim, want, trust(&fakeDescriber{err: answer}, "copied from the backup account"))
			require.NoError(t, err)
			assert.False(t, v.Verified)
			assert.Contains(t, v.Unverified, answer.Error())
		})
	}
	contradict := map[string]func(d *types.ExportDescription){
		"DynamoDB says it is IN_PROGRESS": func(d *types.ExportDescription) { d.ExportStatus = types.ExportStatusInProgress },
		"table: the manifest says":        func(d *types.ExportDescription) { d.TableArn = aws.String(vouchTable + "-other") },
		"bucket: the manifest says":       func(d *types.ExportDescription) { d.S3Bucket = aws.String("elsewhere") },
		"prefix: the manifest says":       func(d *types.ExportDescription) { d.S3Prefix = aws.String("incident/INC-2") },
		"manifest: read from":             func(d *types.ExportDescription) { d.ExportManifest = aws.String("x/manifest-summary.json") },
		"item count: the manifest says 3": func(d *types.ExportDescription) { d.ItemCount = aws.Int64(4) },
		"type: the manifest says":         func(d *types.ExportDescription) { d.ExportType = types.ExportTypeFullExport },
		"view: the manifest says": func(d *types.ExportDescription) {
			d.IncrementalExportSpecification.ExportViewType = types.ExportViewTypeNewImage
		},
		"window end: the manifest says": func(d *types.ExportDescription) { d.IncrementalExportSpecification.ExportToTime = aws.Time(time.Now()) },
		"end time: the manifest says":   func(d *types.ExportDescription) { d.EndTime = aws.Time(d.EndTime.Add(time.Second)) },
	}
	for what, change := range contradict {
		t.Run("DynamoDB contradicts the manifest: "+what, func(t *testing.T) {
			d := *desc
			spec := *desc.IncrementalExportSpecification
			d.IncrementalExportSpecification = &spec
			change(&d)
			_, err := exportverify.Vouch(ctx, store, claim, want, trust(&fakeDescriber{desc: &d}, "a reason does not cover a contradiction"))
			require.ErrorIs(t, err, exportverify.ErrContradicted)
			assert.Contains(t, err.Error(), what)
			assert.Contains(t, err.Error(), claim.Summary.ExportArn)
		})
	}
	t.Run("a data file S3 wrote after DynamoDB's end is refused", func(t *testing.T) {
		late := timedStore{DirStore: store.DirStore, written: aws.ToTime(desc.EndTime).Add(time.Second)}
		_, err := exportverify.Vouch(ctx, late, claim, want, trust(&fakeDescriber{desc: desc}, ""))
		require.ErrorIs(t, err, exportverify.ErrContradicted)
		assert.Contains(t, err.Error(), "after the export ended")
	})
	t.Run("a local copy cannot say when S3 wrote its files: refused without a reason", func(t *testing.T) {
		local := exportverify.DirStore{Root: root}
		_, err := exportverify.Vouch(ctx, local, claim, want, trust(&fakeDescriber{desc: desc}, ""))
		require.ErrorIs(t, err, exportverify.ErrUnvouched)
		assert.Contains(t, err.Error(), "a local copy cannot say when S3 wrote it")
		v, err := exportverify.Vouch(ctx, local, claim, want, trust(&fakeDescriber{desc: desc}, "copied with aws s3 sync"))
		require.NoError(t, err)
		assert.False(t, v.Verified, "DynamoDB vouched for the manifest, not for the copy's files")
		assert.Contains(t, v.Unverified, "local copy")
	})
}

// TestVouchChecksTheManifestAgainstTheRequest: before DynamoDB is asked,
// the manifest must name the expected table (and its exportArn lie under
// it), the bucket read, and the place it lies; a refusal names the export
// and what did not match, and no reason accepts it.
func TestVouchChecksTheManifestAgainstTheRequest(t *testing.T) {
	ctx := context.Background()
	root, claim, desc := vouchFixture(t)
	store := timedStore{DirStore: exportverify.DirStore{Root: root}, written: aws.ToTime(desc.EndTime).Add(-time.Minute)}
	cases := map[string]struct {
		want   exportverify.Expect
		change func(s *exportverify.Summary)
		says   string
	}{
		"another table":              {want: exportverify.Expect{TableArn: vouchTable + "-orders", Bucket: "exports"}, says: "its manifest says table " + vouchTable + ", not " + vouchTable + "-orders"},
		"another bucket":             {want: exportverify.Expect{TableArn: vouchTable, Bucket: "prod-exports"}, says: "its manifest says bucket exports, but it was read from prod-exports"},
		"exportArn of another table": {change: func(s *exportverify.Summary) { s.ExportArn = vouchTable + "-orders/export/01772326800000-abcd0001" }, says: "is not an export of its tableArn"},
		"moved under another prefix": {change: func(s *exportverify.Summary) { s.S3Prefix = "incident/INC-0" }, says: "but its s3Prefix"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cl := claim
			if c.change != nil {
				c.change(&cl.Summary)
			}
			want := c.want
			if want.TableArn == "" {
				want = exportverify.Expect{TableArn: vouchTable, Bucket: "exports"}
			}
			f := &fakeDescriber{desc: desc}
			_, err := exportverify.Vouch(ctx, store, cl, want, exportverify.Trust{Unverified: "emulator", Describer: func(string) exportverify.ExportDescriber { return f }})
			require.ErrorIs(t, err, exportverify.ErrContradicted)
			assert.Contains(t, err.Error(), c.says)
			assert.Contains(t, err.Error(), "export "+cl.Summary.ExportArn)
			assert.Contains(t, err.Error(), "nothing was written")
			assert.Zero(t, f.asked, "refused before DynamoDB is asked")
		})
	}
}

func TestValidReasonNeedsLetters(t *testing.T) {
	for _, r := range []string{"", " ", "!!!", "123"} {
		assert.Error(t, exportverify.ValidReason(r), "%q", r)
	}
	assert.NoError(t, exportverify.ValidReason("copied from the backup account"))
	assert.False(t, errors.Is(exportverify.ValidReason("x"), exportverify.ErrUnvouched))
}

// TestVouchAnyTableStillAsksDynamoDB: a reader with no table to compare
// (export import, export verify, table diff) holds the export to the table
// its manifest names, and DynamoDB must still vouch for it: a description
// naming another table is a contradiction, a missing one needs a reason.
func TestVouchAnyTableStillAsksDynamoDB(t *testing.T) {
	ctx := context.Background()
	root, claim, desc := vouchFixture(t)
	store := timedStore{DirStore: exportverify.DirStore{Root: root}, written: aws.ToTime(desc.EndTime).Add(-time.Minute)}
	anyTable := exportverify.Expect{AnyTable: true, Bucket: "exports", TableArn: "arn:aws:dynamodb:eu-central-1:111122223333:table/not-read"}
	trust := func(f *fakeDescriber, reason string) exportverify.Trust {
		return exportverify.Trust{Unverified: reason, Describer: func(string) exportverify.ExportDescriber { return f }}
	}
	v, err := exportverify.Vouch(ctx, store, claim, anyTable, trust(&fakeDescriber{desc: desc}, ""))
	require.NoError(t, err)
	assert.True(t, v.Verified)
	assert.Equal(t, vouchTable, v.TableArn)

	other := *desc
	other.TableArn = aws.String(vouchTable + "-orders")
	_, err = exportverify.Vouch(ctx, store, claim, anyTable, trust(&fakeDescriber{desc: &other}, "a reason does not cover a contradiction"))
	require.ErrorIs(t, err, exportverify.ErrContradicted)
	assert.Contains(t, err.Error(), "table: the manifest says")

	_, err = exportverify.Vouch(ctx, store, claim, anyTable, trust(&fakeDescriber{err: &types.ExportNotFoundException{Message: aws.String("Export not found")}}, ""))
	require.ErrorIs(t, err, exportverify.ErrUnvouched)

	forged := claim
	forged.Summary.ExportArn = vouchTable + "-orders/export/01772326800000-abcd0001"
	f := &fakeDescriber{desc: desc}
	_, err = exportverify.Vouch(ctx, store, forged, anyTable, trust(f, "emulator"))
	require.ErrorIs(t, err, exportverify.ErrContradicted, "the exportArn must still be an export of the tableArn")
	assert.Zero(t, f.asked)
}

// TestVouchUnnamedNeedsAReason: data without a manifest (the emulator's
// exports) names no export DynamoDB could answer for: refused without
// --unverified-exports, accepted (unverified, saying why) with one.
func TestVouchUnnamedNeedsAReason(t *testing.T) {
	store := exportverify.DirStore{Root: t.TempDir()}
	_, err := exportverify.VouchUnnamed(store, "exports/data/", exportverify.Trust{})
	require.ErrorIs(t, err, exportverify.ErrUnvouched)
	assert.Contains(t, err.Error(), store.Describe("exports/data/"), "names where it looked")
	assert.Contains(t, err.Error(), "no manifest-summary.json")
	assert.Contains(t, err.Error(), "--unverified-exports", "names the fix")
	v, err := exportverify.VouchUnnamed(store, "exports/data/", exportverify.Trust{Unverified: "emulator: writes no manifests"})
	require.NoError(t, err)
	assert.False(t, v.Verified)
	assert.Contains(t, v.Unverified, "no manifest-summary.json")
}

// TestClaimsReadsEverySummaryUnderThePrefix: the claims export verify
// vouches for are every manifest-summary.json under the prefix.
func TestClaimsReadsEverySummaryUnderThePrefix(t *testing.T) {
	root, claim, _ := vouchFixture(t)
	cs, err := exportverify.Claims(context.Background(), exportverify.DirStore{Root: root}, "incident")
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Equal(t, claim, cs[0])
	cs, err = exportverify.Claims(context.Background(), exportverify.DirStore{Root: root}, "elsewhere")
	require.NoError(t, err)
	assert.Empty(t, cs)
}
