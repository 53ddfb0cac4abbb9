package exportverify

// Whom dynops believes about an export. Anyone who can put objects under an
// export prefix can write a manifest-summary.json that names any table; the
// manifests and data files prove nothing about who wrote them. DynamoDB can:
// DescribeExport answers for the exports it ran. Vouch is the one check every
// reader of an export's data runs before it reads a data file: export
// revert, apply, import and verify, table diff, pitr repair and migrate
// backfill (TestEveryExportReadIsVouched, internal/cmd/export/shared, walks
// the commands).
//
// Sources: the API reference's DescribeExport and ExportDescription
// (ExportArn, ExportStatus, StartTime, EndTime, ExportManifest, TableArn,
// ExportTime, S3Bucket, S3Prefix, ItemCount, ExportType,
// IncrementalExportSpecification{ExportFromTime, ExportToTime,
// ExportViewType}) and the developer guide's S3DataExport.Output
// (manifest-summary.json: exportArn, startTime, endTime, tableArn, exportTime,
// exportFromTime, exportToTime, s3Bucket, s3Prefix, itemCount, outputView,
// exportType; the layout <prefix>/AWSDynamoDB/<ExportId>/).

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ExportDescriber is the DynamoDB call that vouches for an export.
type ExportDescriber interface {
	DescribeExport(context.Context, *dynamodb.DescribeExportInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeExportOutput, error)
}

// Claim is one export as read from the bucket: its manifest-summary.json and
// the key it was read from.
type Claim struct {
	SummaryKey string
	Summary    Summary
}

// Expect is what the caller knows without reading the export: the table the
// export must be of (an ARN) and the bucket it was read from.
type Expect struct {
	TableArn string
	Bucket   string
	// AnyTable holds the export to the table its own manifest names, for
	// a reader that has no table to compare (export import, export verify,
	// table diff): DynamoDB must still vouch for the export, and TableArn
	// is not read.
	AnyTable bool
}

// Trust says whom Vouch asks and what it accepts.
type Trust struct {
	// Describer returns a DynamoDB client of a region: exports are
	// described in their own region (the export ARN's).
	Describer func(region string) ExportDescriber
	// Unverified is the operator's reason (--unverified-exports) for
	// accepting exports DynamoDB cannot answer for: copied from another
	// account, or the local emulator, which keeps no export records. ""
	// accepts none. DynamoDB contradicting a manifest, and a manifest
	// contradicting the request or the bucket, are refused whatever it says.
	Unverified string
}

// Vouched is what Vouch established about one export.
type Vouched struct {
	ExportArn string    `json:"export_arn"`
	TableArn  string    `json:"table_arn"`
	Dir       string    `json:"dir"`
	EndTime   time.Time `json:"end_time"`
	// Verified: DescribeExport answered and agreed with the manifest.
	Verified bool `json:"verified"`
	// Unverified is why DynamoDB could not answer, when the export was
	// accepted under Trust.Unverified.
	Unverified string `json:"unverified,omitempty"`
}

// Errors of Vouch; both are refusals (nothing was written).
var (
	// ErrContradicted: the manifest contradicts the request, the bucket or
	// DynamoDB's description of the export. No override accepts it.
	ErrContradicted = errors.New("the export is not what it claims")
	// ErrUnvouched: DynamoDB could not answer for the export and no
	// --unverified-exports reason was given.
	ErrUnvouched = errors.New("DynamoDB does not vouch for the export")
)

// ValidReason checks an --unverified-exports reason: it must say something
// (at least one letter).
func ValidReason(reason string) error {
	for _, r := range reason {
		if unicode.IsLetter(r) {
			return nil
		}
	}
	return fmt.Errorf("the reason %q has no letters: say why these exports are trusted (e.g. \"copied from the backup account\")", reason)
}

