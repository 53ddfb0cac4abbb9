// Package exporttest writes DynamoDB exports as AWS writes them, for tests and
// benchmarks: the local emulator writes data files without manifests and no
// incremental exports at all.
//
// What it writes, and where each detail comes from:
//   - the layout, manifest-summary.json (full: exportTime; incremental:
//     exportFromTime, exportToTime, outputView, exportType) and the JSON lines
//     of manifest-files.json, the "_started" marker, "at least 1 file per
//     partition; for partitions that are empty ... an empty file", and the
//     incremental records (Metadata.WriteTimestampMicros, Keys, NewImage,
//     OldImage; a delete has no NewImage): the developer guide's "DynamoDB
//     table export output format", awsdocs/amazon-dynamodb-developer-guide
//     doc_source/S3DataExport.Output.md and its current version at
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/S3DataExport.Output.html;
//   - the view types NEW_AND_OLD_IMAGES and NEW_IMAGE: the API reference,
//     API_IncrementalExportSpecification (ExportViewType);
//   - the ETag "<hex>-1" (a multipart upload of one part): the guide's
//     manifest-files.json example ("etag": "af83d6f217c19b8b0fff8023d8ca4716-1");
//   - manifest-summary.md5 / manifest-files.md5 (24 bytes: base64 MD5) and the
//     20-byte empty gzip of an empty partition: real exports (the guide names
//     the checksum files .checksum; Spec.ChecksumSuffix writes that instead).
package exporttest

import (
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/ddbjson"
)

// Spec describes an export to write.
type Spec struct {
	Prefix      string // the export prefix, e.g. "exports/dev-hoge-user"
	ExportID    string // e.g. "01700000000000-abcd1234"
	Incremental bool
	FileItems   []int // items per data file (0: an empty partition's file)
	// PadBytes adds a string attribute of this size to every item.
	PadBytes int
	// KeysWithoutPrefix writes manifest keys without the export prefix, as
	// the AWS documentation's examples show them.
	KeysWithoutPrefix bool
	// View is an incremental export's outputView: NEW_AND_OLD_IMAGES
	// (default) or NEW_IMAGE.
	View string
	// Records, when set, are the incremental records (or, for a full export,
	// the items in NewImage) of each data file, instead of FileItems'
	// generated ones.
	Records [][]Record
	// ExportTime (full) or From/To (incremental, From inclusive, To
	// exclusive); zero: fixed times in March 2026.
	ExportTime, From, To time.Time
	// ChecksumSuffix names the manifests' checksum files: ".md5" (default,
	// as real exports) or ".checksum" (as the developer guide says).
	ChecksumSuffix string
	// Table is the exported table's name in the manifest's ARNs (default
	// dev-hoge-user).
	Table string
	// TableArn, when set, is the manifest's tableArn (the exportArn lies
	// under it), instead of an eu-west-1 ARN of Table.
	TableArn string
	// Bucket is the manifest's s3Bucket (default export-bucket).
	Bucket string
	// EndTime is the manifest's endTime (default: six minutes after the
	// export time). dynops refuses a data file S3 wrote after it: fixtures
	// uploaded now need an EndTime after the upload.
	EndTime time.Time
}

// Record is one change in an incremental export, in DynamoDB JSON
// (attribute name to {"S": ...} etc.). A delete has New nil; an insert has
// Old nil.
type Record struct {
	Keys   map[string]any
	New    map[string]any
	Old    map[string]any
	Micros int64 // Metadata.WriteTimestampMicros
}

// ETag is the ETag S3 gives an object uploaded in one multipart part, as the
// data files of an export are: hex MD5 of the part's MD5, then "-1".
func ETag(body []byte) string {
	part := md5.Sum(body)
	all := md5.Sum(part[:])
	return hex.EncodeToString(all[:]) + "-1"
}

// Written says where the export's objects are (keys relative to root).
type Written struct {
	SummaryKey string
	FilesKey   string
	DataKeys   []string
	Items      int64
	Bytes      int64 // compressed data bytes
	Checksums  []string
}

