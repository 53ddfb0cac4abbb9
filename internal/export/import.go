package export

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/poll"
)

// ImportDB is the part of the API an import uses.
type ImportDB interface {
	ImportTable(context.Context, *dynamodb.ImportTableInput, ...func(*dynamodb.Options)) (*dynamodb.ImportTableOutput, error)
	DescribeImport(context.Context, *dynamodb.DescribeImportInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeImportOutput, error)
	ListImports(context.Context, *dynamodb.ListImportsInput, ...func(*dynamodb.Options)) (*dynamodb.ListImportsOutput, error)
}

// Source is one full export's data in S3, found under a prefix.
type Source struct {
	Bucket     string `json:"bucket"`
	DataPrefix string `json:"data_prefix"` // .../AWSDynamoDB/<ExportId>/data/
	ExportArn  string `json:"export_arn,omitempty"`
	Items      int64  `json:"items"` // from the manifest (-1 when there is none)
	Manifest   bool   `json:"manifest"`
	// claim is the manifest-summary.json read, for exportverify.Vouch.
	claim exportverify.Claim
}

// Claim is the export's manifest as read, for exportverify.Vouch; false
// when the source has no manifest (the local emulator's exports).
func (s Source) Claim() (exportverify.Claim, bool) { return s.claim, s.Manifest }

// FindSource finds the one full export under prefix. With a manifest it
// refuses incremental exports (ImportTable reads full-export items only);
// without one (the local emulator) it takes the one data folder.
func FindSource(ctx context.Context, store exportverify.Store, bucket, prefix string) (Source, error) {
	objs, err := exportverify.ListUnder(ctx, store, prefix)
	if err != nil {
		return Source{}, err
	}
	var summaries []string
	dataDirs := map[string]bool{}
	for _, o := range objs {
		switch {
		case path.Base(o.Key) == exportverify.SummaryName:
			summaries = append(summaries, o.Key)
		case path.Base(path.Dir(o.Key)) == "data":
			dataDirs[path.Dir(o.Key)+"/"] = true
		}
	}
	switch {
	case len(summaries) == 1:
		var sum exportverify.Summary
		body, err := store.Open(ctx, summaries[0])
		if err != nil {
			return Source{}, err
		}
		defer body.Close()
		if err := decodeJSON(body, &sum); err != nil {
			return Source{}, fmt.Errorf("%s: %w", store.Describe(summaries[0]), err)
		}
		if sum.ExportType == "INCREMENTAL_EXPORT" {
			return Source{}, fmt.Errorf("%s is an incremental export: import a FULL export (the baseline) instead", store.Describe(path.Dir(summaries[0])))
		}
		return Source{Bucket: bucket, DataPrefix: path.Dir(summaries[0]) + "/data/", ExportArn: sum.ExportArn, Items: sum.ItemCount, Manifest: true,
			claim: exportverify.Claim{SummaryKey: summaries[0], Summary: sum}}, nil
	case len(summaries) > 1:
		return Source{}, fmt.Errorf("%d exports under %s (%s): pass --prefix down to one export's folder", len(summaries), store.Describe(prefix), strings.Join(dirsOf(summaries), ", "))
	case len(dataDirs) == 1:
		for d := range dataDirs {
			return Source{Bucket: bucket, DataPrefix: d, Items: -1}, nil
		}
	case len(dataDirs) > 1:
		var ds []string
		for d := range dataDirs {
			ds = append(ds, d)
		}
		sort.Strings(ds)
		return Source{}, fmt.Errorf("%d data folders under %s (%s): pass --prefix down to one export's folder", len(ds), store.Describe(prefix), strings.Join(ds, ", "))
	}
	return Source{}, fmt.Errorf("no export under %s (no %s and no data/ folder)", store.Describe(prefix), exportverify.SummaryName)
}

func dirsOf(keys []string) []string {
	ds := make([]string, len(keys))
	for i, k := range keys {
		ds[i] = path.Dir(k)
	}
	return ds
}

// Schema is what ImportTable needs to create the table: keys, attribute
// definitions and GSIs (the data carries none of them).
type Schema struct {
	KeySchema  []types.KeySchemaElement     `json:"key_schema"`
	Attributes []types.AttributeDefinition  `json:"attributes"`
	GSIs       []types.GlobalSecondaryIndex `json:"gsis,omitempty"`
}

// SchemaOf reads the schema of a live table (usually the export's source,
// in its own region).
func SchemaOf(ctx context.Context, db DynamoDB, table string) (Schema, error) {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return Schema{}, fmt.Errorf("reading the schema of %s: %w", table, err)
	}
	t := out.Table
	s := Schema{KeySchema: t.KeySchema, Attributes: t.AttributeDefinitions}
	for _, g := range t.GlobalSecondaryIndexes {
		s.GSIs = append(s.GSIs, types.GlobalSecondaryIndex{IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection})
	}
	return s, nil
}

