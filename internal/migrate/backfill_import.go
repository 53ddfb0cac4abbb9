package migrate

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/ddbtags"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/migrate/routes"
	"github.com/dynops/dynops/internal/tablesettings"
)

// ImportAPI is what creating destinations with ImportTable uses: the
// import calls, the settings an import cannot set, and the tags of the
// source.
type ImportAPI interface {
	export.ImportDB
	tablesettings.DynamoDB
}

// S3Put writes the per-destination files the imports read.
type S3Put interface {
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

// ImportOptions make an export backfill create its destinations with
// ImportTable instead of writing into existing ones: each export data file
// is routed and transformed into one gzip DynamoDB JSON file per
// destination (`{"Item": {...}}` lines, the format ImportTable reads), under
// s3://To.Bucket/To.Prefix/<destination>/data/, and each destination is
// then created by an import of its prefix (on demand, the source's key),
// given the guideline settings an import cannot set, and read back.
type ImportOptions struct {
	To export.Target
	DB ImportAPI
	S3 S3Put
	// Started, Progress and Applied, when set, are called when an import
	// starts, while it runs, and for each setting applied after it.
	Started  func(table string, i export.Import)
	Progress func(table string, i export.Import)
	Applied  func(table string, c tablesettings.Change)
}

// ImportState is what the import path remembers: where the files are and
// each destination's import once started.
type ImportState struct {
	Bucket string                         `json:"bucket"`
	Prefix string                         `json:"prefix"`
	Tables map[string]*ImportedTableState `json:"tables,omitempty"`
}

// ImportedTableState is one destination created by ImportTable, as read
// back from the service.
type ImportedTableState struct {
	ImportArn string                  `json:"import_arn,omitempty"`
	Status    string                  `json:"status,omitempty"`
	Imported  int64                   `json:"imported_items"`
	Errors    int64                   `json:"errors"`
	Settings  []tablesettings.Change  `json:"settings_applied,omitempty"`
	ReadBack  *tablesettings.Settings `json:"settings_read_back,omitempty"`
	Done      bool                    `json:"done"`
}

// dataPrefix is where a destination's files go (ImportTable's S3KeyPrefix).
func (s *ImportState) dataPrefix(table string) string {
	return path.Join(s.Prefix, table, "data") + "/"
}

// checkAbsent refuses destinations that exist: ImportTable creates the
// table, so each must be new. Said before anything is written.
func checkAbsent(ctx context.Context, db DynamoDB, src *SourceInfo, r *routes.Routes) error {
	var problems []string
	for _, table := range r.Tables() {
		_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
		switch {
		case err == nil:
			problems = append(problems, fmt.Sprintf("destination %s exists: --import-to creates every destination with ImportTable, which only makes new tables. Drop --import-to to write into existing destinations, or remove %s from the routes", table, table))
		case !isNotFound(err):
			return fmt.Errorf("checking that destination %s does not exist yet (--import-to creates it): %w", table, err)
		}
		if table == src.Table {
			problems = append(problems, fmt.Sprintf("destination %s is the source itself", table))
		}
	}
	if len(problems) > 0 {
		return &InputError{problems}
	}
	return nil
}

// stageFile routes and transforms one export data file into one gzip
// DynamoDB JSON object per destination, named after the data file, so a
// re-run after a kill writes the same objects again (no duplicates).
func (b *backfiller) stageFile(ctx context.Context, ex *exportverify.Export, sum exportverify.Summary, en exportverify.FileEntry) error {
	is := b.st.Backfill.Export.Import
	fs := SegmentState{Written: map[string]int64{}}
	type out struct {
		buf bytes.Buffer
		gz  *gzip.Writer
	}
	outs := map[string]*out{}
	var chunk []map[string]types.AttributeValue
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		p, err := b.route(&dynamodb.ScanOutput{Items: chunk})
		if err != nil {
			return err
		}
		chunk = nil
		for table, reqs := range p.batches {
			o := outs[table]
			if o == nil {
				o = &out{}
				o.gz = gzip.NewWriter(&o.buf)
				outs[table] = o
			}
			for _, r := range reqs {
				line, err := encodeImportLine(r.PutRequest.Item)
				if err != nil {
					return fmt.Errorf("encoding an item for %s: %w", table, err)
				}
				if _, err := o.gz.Write(line); err != nil {
					return err
				}
			}
		}
		fs.add(p)
		return nil
	}
	err := ex.EachItemOfFile(ctx, sum, en, func(item map[string]types.AttributeValue) error {
		chunk = append(chunk, item)
		if len(chunk) < exportChunk {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	name := strings.TrimSuffix(path.Base(en.DataFileS3Key), ".json.gz")
	name = strings.TrimSuffix(name, ".gz") + ".json.gz"
	for _, table := range sortedTables(outs) {
		o := outs[table]
		if err := o.gz.Close(); err != nil {
			return err
		}
		key := is.dataPrefix(table) + name
		if _, err := b.o.Export.Import.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: &is.Bucket, Key: &key, Body: bytes.NewReader(o.buf.Bytes())}); err != nil {
			return fmt.Errorf("writing s3://%s/%s (%d items for %s): %w", is.Bucket, key, fs.Written[table], table, err)
		}
	}
	fs.Done = true
	err = b.st.Update(func(s *State) {
		s.Backfill.Export.Files[en.DataFileS3Key] = fs
		s.Backfill.ActiveSeconds = b.activeAtStart + b.o.Now().Sub(b.runStart).Seconds()
	})
	b.progress()
	return err
}

func sortedTables[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// encodeImportLine is one line of ImportTable's DYNAMODB_JSON input:
// {"Item": {...}} and a newline.
func encodeImportLine(item map[string]types.AttributeValue) ([]byte, error) {
	body, err := ddbjson.EncodeItem(item)
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(body)+10)
	line = append(line, `{"Item":`...)
	line = append(line, body...)
	return append(line, "}\n"...), nil
}

// importAll creates each destination from its files, several imports at
// once (an import already started for a destination, by an earlier run that was
// killed, is found and followed instead of started again), then applies the
// settings and reads them back.
func (b *backfiller) importAll(ctx context.Context, src *SourceInfo) error {
	res := backfillResult(b.st)
	is := b.st.Backfill.Export.Import
	var empty []string
	for _, table := range b.o.Routes.Tables() {
		if res.Written[table] == 0 {
			empty = append(empty, table)
		}
	}
	if len(empty) > 0 {
		return fmt.Errorf("no item of the export goes to %s: ImportTable cannot create a table from no file (nothing was imported; the files are under s3://%s/%s/). Create those destinations with terraform and run the backfill without --import-to, or remove them from the routes",
			strings.Join(empty, ", "), is.Bucket, is.Prefix)
	}
	schema := Schema(src)
	tags, err := destinationTags(ctx, b.o.Export.Import.DB, src)
	if err != nil {
		return err
	}
	// The destinations still to create, read before the imports run (each
	// import updates its own entry of the state, under its lock).
	var todo []string
	for _, table := range b.o.Routes.Tables() {
		if t := is.Tables[table]; t == nil || !t.Done {
			todo = append(todo, table)
		}
	}
	// The imports run side by side (each is hours of AWS's work for a
	// large table, and they do not depend on each other), at most
	// importParallel at once; the first error stops the rest from starting.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(importParallel)
	for _, table := range todo {
		g.Go(func() error { return b.importOne(gctx, table, schema, tags) })
	}
	return g.Wait()
}

// importParallel is how many destinations are imported at once: AWS runs
// import jobs concurrently, up to an account quota (ImportTable's
// LimitExceededException names it), far above this.
const importParallel = 8

// Schema is what an imported destination is created with: the source's
// key (items keep their key), on demand, no index (the routes may rename
// the attributes the source's indexes use: add indexes with terraform).
func Schema(src *SourceInfo) export.Schema {
	s := export.Schema{KeySchema: src.desc.KeySchema}
	for _, k := range src.desc.KeySchema {
		for _, d := range src.desc.AttributeDefinitions {
			if aws.ToString(d.AttributeName) == aws.ToString(k.AttributeName) {
				s.Attributes = append(s.Attributes, d)
			}
		}
	}
	return s
}

// destinationTags are the source's tags but its usage (each destination
// has its own), for the guideline settings of an imported destination.
func destinationTags(ctx context.Context, db ImportAPI, src *SourceInfo) (map[string]string, error) {
	tags, err := ddbtags.List(ctx, db, src.ARN)
	if err != nil {
		return nil, fmt.Errorf("reading the tags of the source %s (copied to the imported destinations): %w", src.Table, err)
	}
	out := map[string]string{}
	for k, v := range tags {
		if k != "usage" && !strings.HasPrefix(k, "aws:") {
			out[k] = v
		}
	}
	return out, nil
}

func (b *backfiller) importOne(ctx context.Context, table string, schema export.Schema, tags map[string]string) error {
	is := b.st.Backfill.Export.Import
	src := export.Source{Bucket: is.Bucket, DataPrefix: is.dataPrefix(table), Items: -1}
	want := map[string]string{export.TagImportedFrom: "s3://" + src.Bucket + "/" + src.DataPrefix}
	for k, v := range tags {
		want[k] = v
	}
	io := b.o.Export.Import
	out, err := export.RunImport(ctx, io.DB, export.ImportJob{Source: src, Table: table, Schema: schema, Want: tablesettings.Guideline(want),
		Started: func(imp export.Import, _ bool) error {
			if err := b.st.Update(func(s *State) {
				if s.Backfill.Export.Import.Tables == nil {
					s.Backfill.Export.Import.Tables = map[string]*ImportedTableState{}
				}
				s.Backfill.Export.Import.Tables[table] = &ImportedTableState{ImportArn: imp.Arn, Status: imp.Status}
			}); err != nil {
				return err
			}
			if io.Started != nil {
				io.Started(table, imp)
			}
			return nil
		},
		Waiting: func(i export.Import, _ time.Duration) {
			if io.Progress != nil {
				io.Progress(table, i)
			}
		},
		Applied: func(c tablesettings.Change) {
			if io.Applied != nil {
				io.Applied(table, c)
			}
		}})
	switch {
	case err != nil && !out.Imported && out.Import.Arn != "":
		return fmt.Errorf("creating destination %s: %w", table, err)
	case err != nil && out.Imported:
		return fmt.Errorf("%s was imported (%s) but a setting failed: %w; run the backfill again with the same --state to apply the rest", table, out.Import.Arn, err)
	case err != nil:
		return err
	}
	done := out.Import
	return b.st.Update(func(s *State) {
		s.Backfill.Export.Import.Tables[table] = &ImportedTableState{ImportArn: done.Arn, Status: done.Status, Imported: done.Imported,
			Errors: done.Errors, Settings: out.Applied, ReadBack: out.ReadBack, Done: true}
	})
}
