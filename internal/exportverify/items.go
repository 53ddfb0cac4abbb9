package exportverify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"runtime"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/dynops/dynops/internal/ddbjson"
)

// Export is one full export as a source of items (table diff
// --source-export, pitr repair --from-export).
type Export struct {
	Store  Store
	Prefix string // under which exactly one manifest-summary.json lies
	URI    string // as the user gave it, for messages and keys files
}

// ExportSummary reads the export's manifest-summary.json and returns it with
// its key. There must be exactly one under the prefix, of a full export.
func (e Export) ExportSummary(ctx context.Context) (Summary, string, error) {
	objs, err := e.Store.List(ctx, e.Prefix)
	if err != nil {
		return Summary{}, "", err
	}
	var keys []string
	for _, o := range objs {
		if path.Base(o.Key) == SummaryName {
			keys = append(keys, o.Key)
		}
	}
	switch len(keys) {
	case 0:
		return Summary{}, "", fmt.Errorf("no %s under %s: not a finished export in AWS's format (give the export's folder, .../AWSDynamoDB/<export id>)", SummaryName, e.URI)
	case 1:
	default:
		return Summary{}, "", fmt.Errorf("%d exports under %s (%s): give one export's folder, e.g. %s", len(keys), e.URI,
			strings.Join(keys, ", "), e.Store.Describe(path.Dir(keys[0])))
	}
	var sum Summary
	if err := readJSON(ctx, e.Store, keys[0], &sum); err != nil {
		return Summary{}, "", err
	}
	if sum.ExportType == "INCREMENTAL_EXPORT" {
		return Summary{}, "", fmt.Errorf("%s is an incremental export: it holds changes, not a table's items; diff against a full export", e.Store.Describe(keys[0]))
	}
	return sum, keys[0], nil
}

// EachItem streams every item of the export to fn, from any goroutine
// (fn must be safe for concurrent use; items come in no particular order).
// parallel data files are read at once (download, gunzip, MD5, cutting into
// lines: one goroutine each) and their lines are decoded by one parser per
// core (runtime.GOMAXPROCS), so one process uses every core while memory
// stays flat: two 64 KB chunks of lines per parser are in flight, however
// large the export (see parsePool). Each file is checked as Verify checks it
// (listed MD5, size, item count; the counts must add up to the summary's),
// and the first problem ends the read with an error naming the file: a diff
// or repair never runs on a damaged export.
func (e Export) EachItem(ctx context.Context, parallel int, fn func(item map[string]types.AttributeValue) error) (Summary, error) {
	sum, entries, err := e.Files(ctx)
	if err != nil {
		return sum, err
	}
	g, gctx := errgroup.WithContext(ctx)
	pool := newParsePool(gctx, runtime.GOMAXPROCS(0), fn)
	g.SetLimit(max(parallel, 1))
	for _, en := range entries {
		g.Go(func() error {
			f := pool.file()
			return e.readDataFile(gctx, sum, en, f.add, f.wait)
		})
	}
	err = g.Wait()
	pool.close()
	return sum, err
}

// Files reads the export's summary and its list of data files, and checks
// that the files' item counts add up to the summary's.
func (e Export) Files(ctx context.Context) (Summary, []FileEntry, error) {
	sum, summaryKey, err := e.ExportSummary(ctx)
	if err != nil {
		return sum, nil, err
	}
	filesKey, err := resolve(ctx, e.Store, sum, sum.ManifestFilesS3Key, path.Dir(summaryKey)+"/"+FilesName)
	if err != nil {
		return sum, nil, fmt.Errorf("%s of %s: %w", FilesName, e.Store.Describe(summaryKey), err)
	}
	entries, err := readFilesManifest(ctx, e.Store, filesKey)
	if err != nil {
		return sum, nil, err
	}
	var listed int64
	for _, en := range entries {
		listed += en.ItemCount
	}
	if listed != sum.ItemCount {
		return sum, nil, fmt.Errorf("%s lists %d items but %s says itemCount %d: the export is inconsistent", e.Store.Describe(filesKey), listed, SummaryName, sum.ItemCount)
	}
	return sum, entries, nil
}