// Vouch checks one export before anything is written from it:
//
//   - its manifest names the expected table (tableArn, and the exportArn under
//     it), the bucket it was read from (s3Bucket), and lies where its s3Prefix
//     says (<s3Prefix>/AWSDynamoDB/<export id>);
//   - DynamoDB (DescribeExport, in the export's region) says it is COMPLETED
//     and agrees with the manifest: table, bucket, prefix, manifest key,
//     times, type, view and item count;
//   - no data file the files manifest lists was written after the export's
//     end (S3's LastModified, which no writer sets: an overwrite shows).
//
// When DescribeExport cannot answer (not found, access denied, another
// account, the emulator), the export is refused with ErrUnvouched unless
// t.Unverified gives a reason; everything else is still checked, against the
// manifest's own endTime.
func Vouch(ctx context.Context, store Store, c Claim, want Expect, t Trust) (Vouched, error) {
	sum := c.Summary
	dir := path.Dir(c.SummaryKey)
	v := Vouched{ExportArn: sum.ExportArn, TableArn: sum.TableArn, Dir: dir}
	name := "export " + orUnnamed(sum.ExportArn) + " (" + store.Describe(c.SummaryKey) + ")"
	var bad []string
	if !want.AnyTable && sum.TableArn != want.TableArn {
		bad = append(bad, fmt.Sprintf("its manifest says table %s, not %s", orUnnamed(sum.TableArn), want.TableArn))
	}
	if !strings.HasPrefix(sum.ExportArn, sum.TableArn+"/export/") || sum.TableArn == "" {
		bad = append(bad, fmt.Sprintf("its exportArn %s is not an export of its tableArn %s", orUnnamed(sum.ExportArn), orUnnamed(sum.TableArn)))
	}
	if want.Bucket != "" && sum.S3Bucket != want.Bucket {
		bad = append(bad, fmt.Sprintf("its manifest says bucket %s, but it was read from %s", orUnnamed(sum.S3Bucket), want.Bucket))
	}
	id := sum.ExportArn[strings.LastIndex(sum.ExportArn, "/")+1:]
	// In S3 the key is exact; a local copy (no bucket) may be rooted anywhere
	// above the export's folder.
	wantDir := path.Join(strings.Trim(sum.S3Prefix, "/"), "AWSDynamoDB", id)
	if dir != wantDir && (want.Bucket != "" || !strings.HasSuffix("/"+dir, "/"+wantDir)) {
		bad = append(bad, fmt.Sprintf("it lies at %s, but its s3Prefix %q and export id say %s", dir, sum.S3Prefix, wantDir))
	}
	if len(bad) > 0 {
		return v, refusal(ErrContradicted, name, bad, "use the exports DynamoDB wrote of this table (`dynops export list --table TABLE`)")
	}
	end, err := stampOf(sum.EndTime)
	if err != nil {
		return v, refusal(ErrContradicted, name, []string{"its endTime: " + err.Error()}, "use the exports DynamoDB wrote of this table")
	}
	desc, why := describe(ctx, t, sum.ExportArn)
	if err := ctx.Err(); err != nil {
		return v, fmt.Errorf("asking DynamoDB about export %s: %w", sum.ExportArn, err) // interrupted: no verdict
	}
	switch {
	case desc != nil:
		if bad := contradictions(sum, c.SummaryKey, desc); len(bad) > 0 {
			return v, refusal(ErrContradicted, name, bad, "the manifest was changed after DynamoDB wrote it: export the window again")
		}
		v.Verified, end = true, aws.ToTime(desc.EndTime)
	case t.Unverified == "":
		return v, refusal(ErrUnvouched, name, []string{"DescribeExport cannot vouch for it: " + why},
			"run as a principal of the account that exported it, or accept it with --unverified-exports \"REASON\" (audited; refused on a protected table without the break-glass role)")
	default:
		v.Unverified = why
	}
	v.EndTime = end
	bad, unknown := writtenAfter(ctx, store, sum, c.SummaryKey, end)
	if err := ctx.Err(); err != nil {
		return v, fmt.Errorf("reading when the data files of export %s were written: %w", sum.ExportArn, err)
	}
	if len(bad) > 0 {
		return v, refusal(ErrContradicted, name, bad, "a data file was overwritten after the export ended: export the window again, and find who can write to the prefix")
	}
	if len(unknown) > 0 {
		if t.Unverified == "" {
			return v, refusal(ErrUnvouched, name, unknown, "read the export from S3, or accept the copy with --unverified-exports \"REASON\"")
		}
		v.Verified = false
		v.Unverified = strings.TrimPrefix(v.Unverified+"; "+strings.Join(unknown, "; "), "; ")
	}
	return v, nil
}