// Write writes the export under root and returns its keys.
func Write(root string, s Spec) (Written, error) {
	var w Written
	dir := path.Join(s.Prefix, "AWSDynamoDB", s.ExportID)
	dataDir := path.Join(dir, "data")
	if s.Incremental {
		dataDir = path.Join(s.Prefix, "AWSDynamoDB", "data") // the shared data folder
	}
	listed := func(key string) string {
		if s.KeysWithoutPrefix {
			return strings.TrimPrefix(key, strings.Trim(s.Prefix, "/")+"/")
		}
		return key
	}
	files := s.FileItems
	if s.Records != nil {
		files = make([]int, len(s.Records))
		for i, rs := range s.Records {
			files[i] = len(rs)
		}
	}
	var manifest bytes.Buffer
	for i, n := range files {
		key := path.Join(dataDir, fmt.Sprintf("%s-%04d.json.gz", strings.ReplaceAll(s.ExportID, "-", ""), i))
		body, err := dataFile(s, i, n)
		if err != nil {
			return w, err
		}
		if err := put(root, key, body); err != nil {
			return w, err
		}
		sum := md5.Sum(body)
		line, _ := json.Marshal(map[string]any{
			"itemCount":     n,
			"md5Checksum":   base64.StdEncoding.EncodeToString(sum[:]),
			"etag":          ETag(body),
			"dataFileS3Key": listed(key),
		})
		manifest.Write(line)
		manifest.WriteByte('\n')
		w.DataKeys = append(w.DataKeys, key)
		w.Items += int64(n)
		w.Bytes += int64(len(body))
	}
	w.FilesKey = path.Join(dir, "manifest-files.json")
	if err := putWithChecksum(root, w.FilesKey, manifest.Bytes(), s, &w); err != nil {
		return w, err
	}
	exportTime := s.ExportTime
	if s.Incremental {
		exportTime = s.to()
	}
	if exportTime.IsZero() {
		exportTime = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	}
	end := s.EndTime
	if end.IsZero() {
		end = exportTime.Add(6 * time.Minute)
	}
	summary := map[string]any{
		"version":            "2020-06-30",
		"exportArn":          s.TableARN() + "/export/" + s.ExportID,
		"startTime":          stamp(exportTime.Add(time.Minute)),
		"endTime":            stamp(end),
		"tableArn":           s.TableARN(),
		"tableId":            "12345a12-abcd-123a-ab12-1234abc12345",
		"s3Bucket":           s.bucket(),
		"s3Prefix":           s.Prefix,
		"s3SseAlgorithm":     "AES256",
		"s3SseKmsKeyId":      nil,
		"manifestFilesS3Key": listed(w.FilesKey),
		"billedSizeBytes":    w.Bytes,
		"itemCount":          w.Items,
		"outputFormat":       "DYNAMODB_JSON",
	}
	if s.Incremental {
		summary["version"] = "2023-08-01"
		summary["exportFromTime"] = stamp(s.from())
		summary["exportToTime"] = stamp(s.to())
		summary["outputView"] = s.view()
		summary["exportType"] = "INCREMENTAL_EXPORT"
	} else {
		summary["exportTime"] = stamp(exportTime)
	}
	body, _ := json.Marshal(summary)
	w.SummaryKey = path.Join(dir, "manifest-summary.json")
	if err := putWithChecksum(root, w.SummaryKey, body, s, &w); err != nil {
		return w, err
	}
	// The empty marker AWS writes when the export begins.
	return w, put(root, path.Join(dir, "_started"), nil)
}

func (s Spec) view() string {
	if s.View == "" {
		return "NEW_AND_OLD_IMAGES"
	}
	return s.View
}

func (s Spec) from() time.Time {
	if s.From.IsZero() {
		return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	}
	return s.From
}

func (s Spec) to() time.Time {
	if s.To.IsZero() {
		return s.from().Add(time.Hour)
	}
	return s.To
}