// ParseKey parses "name:TYPE" (TYPE S, N or B; DDB-IDX-04).
func ParseKey(spec string) (types.AttributeDefinition, error) {
	name, typ, ok := strings.Cut(spec, ":")
	typ = strings.ToUpper(typ)
	if !ok || name == "" || (typ != "S" && typ != "N" && typ != "B") {
		return types.AttributeDefinition{}, fmt.Errorf("key %q: write NAME:TYPE with TYPE S, N or B (e.g. user_id:S)", spec)
	}
	return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeType(typ)}, nil
}

// KeySchema builds a Schema from a hash key and an optional range key.
func KeySchema(hash types.AttributeDefinition, rng *types.AttributeDefinition) Schema {
	s := Schema{
		KeySchema:  []types.KeySchemaElement{{AttributeName: hash.AttributeName, KeyType: types.KeyTypeHash}},
		Attributes: []types.AttributeDefinition{hash},
	}
	if rng != nil {
		s.KeySchema = append(s.KeySchema, types.KeySchemaElement{AttributeName: rng.AttributeName, KeyType: types.KeyTypeRange})
		s.Attributes = append(s.Attributes, *rng)
	}
	return s
}

// Import is what dynops shows of an import.
type Import struct {
	Arn       string `json:"import_arn"`
	Status    string `json:"status"`
	TableArn  string `json:"table_arn,omitempty"`
	Imported  int64  `json:"imported_items"`
	Processed int64  `json:"processed_items"`
	Errors    int64  `json:"errors"`
	Failure   string `json:"failure,omitempty"`
}

func fromImport(d *types.ImportTableDescription) Import {
	i := Import{Arn: aws.ToString(d.ImportArn), Status: string(d.ImportStatus), TableArn: aws.ToString(d.TableArn),
		Imported: d.ImportedItemCount, Processed: d.ProcessedItemCount, Errors: d.ErrorCount}
	if d.FailureCode != nil || d.FailureMessage != nil {
		i.Failure = strings.TrimSpace(aws.ToString(d.FailureCode) + " " + aws.ToString(d.FailureMessage))
	}
	return i
}

// StartImport creates table from the source's gzip DynamoDB JSON, on demand
// (DDB-CAP-01), and returns the import, and whether it was one already
// started for this table and source that the run took as its own.
//
// ImportTable carries a client token (AWS returns the same import for a
// retried request), but dynops does not rely on it (the local emulator
// ignores it, and a token expires after 8 hours): each attempt is one
// request, and after any error (a lost answer included) FindImport looks
// for an import already started into table from the same S3 source; one
// found is taken instead of starting another. Only when none is found is
// a retryable error retried, with dynops's one retry policy
// (awsconfig.Retryer). When the imports cannot be listed, nothing more is
// started (fail closed): the error says what to check.
func StartImport(ctx context.Context, db ImportDB, src Source, table string, s Schema, token string) (Import, bool, error) {
	in := &dynamodb.ImportTableInput{
		S3BucketSource:       &types.S3BucketSource{S3Bucket: &src.Bucket, S3KeyPrefix: &src.DataPrefix},
		InputFormat:          types.InputFormatDynamodbJson,
		InputCompressionType: types.InputCompressionTypeGzip,
		ClientToken:          optional(token),
		TableCreationParameters: &types.TableCreationParameters{
			TableName: &table, KeySchema: s.KeySchema, AttributeDefinitions: s.Attributes,
			BillingMode: types.BillingModePayPerRequest, GlobalSecondaryIndexes: s.GSIs,
		},
	}
	retryer := awsconfig.Retryer(0)
	for attempt := 1; ; attempt++ {
		out, err := db.ImportTable(ctx, in, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		if err == nil {
			return fromImport(out.ImportTableDescription), false, nil
		}
		err = fmt.Errorf("importing s3://%s/%s into %s: %w", src.Bucket, src.DataPrefix, table, err)
		found, ferr := FindImport(ctx, db, table, src)
		if ferr != nil {
			return Import{}, false, fmt.Errorf("%w; then looking for an import that request may have started: %v; nothing more was started: before running again, check `aws dynamodb list-imports` for an import into %s from s3://%s/%s (a second ImportTable would fail on the table the first creates)",
				err, ferr, table, src.Bucket, src.DataPrefix)
		}
		if found != nil {
			return *found, true, nil
		}
		if !retryer.IsErrorRetryable(err) || attempt >= retryer.MaxAttempts() {
			return Import{}, false, err
		}
		delay, derr := retryer.RetryDelay(attempt, err)
		if derr != nil {
			return Import{}, false, err
		}
		select {
		case <-ctx.Done():
			return Import{}, false, fmt.Errorf("%w (stopped waiting to retry: %w)", err, ctx.Err())
		case <-time.After(delay):
		}
	}
}

// FindImport returns the import into table (in the client's region) from
// src's bucket and data prefix that is IN_PROGRESS or COMPLETED, nil when
// there is none. Several such imports are an error naming them (dynops
// cannot tell which is the table's).
func FindImport(ctx context.Context, db ImportDB, table string, src Source) (*Import, error) {
	var found []Import
	pages := dynamodb.NewListImportsPaginator(db, &dynamodb.ListImportsInput{})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing imports: %w", err)
		}
		for _, sum := range out.ImportSummaryList {
			if !strings.HasSuffix(aws.ToString(sum.TableArn), ":table/"+table) || sum.S3BucketSource == nil ||
				aws.ToString(sum.S3BucketSource.S3Bucket) != src.Bucket || aws.ToString(sum.S3BucketSource.S3KeyPrefix) != src.DataPrefix {
				continue
			}
			switch sum.ImportStatus {
			case types.ImportStatusInProgress, types.ImportStatusCompleted:
				found = append(found, Import{Arn: aws.ToString(sum.ImportArn), Status: string(sum.ImportStatus), TableArn: aws.ToString(sum.TableArn)})
			}
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return &found[0], nil
	}
	arns := make([]string, len(found))
	for i, f := range found {
		arns[i] = f.Arn + " (" + f.Status + ")"
	}
	return nil, fmt.Errorf("%d imports into %s from s3://%s/%s: %s; dynops cannot tell which one is the table's: follow them with `aws dynamodb describe-import`", len(found), table, src.Bucket, src.DataPrefix, strings.Join(arns, ", "))
}