// VouchUnnamed is Vouch for data without a manifest-summary.json under dir
// (the local emulator's exports): nothing names an export DynamoDB could
// answer for, so it is refused with ErrUnvouched unless t.Unverified gives
// a reason.
func VouchUnnamed(store Store, dir string, t Trust) (Vouched, error) {
	why := "no " + SummaryName + ": nothing names an export DynamoDB could answer for"
	if t.Unverified == "" {
		return Vouched{Dir: dir}, refusal(ErrUnvouched, "the data under "+store.Describe(dir), []string{why},
			"give the folder of an export DynamoDB wrote (with its manifests), or accept it with --unverified-exports \"REASON\" (audited; refused on a protected table without the break-glass role)")
	}
	return Vouched{Dir: dir, Unverified: why}, nil
}

// Claims reads every manifest-summary.json under prefix, as claims for
// Vouch; none is not an error (the caller says what it needed).
func Claims(ctx context.Context, store Store, prefix string) ([]Claim, error) {
	objs, err := ListUnder(ctx, store, prefix)
	if err != nil {
		return nil, err
	}
	var out []Claim
	for _, o := range objs {
		if path.Base(o.Key) != SummaryName {
			continue
		}
		c := Claim{SummaryKey: o.Key}
		if err := readJSON(ctx, store, o.Key, &c.Summary); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func refusal(kind error, name string, bad []string, fix string) error {
	return fmt.Errorf("%w: %s: %s; nothing was written; %s", kind, name, strings.Join(bad, "; "), fix)
}

func orUnnamed(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// describe asks DynamoDB about the export in its own region; a nil
// description comes with why there is none.
func describe(ctx context.Context, t Trust, exportArn string) (*types.ExportDescription, string) {
	a, err := arn.Parse(exportArn)
	if err != nil {
		return nil, fmt.Sprintf("%q is not an ARN", exportArn)
	}
	if t.Describer == nil {
		return nil, "no DynamoDB client to ask"
	}
	var opts []func(*dynamodb.Options)
	if t.Unverified != "" {
		// With a reason an export DynamoDB cannot answer for is accepted:
		// its question is best effort (one retry), not the data path's
		// patience. Without one, the answer decides and is waited for.
		opts = append(opts, func(o *dynamodb.Options) { o.RetryMaxAttempts = 2 })
	}
	out, err := t.Describer(a.Region).DescribeExport(ctx, &dynamodb.DescribeExportInput{ExportArn: &exportArn}, opts...)
	if err != nil {
		return nil, fmt.Sprintf("DescribeExport in %s: %v", a.Region, err)
	}
	if out.ExportDescription == nil {
		return nil, "DescribeExport answered without a description"
	}
	return out.ExportDescription, ""
}

// contradictions lists where DynamoDB's description and the manifest differ.
func contradictions(sum Summary, summaryKey string, d *types.ExportDescription) []string {
	var bad []string
	differ := func(what, manifest, dynamo string) {
		if manifest != dynamo {
			bad = append(bad, fmt.Sprintf("%s: the manifest says %q, DynamoDB %q", what, manifest, dynamo))
		}
	}
	if d.ExportStatus != types.ExportStatusCompleted {
		bad = append(bad, fmt.Sprintf("DynamoDB says it is %s, not COMPLETED", d.ExportStatus))
	}
	differ("export ARN", sum.ExportArn, aws.ToString(d.ExportArn))
	differ("table", sum.TableArn, aws.ToString(d.TableArn))
	differ("bucket", sum.S3Bucket, aws.ToString(d.S3Bucket))
	differ("prefix", strings.Trim(sum.S3Prefix, "/"), strings.Trim(aws.ToString(d.S3Prefix), "/"))
	// ExportManifest names the summary's key, with or without the prefix.
	if m := aws.ToString(d.ExportManifest); m != summaryKey && path.Join(strings.Trim(sum.S3Prefix, "/"), m) != summaryKey {
		bad = append(bad, fmt.Sprintf("manifest: read from %s, DynamoDB says %q", summaryKey, m))
	}
	typ := sum.ExportType
	if typ == "" {
		typ = string(types.ExportTypeFullExport)
	}
	differ("type", typ, string(d.ExportType))
	if d.ItemCount == nil || *d.ItemCount != sum.ItemCount {
		bad = append(bad, fmt.Sprintf("item count: the manifest says %d, DynamoDB %s", sum.ItemCount, count(d.ItemCount)))
	}
	differ("start time", millis(sum.StartTime), millisOf(d.StartTime))
	differ("end time", millis(sum.EndTime), millisOf(d.EndTime))
	if typ == string(types.ExportTypeIncrementalExport) {
		spec := d.IncrementalExportSpecification
		if spec == nil {
			spec = &types.IncrementalExportSpecification{}
		}
		differ("window start", millis(sum.ExportFromTime), millisOf(spec.ExportFromTime))
		differ("window end", millis(sum.ExportToTime), millisOf(spec.ExportToTime))
		differ("view", sum.OutputView, string(spec.ExportViewType))
	} else {
		differ("export time", millis(sum.ExportTime), millisOf(d.ExportTime))
	}
	return bad
}

// writtenAfter lists the data files (as the files manifest lists them)
// that S3 last wrote after end (bad), and those whose time the store cannot
// tell (unknown: a local copy).
func writtenAfter(ctx context.Context, store Store, sum Summary, summaryKey string, end time.Time) (bad, unknown []string) {
	filesKey, err := resolve(ctx, store, sum, sum.ManifestFilesS3Key, path.Dir(summaryKey)+"/"+FilesName)
	if err != nil {
		return []string{fmt.Sprintf("its %s: %v", FilesName, err)}, nil
	}
	entries, err := readFilesManifest(ctx, store, filesKey)
	if err != nil {
		return []string{err.Error()}, nil
	}
	for _, en := range entries {
		key, err := resolve(ctx, store, sum, en.DataFileS3Key, "")
		if err != nil {
			bad = append(bad, fmt.Sprintf("data file %s: %v", en.DataFileS3Key, err))
			continue
		}
		obj, err := store.Stat(ctx, key)
		switch {
		case err != nil:
			bad = append(bad, err.Error())
		case obj.LastModified.IsZero():
			unknown = append(unknown, fmt.Sprintf("%s: a local copy cannot say when S3 wrote it", store.Describe(key)))
		case obj.LastModified.After(end):
			bad = append(bad, fmt.Sprintf("%s was last written %s, after the export ended (%s)", store.Describe(key),
				obj.LastModified.UTC().Format(time.RFC3339), end.UTC().Format(time.RFC3339Nano)))
		}
	}
	return bad, unknown
}

func stampOf(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", s)
	}
	return t, nil
}

// millis writes a manifest time at the millisecond (the manifests' precision).
func millis(s string) string {
	t, err := stampOf(s)
	if err != nil {
		return s
	}
	return t.UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z")
}

func millisOf(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z")
}

func count(n *int64) string {
	if n == nil {
		return "nothing"
	}
	return fmt.Sprint(*n)
}