// stamp formats a time as the manifests do (milliseconds, Z).
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// dataFile returns one gzip data file. An empty partition is the 20-byte
// gzip of nothing, as AWS writes it.
func dataFile(s Spec, file, n int) ([]byte, error) {
	if n == 0 {
		return append([]byte(nil), EmptyGzip...), nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	enc := json.NewEncoder(zw)
	for i := 0; i < n; i++ {
		var line any
		if s.Records != nil {
			line = recordLine(s, s.Records[file][i])
		} else {
			line = generated(s, file, i)
		}
		if err := enc.Encode(line); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EmptyGzip is the 20-byte gzip of nothing (header, one empty fixed-Huffman
// block, CRC and size 0) that AWS writes for an empty partition; Go's gzip
// writer would write 23 bytes (an empty stored block).
var EmptyGzip = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}

// recordLine is one line: {"Item": ...} in a full export; in an incremental
// one Metadata and Keys, NewImage unless deleted, OldImage only in the
// NEW_AND_OLD_IMAGES view and only when there was an old item.
func recordLine(s Spec, r Record) map[string]any {
	if !s.Incremental {
		return map[string]any{"Item": r.New}
	}
	line := map[string]any{
		"Metadata": map[string]any{"WriteTimestampMicros": map[string]string{"N": fmt.Sprint(r.Micros)}},
		"Keys":     r.Keys,
	}
	if r.New != nil {
		line["NewImage"] = r.New
	}
	if r.Old != nil && s.view() == "NEW_AND_OLD_IMAGES" {
		line["OldImage"] = r.Old
	}
	return line
}

// generated is item i of file: in an incremental export the changes cycle
// through insert, update and delete.
func generated(s Spec, file, i int) map[string]any {
	rnd := uint64(file*1_000_003 + i + 1)
	id := map[string]any{"user_id": map[string]string{"S": fmt.Sprintf("u-%d-%d", file, i)}}
	item := map[string]any{
		"user_id": id["user_id"],
		"email":   map[string]string{"S": fmt.Sprintf("u%d.%d@example.com", file, i)},
		"logins":  map[string]string{"N": fmt.Sprint(i)},
		"active":  map[string]bool{"BOOL": i%2 == 0},
		"tags":    map[string][]string{"SS": {"a", "b"}},
	}
	if s.PadBytes > 0 {
		item["pad"] = map[string]string{"S": padding(&rnd, s.PadBytes)}
	}
	if !s.Incremental {
		return map[string]any{"Item": item}
	}
	old := map[string]any{"user_id": id["user_id"], "email": map[string]string{"S": "old@example.com"}}
	r := Record{Keys: id, Micros: s.from().UnixMicro() + int64(file*1000+i)}
	switch i % 3 {
	case 0: // insert
		r.New = item
	case 1: // update
		r.New, r.Old = item, old
	default: // delete
		r.Old = old
	}
	return recordLine(s, r)
}

// putWithChecksum writes a manifest and its checksum file (base64 MD5).
func putWithChecksum(root, key string, body []byte, s Spec, w *Written) error {
	if err := put(root, key, body); err != nil {
		return err
	}
	suffix := s.ChecksumSuffix
	if suffix == "" {
		suffix = ".md5"
	}
	sum := md5.Sum(body)
	ck := strings.TrimSuffix(key, ".json") + suffix
	w.Checksums = append(w.Checksums, ck)
	return put(root, ck, []byte(base64.StdEncoding.EncodeToString(sum[:])))
}

// padding returns n hex characters from a xorshift sequence: text that
// compresses about as well as real attribute values (ids, hashes).
func padding(state *uint64, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		*state ^= *state << 13
		*state ^= *state >> 7
		*state ^= *state << 17
		b[i] = digits[*state&15]
	}
	return string(b)
}

func put(root, key string, body []byte) error {
	p := filepath.Join(root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, body, 0o644)
}

// ExportArn is the exportArn the manifest names.
func (s Spec) ExportArn() string { return s.TableARN() + "/export/" + s.ExportID }

// TableARN is the tableArn the manifest names.
func (s Spec) TableARN() string {
	if s.TableArn != "" {
		return s.TableArn
	}
	return "arn:aws:dynamodb:eu-west-1:123456789012:table/" + s.table()
}

func (s Spec) bucket() string {
	if s.Bucket == "" {
		return "export-bucket"
	}
	return s.Bucket
}

func (s Spec) table() string {
	if s.Table == "" {
		return "dev-hoge-user"
	}
	return s.Table
}

// Rewrite changes a manifest written under root and rewrites its .md5
// checksum file to match: what someone who can write to the export prefix
// can do (tests of whom dynops believes).
func Rewrite(root, key string, change func(string) string) error {
	p := filepath.Join(root, filepath.FromSlash(key))
	body, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	changed := []byte(change(string(body)))
	if err := os.WriteFile(p, changed, 0o644); err != nil {
		return err
	}
	sum := md5.Sum(changed)
	return put(root, strings.TrimSuffix(key, ".json")+".md5", []byte(base64.StdEncoding.EncodeToString(sum[:])))
}

// Image is item in DynamoDB JSON, as a Record's Keys, New or Old hold it.
func Image(t testing.TB, item map[string]types.AttributeValue) map[string]any {
	t.Helper()
	b, err := ddbjson.EncodeItem(item)
	if err != nil {
		t.Fatalf("encoding an export image: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decoding an export image: %v", err)
	}
	return m
}
