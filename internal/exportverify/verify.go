// Package exportverify checks a DynamoDB export in S3 against its manifests,
// in the layout AWS documents (S3DataExport.Output):
//
//	<prefix>/AWSDynamoDB/<ExportId>/manifest-summary.json  (one JSON object)
//	<prefix>/AWSDynamoDB/<ExportId>/manifest-files.json    (JSON lines: itemCount, md5Checksum, etag, dataFileS3Key)
//	<prefix>/AWSDynamoDB/<ExportId>/data/<name>.json.gz    (full export: {"Item": {...}} per line)
//	<prefix>/AWSDynamoDB/data/<name>.json.gz               (incremental: {"Metadata", "Keys", "OldImage", "NewImage"} per line)
//
// Both manifests must match their checksum files (manifest-summary.md5 and
// manifest-files.md5 in real exports: the base64 MD5 of the JSON file; the
// developer guide names them .checksum, so both names are accepted). Every
// data file the files manifest lists must exist, have the listed MD5 (and
// ETag, where the store knows it), decode as gzip DynamoDB JSON, and hold the
// listed number of items; the listed counts must add up to the summary's
// itemCount.
//
// Sources: the developer guide's "DynamoDB table export output format"
// (awsdocs/amazon-dynamodb-developer-guide doc_source/S3DataExport.Output.md,
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataExport.Output.html)
// for the layout, the manifests, empty partitions and the incremental
// records; real exports for the .md5 names (24 bytes: base64 MD5). Data-only mode (for exports without manifests, such
// as the local emulator's) decodes and counts every data file under the
// prefix and can check nothing else.
package exportverify

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/dynops/dynops/internal/ddbjson"
)

// Manifest file names.
const (
	SummaryName = "manifest-summary.json"
	FilesName   = "manifest-files.json"
)

// Summary is manifest-summary.json (full and incremental exports).
type Summary struct {
	Version            string `json:"version"`
	ExportArn          string `json:"exportArn"`
	StartTime          string `json:"startTime"`
	EndTime            string `json:"endTime"`
	TableArn           string `json:"tableArn"`
	TableID            string `json:"tableId"`
	ExportTime         string `json:"exportTime,omitempty"`     // full
	ExportFromTime     string `json:"exportFromTime,omitempty"` // incremental
	ExportToTime       string `json:"exportToTime,omitempty"`   // incremental
	S3Bucket           string `json:"s3Bucket"`
	S3Prefix           string `json:"s3Prefix"`
	S3SseAlgorithm     string `json:"s3SseAlgorithm"`
	S3SseKmsKeyID      any    `json:"s3SseKmsKeyId"`
	ManifestFilesS3Key string `json:"manifestFilesS3Key"`
	BilledSizeBytes    int64  `json:"billedSizeBytes"`
	ItemCount          int64  `json:"itemCount"`
	OutputFormat       string `json:"outputFormat"`
	OutputView         string `json:"outputView,omitempty"` // incremental
	ExportType         string `json:"exportType,omitempty"` // absent on full exports before incremental existed
}

// FileEntry is one line of manifest-files.json.
type FileEntry struct {
	ItemCount     int64  `json:"itemCount"`
	MD5Checksum   string `json:"md5Checksum"`
	ETag          string `json:"etag"`
	DataFileS3Key string `json:"dataFileS3Key"`
}

// File statuses.
const (
	StatusOK         = "ok"
	StatusMissing    = "missing"
	StatusUnreadable = "unreadable" // exists, but could not be read (e.g. access denied)
	StatusCorrupt    = "corrupt"    // does not decode
	StatusTruncated  = "truncated"  // ends before its gzip stream does
	StatusMismatch   = "mismatch"   // decodes, but differs from the manifest
)

// FileResult is the verdict on one data file.
type FileResult struct {
	Key         string `json:"key"`
	Status      string `json:"status"`
	Bytes       int64  `json:"bytes"`
	Items       int64  `json:"items"`                  // decoded
	ListedItems int64  `json:"listed_items,omitempty"` // from the manifest
	Detail      string `json:"detail,omitempty"`
}

// ExportResult is the verdict on one export (one manifest-summary.json, or
// in data-only mode the data files of one data folder).
type ExportResult struct {
	Dir          string       `json:"dir"`
	ExportArn    string       `json:"export_arn,omitempty"`
	ExportType   string       `json:"export_type,omitempty"`
	SummaryItems int64        `json:"summary_items"` // manifest-summary itemCount (data-only: decoded)
	ListedItems  int64        `json:"listed_items"`  // sum of manifest-files itemCount
	Items        int64        `json:"items"`         // decoded from the data files
	Bytes        int64        `json:"bytes"`         // compressed bytes read
	Files        []FileResult `json:"files"`
	Problems     []string     `json:"problems,omitempty"`
	OK           bool         `json:"ok"`
}