// ErrImportFailed: the import ended FAILED or CANCELLED.
var ErrImportFailed = errors.New("import failed")

// WaitImport polls the import until it ends, calling progress after each
// poll; the context's --wait-timeout (internal/poll) ends the wait.
func WaitImport(ctx context.Context, db ImportDB, arn string, progress func(i Import, waited time.Duration)) (Import, error) {
	var i Import
	o := poll.Options{Interval: time.Second, MaxInterval: 30 * time.Second, What: "import " + arn,
		Resume: "follow it with `aws dynamodb describe-import --import-arn " + arn + "`"}
	if progress != nil {
		o.Progress = func(waited time.Duration) { progress(i, waited) }
	}
	err := poll.Until(ctx, o, func(ctx context.Context) (bool, string, error) {
		out, err := db.DescribeImport(ctx, &dynamodb.DescribeImportInput{ImportArn: &arn})
		if err != nil {
			return false, "", fmt.Errorf("describing import %s: %w", arn, err)
		}
		i = fromImport(out.ImportTableDescription)
		switch types.ImportStatus(i.Status) {
		case types.ImportStatusCompleted, types.ImportStatusFailed, types.ImportStatusCancelled:
			return true, i.Status, nil
		}
		return false, i.Status, nil
	})
	if err != nil {
		return i, err
	}
	switch types.ImportStatus(i.Status) {
	case types.ImportStatusFailed, types.ImportStatusCancelled:
		return i, fmt.Errorf("%s: %w (%s): %s", arn, ErrImportFailed, i.Status, i.Failure)
	}
	return i, nil
}

// Scanner is the part of the API CountTableItems uses.
type Scanner interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// CountTableItems counts a table's items with a paged COUNT scan, following
// LastEvaluatedKey (DDB-API-03): the check after an import.
func CountTableItems(ctx context.Context, db Scanner, table string) (int64, error) {
	var n int64
	in := &dynamodb.ScanInput{TableName: &table, Select: types.SelectCount}
	for {
		out, err := db.Scan(ctx, in)
		if err != nil {
			return n, fmt.Errorf("counting the items of %s: %w", table, err)
		}
		n += int64(out.Count)
		if in.ExclusiveStartKey = out.LastEvaluatedKey; len(in.ExclusiveStartKey) == 0 {
			return n, nil
		}
	}
}

// ErrExportDamaged: an export failed verification; nothing was imported.
var ErrExportDamaged = errors.New("the export failed verification")

// VerifySource checks the source export with exportverify (the same check as
// `dynops export verify`: manifests, checksums, every data file) before
// anything reads it, and refuses on any finding: a damaged export must not
// start an ImportTable that fails half-way and leaves a table behind. Without
// a manifest (the local emulator) every data file must decode.
func VerifySource(ctx context.Context, store exportverify.Store, src Source) (exportverify.Report, error) {
	dir, o := strings.TrimSuffix(src.DataPrefix, "data/"), exportverify.Options{}
	if !src.Manifest {
		dir, o.DataOnly = src.DataPrefix, true
	}
	rep, err := exportverify.Verify(ctx, store, dir, o)
	if err != nil {
		return rep, fmt.Errorf("verifying %s before using it: %w", store.Describe(dir), err)
	}
	if !rep.OK {
		var problems []string
		for _, ex := range rep.Exports {
			problems = append(problems, ex.Problems...)
		}
		return rep, fmt.Errorf("%w, nothing changed: %s\n  - %s\n(see `dynops export verify --bucket %s --prefix %s`; export again, or restore the damaged files)",
			ErrExportDamaged, store.Describe(dir), strings.Join(problems, "\n  - "), src.Bucket, strings.TrimSuffix(dir, "/"))
	}
	return rep, nil
}