// EachItemOfFile streams the items of one data file of the export to fn,
// in the file's order from the calling goroutine, and checks the file as
// Verify does (MD5, size, item count): an error names the file. A caller
// that checkpoints per file (migrate backfill --from-export) keeps a file's
// results only once this returns nil.
func (e Export) EachItemOfFile(ctx context.Context, sum Summary, en FileEntry, fn func(map[string]types.AttributeValue) error) error {
	return e.readDataFile(ctx, sum, en, func(line []byte) error { return decodeItem(line, fn) }, nil)
}

// decodeItem decodes one line of a full export and hands its item to fn.
func decodeItem(line []byte, fn func(map[string]types.AttributeValue) error) error {
	l, err := ddbjson.Decode(line)
	if err != nil {
		return err
	}
	if len(l.Item) == 0 {
		return fmt.Errorf(`no "Item": not a full export`)
	}
	return fn(l.Item)
}

// readDataFile reads one data file to its end, each line to line (in order,
// on this goroutine), and checks it (MD5, size, item count). When line only
// hands the lines on, wait is called once the file is read: it returns when
// they are all done, with the first failed line's error. An error names the
// file; a file cut short is reported as truncated even when a line the cut
// made failed first.
func (e Export) readDataFile(ctx context.Context, sum Summary, en FileEntry, line func([]byte) error, wait func() error) error {
	key, err := resolve(ctx, e.Store, sum, en.DataFileS3Key, "")
	if err != nil {
		return fmt.Errorf("data file %s listed in %s: %w", en.DataFileS3Key, FilesName, err)
	}
	obj, err := e.Store.Stat(ctx, key)
	if err != nil {
		return err
	}
	body, err := e.Store.Open(ctx, key)
	if err != nil {
		return err
	}
	defer body.Close()
	n, items, md5sum, err := scanFile(body, line)
	if wait != nil {
		// The read's own error (truncation, gzip, the context) says more
		// than a line it cut; otherwise the first line that failed.
		if werr := wait(); werr != nil && (err == nil || errors.Is(err, errLinesFailed)) {
			err = werr
		}
	}
	where := e.Store.Describe(key)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", where, err)
	case en.MD5Checksum != "" && md5sum != en.MD5Checksum:
		return fmt.Errorf("%s: MD5 %s, manifest says %s: the file changed or is damaged", where, md5sum, en.MD5Checksum)
	case obj.Size != n:
		return fmt.Errorf("%s: read %d bytes of %d", where, n, obj.Size)
	case items != en.ItemCount:
		return fmt.Errorf("%s: %d items, manifest says %d", where, items, en.ItemCount)
	}
	return nil
}

// OpenExport returns the export at uri: s3://BUCKET/PREFIX (read with the
// client s3 returns) or a local directory holding a copy of the bucket
// (e.g. after aws s3 sync), with the export's folder somewhere under it.
func OpenExport(uri string, s3 func() (S3API, error)) (*Export, error) {
	if rest, ok := strings.CutPrefix(uri, "s3://"); ok {
		bucket, prefix, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return nil, fmt.Errorf("export %q has no bucket: write s3://BUCKET/PREFIX/AWSDynamoDB/EXPORT_ID", uri)
		}
		client, err := s3()
		if err != nil {
			return nil, err
		}
		return &Export{Store: S3Store{Client: client, Bucket: bucket}, Prefix: prefix, URI: uri}, nil
	}
	if strings.Contains(uri, "://") {
		return nil, fmt.Errorf("export %q: give s3://BUCKET/PREFIX or a local directory", uri)
	}
	info, err := os.Stat(uri)
	if err != nil || !info.IsDir() {
		return nil, fmt.Errorf("export %q: not s3://BUCKET/PREFIX and not a local directory (%v)", uri, err)
	}
	return &Export{Store: DirStore{Root: uri}, URI: uri}, nil
}