// Report is what Verify found.
type Report struct {
	Location string         `json:"location"`
	Mode     string         `json:"mode"` // "manifest" or "data-only"
	Exports  []ExportResult `json:"exports"`
	Items    int64          `json:"items"`
	Bytes    int64          `json:"bytes"`
	OK       bool           `json:"ok"`
}

// Options tune Verify.
type Options struct {
	// DataOnly decodes and counts every data file under the prefix without
	// manifests (e.g. the local emulator's exports, which have none).
	DataOnly bool
	// Parallel is how many files are read at once (default 4).
	Parallel int
	// Progress, when set, is called after each file.
	Progress func(done, total int)
}

// Verify checks every export under prefix in store. An error means the
// check could not run (nothing to verify, S3 unreachable); a failed check is
// a Report with OK false and the problem named per file.
func Verify(ctx context.Context, store Store, prefix string, o Options) (Report, error) {
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	rep := Report{Location: store.Describe(prefix), Mode: "manifest"}
	objs, err := ListUnder(ctx, store, prefix)
	if err != nil {
		return rep, err
	}
	if o.DataOnly {
		rep.Mode = "data-only"
		exs, err := verifyDataOnly(ctx, store, prefix, objs, o)
		if err != nil {
			return rep, err
		}
		rep.Exports = exs
	} else {
		var summaries []string
		for _, obj := range objs {
			if path.Base(obj.Key) == SummaryName {
				summaries = append(summaries, obj.Key)
			}
		}
		if len(summaries) == 0 {
			return rep, fmt.Errorf("no %s under %s: not an export prefix, or the export has not finished (exports without manifests, such as the local emulator's, need --data-only)", SummaryName, store.Describe(prefix))
		}
		for _, key := range summaries {
			rep.Exports = append(rep.Exports, verifyExport(ctx, store, key, o))
		}
	}
	rep.OK = true
	for _, ex := range rep.Exports {
		rep.Items += ex.Items
		rep.Bytes += ex.Bytes
		rep.OK = rep.OK && ex.OK
	}
	return rep, nil
}

func verifyExport(ctx context.Context, store Store, summaryKey string, o Options) ExportResult {
	dir := path.Dir(summaryKey)
	ex := ExportResult{Dir: dir}
	fail := func(format string, args ...any) ExportResult {
		ex.Problems = append(ex.Problems, fmt.Sprintf(format, args...))
		return ex
	}
	var sum Summary
	if err := readJSON(ctx, store, summaryKey, &sum); err != nil {
		return fail("%v", err)
	}
	ex.ExportArn, ex.ExportType, ex.SummaryItems = sum.ExportArn, sum.ExportType, sum.ItemCount
	if ex.ExportType == "" {
		ex.ExportType = "FULL_EXPORT"
	}
	if p := checkChecksum(ctx, store, summaryKey); p != "" {
		ex.Problems = append(ex.Problems, p)
	}
	filesKey, err := resolve(ctx, store, sum, sum.ManifestFilesS3Key, dir+"/"+FilesName)
	if err != nil {
		return fail("%s of %s: %v", FilesName, store.Describe(summaryKey), err)
	}
	if p := checkChecksum(ctx, store, filesKey); p != "" {
		ex.Problems = append(ex.Problems, p)
	}
	entries, err := readFilesManifest(ctx, store, filesKey)
	if err != nil {
		return fail("%v", err)
	}
	jobs := make([]job, len(entries))
	for i, e := range entries {
		jobs[i] = job{entry: e, key: e.DataFileS3Key}
		ex.ListedItems += e.ItemCount
	}
	ex.Files = runJobs(ctx, store, sum, jobs, o)
	return finish(ex, sum.ItemCount)
}

// verifyDataOnly checks the data files under prefix without manifests. Each
// data folder (…/data/) is its own export, verified and counted on its own:
// two exports side by side under one prefix are two results, not one sum
// that matches neither table.
func verifyDataOnly(ctx context.Context, store Store, prefix string, objs []Object, o Options) ([]ExportResult, error) {
	var dirs []string
	jobs := map[string][]job{}
	for _, obj := range objs {
		dir, ok := DataFolderExport(obj.Key)
		if !ok || !strings.HasSuffix(obj.Key, ".gz") {
			continue
		}
		if _, seen := jobs[dir]; !seen {
			dirs = append(dirs, dir)
		}
		jobs[dir] = append(jobs[dir], job{key: obj.Key, dataOnly: true})
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no data files (.../data/*.gz) under %s: nothing was exported there", store.Describe(prefix))
	}
	total := 0
	for _, d := range dirs {
		total += len(jobs[d])
	}
	var done int
	var mu sync.Mutex
	each := o
	if o.Progress != nil {
		each.Progress = func(int, int) {
			mu.Lock()
			defer mu.Unlock()
			done++
			o.Progress(done, total)
		}
	}
	out := make([]ExportResult, 0, len(dirs))
	for _, d := range dirs {
		ex := ExportResult{Dir: d}
		ex.Files = runJobs(ctx, store, Summary{}, jobs[d], each)
		var items int64
		for _, f := range ex.Files {
			items += f.Items
		}
		ex.ListedItems = items
		out = append(out, finish(ex, items))
	}
	return out, nil
}

// DataFolderExport is the folder of the export a data file belongs to: the
// folder that holds its data/ folder (<prefix>/AWSDynamoDB/<ExportId> for a
// full export; <prefix>/AWSDynamoDB for incremental ones, which share theirs),
// and false for a key in no data/ folder.
func DataFolderExport(key string) (string, bool) {
	i := strings.LastIndex("/"+key, "/data/")
	if i < 0 {
		return "", false
	}
	return strings.TrimSuffix(key[:i], "/"), true
}

// finish adds up the files and checks the totals against the summary.
func finish(ex ExportResult, summaryItems int64) ExportResult {
	for _, f := range ex.Files {
		ex.Items += f.Items
		ex.Bytes += f.Bytes
		if f.Status != StatusOK {
			ex.Problems = append(ex.Problems, fmt.Sprintf("%s: %s (%s)", f.Key, f.Status, f.Detail))
		}
	}
	if ex.ListedItems != summaryItems {
		ex.Problems = append(ex.Problems, fmt.Sprintf("%s lists %d items but %s says itemCount %d", FilesName, ex.ListedItems, SummaryName, summaryItems))
	}
	if ex.Items != summaryItems {
		ex.Problems = append(ex.Problems, fmt.Sprintf("the data files hold %d items but %s says itemCount %d", ex.Items, SummaryName, summaryItems))
	}
	ex.OK = len(ex.Problems) == 0
	return ex
}

// ChecksumSuffixes are the names of a manifest's checksum file: real exports
// write NAME.md5, the developer guide says NAME.checksum.
var ChecksumSuffixes = []string{".md5", ".checksum"}

// checkChecksum compares a manifest with its checksum file (base64 or hex
// MD5 of the manifest's bytes) and returns the problem, or "". A manifest
// without a checksum file is a problem: AWS writes one with every manifest.
func checkChecksum(ctx context.Context, store Store, key string) string {
	base := strings.TrimSuffix(key, ".json")
	var tried []string
	for _, suf := range ChecksumSuffixes {
		ck := base + suf
		tried = append(tried, path.Base(ck))
		want, err := readAll(ctx, store, ck)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Sprintf("checksum of %s unreadable: %v", path.Base(key), err)
		}
		body, err := readAll(ctx, store, key)
		if err != nil {
			return fmt.Sprintf("%s unreadable: %v", store.Describe(key), err)
		}
		sum := md5.Sum(body)
		w := strings.TrimSpace(string(want))
		if w != base64.StdEncoding.EncodeToString(sum[:]) && !strings.EqualFold(w, hex.EncodeToString(sum[:])) {
			return fmt.Sprintf("%s does not match %s: MD5 %s, checksum file says %q (the manifest was changed or cut short)",
				path.Base(key), store.Describe(ck), base64.StdEncoding.EncodeToString(sum[:]), w)
		}
		return ""
	}
	return fmt.Sprintf("no checksum file for %s (looked for %s next to it; AWS writes one with every manifest)", store.Describe(key), strings.Join(tried, ", "))
}

func readAll(ctx context.Context, store Store, key string) ([]byte, error) {
	if _, err := store.Stat(ctx, key); err != nil {
		return nil, err
	}
	body, err := store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", store.Describe(key), err)
	}
	return b, nil
}

// UnderPrefix says whether key lies under prefix, matched by path segment:
// "exports/a-full" holds "exports/a-full/x" but not "exports/a-full-old/x".
// A prefix ending in "/" (or empty) is a folder already.
func UnderPrefix(key, prefix string) bool {
	if prefix == "" || strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(key, prefix)
	}
	return key == prefix || strings.HasPrefix(key, prefix+"/")
}

// ListUnder lists the objects under prefix, matched by path segment
// (UnderPrefix): the one way dynops lists an export prefix.
func ListUnder(ctx context.Context, store Store, prefix string) ([]Object, error) {
	objs, err := store.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := objs[:0]
	for _, o := range objs {
		if UnderPrefix(o.Key, prefix) {
			out = append(out, o)
		}
	}
	return out, nil
}

type job struct {
	entry    FileEntry
	key      string
	dataOnly bool
}

func runJobs(ctx context.Context, store Store, sum Summary, jobs []job, o Options) []FileResult {
	results := make([]FileResult, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range min(o.Parallel, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = checkFile(ctx, store, sum, jobs[i])
				if o.Progress != nil {
					mu.Lock()
					done++
					o.Progress(done, len(jobs))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

func checkFile(ctx context.Context, store Store, sum Summary, j job) FileResult {
	r := FileResult{Key: j.key, ListedItems: j.entry.ItemCount}
	var obj Object
	if j.dataOnly {
		r.Key = j.key
	} else {
		key, err := resolve(ctx, store, sum, j.key, "")
		if err != nil {
			r.Status, r.Detail = unreadable(err)
			if errors.Is(err, ErrNotFound) {
				r.Detail = "listed in " + FilesName + " but not in the bucket"
			}
			return r
		}
		r.Key = key
		if obj, err = store.Stat(ctx, key); err != nil {
			r.Status, r.Detail = unreadable(err)
			return r
		}
	}
	body, err := store.Open(ctx, r.Key)
	if err != nil {
		r.Status, r.Detail = unreadable(err)
		return r
	}
	defer body.Close()
	n, items, got, err := scanFile(body, ddbjson.Check)
	r.Bytes, r.Items = n, items
	if err != nil {
		r.Status, r.Detail = StatusCorrupt, err.Error()
		if errors.Is(err, ErrTruncated) {
			r.Status = StatusTruncated
		}
		return r
	}
	r.Status = StatusOK
	if j.dataOnly {
		return r
	}
	var diffs []string
	if j.entry.MD5Checksum != "" && got != j.entry.MD5Checksum {
		diffs = append(diffs, fmt.Sprintf("MD5 %s, manifest says %s", got, j.entry.MD5Checksum))
	}
	if obj.ETag != "" && j.entry.ETag != "" && obj.ETag != j.entry.ETag {
		diffs = append(diffs, fmt.Sprintf("ETag %s, manifest says %s", obj.ETag, j.entry.ETag))
	}
	if obj.Size != r.Bytes {
		diffs = append(diffs, fmt.Sprintf("read %d bytes of %d", r.Bytes, obj.Size))
	}
	if items != j.entry.ItemCount {
		diffs = append(diffs, fmt.Sprintf("%d items, manifest says %d", items, j.entry.ItemCount))
	}
	if len(diffs) > 0 {
		r.Status, r.Detail = StatusMismatch, strings.Join(diffs, "; ")
	}
	return r
}

// unreadable classifies a failure to read a file: missing, or there but unreadable.
func unreadable(err error) (string, string) {
	if errors.Is(err, ErrNotFound) {
		return StatusMissing, err.Error()
	}
	return StatusUnreadable, err.Error()
}

// Resolve finds a key named in a manifest (see resolve).
func Resolve(ctx context.Context, store Store, sum Summary, key string) (string, error) {
	return resolve(ctx, store, sum, key, "")
}

// resolve finds a key named in a manifest. AWS writes keys that include the
// export prefix; the documented examples leave it out, so a key is tried as
// written, then under the summary's s3Prefix, then fallback (if any).
func resolve(ctx context.Context, store Store, sum Summary, key, fallback string) (string, error) {
	candidates := []string{key}
	if p := strings.Trim(sum.S3Prefix, "/"); p != "" && key != "" && !strings.HasPrefix(key, p+"/") {
		candidates = append(candidates, p+"/"+key)
	}
	if fallback != "" {
		candidates = append(candidates, fallback)
	}
	var firstErr error
	for _, k := range candidates {
		if k == "" {
			continue
		}
		_, err := store.Stat(ctx, k)
		if err == nil {
			return k, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return "", err
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("no key given: %w", ErrNotFound)
	}
	return "", firstErr
}

func readJSON(ctx context.Context, store Store, key string, v any) error {
	body, err := store.Open(ctx, key)
	if err != nil {
		return err
	}
	defer body.Close()
	if err := json.NewDecoder(body).Decode(v); err != nil {
		return fmt.Errorf("%s is not valid JSON: %w", store.Describe(key), err)
	}
	return nil
}

func readFilesManifest(ctx context.Context, store Store, key string) ([]FileEntry, error) {
	body, err := store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var entries []FileEntry
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e FileEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%s line %d is not valid JSON: %w", store.Describe(key), n, err)
		}
		if e.DataFileS3Key == "" {
			return nil, fmt.Errorf("%s line %d has no dataFileS3Key", store.Describe(key), n)
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", store.Describe(key), err)
	}
	return entries, nil
}

// maxLine bounds one line of DynamoDB JSON: a 400 KB item marshals to well
// under this.
const maxLine = 8 << 20

// ErrTruncated is wrapped when a data file ends before its gzip stream does
// (a partial upload or copy).
var ErrTruncated = errors.New("truncated")

// CountItems decodes gzip DynamoDB JSON lines from r and counts them. Each
// line must be an object with a non-empty "Item" (full export) or "Keys"
// (incremental export), whose attributes are DynamoDB JSON values
// (ddbjson.Check). AWS writes an empty partition as a 20-byte empty gzip; a
// zero-byte file, or a gzip stream that ends early, is reported as truncated
// (ErrTruncated), not as bad JSON.
func CountItems(r io.Reader) (int64, error) {
	var n int64
	err := EachLine(r, func(line []byte) error {
		if err := ddbjson.Check(line); err != nil {
			return fmt.Errorf("line %d is not DynamoDB JSON: %w", n+1, err)
		}
		n++
		return nil
	})
	return n, err
}

// scanFile reads one data file to its end: each line goes to check (which
// counts it when it returns nil), the whole object into the MD5. It returns
// the compressed bytes read, the items, and the MD5 in base64 (the
// manifest's form).
func scanFile(body io.Reader, check func(line []byte) error) (int64, int64, string, error) {
	h := md5.New()
	counter := &countingReader{r: io.TeeReader(body, h)}
	var items int64
	err := EachLine(counter, func(line []byte) error {
		if err := check(line); err != nil {
			return fmt.Errorf("line %d is not DynamoDB JSON: %w", items+1, err)
		}
		items++
		return nil
	})
	if err == nil {
		_, err = io.Copy(io.Discard, counter) // the whole object goes into the MD5
	}
	return counter.n, items, base64.StdEncoding.EncodeToString(h.Sum(nil)), err
}

// EachLine streams the non-blank lines of a gzip data file to fn, in a
// reused buffer (fn must not keep the slice): the one reader of export data
// files. A zero-byte file, a cut-short header, or a gzip stream that ends
// early is ErrTruncated (AWS writes an empty partition as a 20-byte empty
// gzip, never as zero bytes); an error of fn on a line the cut made is
// reported as the truncation it is.
func EachLine(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	switch {
	case len(magic) == 0:
		return fmt.Errorf("%w: the file is empty (0 bytes); AWS writes an empty partition as a 20-byte empty gzip", ErrTruncated)
	case magic[0] != 0x1f || (len(magic) == 2 && magic[1] != 0x8b):
		return errors.New("not gzip: the file does not start with the gzip magic bytes 1f 8b")
	case err != nil:
		return fmt.Errorf("%w: the gzip header is cut short", ErrTruncated)
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: the gzip header is cut short", ErrTruncated)
		}
		return fmt.Errorf("not gzip: %w", err)
	}
	defer zr.Close()
	er := &errReader{r: zr}
	var lines int64
	truncated := func() error {
		return fmt.Errorf("%w: the gzip stream ends early, after %d complete items (the file was cut short)", ErrTruncated, lines)
	}
	sc := bufio.NewScanner(er)
	sc.Buffer(make([]byte, 256*1024), maxLine)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(line); err != nil {
			if er.truncated() {
				return truncated()
			}
			return err
		}
		lines++
	}
	if err := sc.Err(); err != nil {
		if er.truncated() {
			return truncated()
		}
		return fmt.Errorf("after %d items: %w", lines, err)
	}
	return nil
}

// errReader remembers the error its reader returned.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

func (e *errReader) truncated() bool { return errors.Is(e.err, io.ErrUnexpectedEOF) }

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
