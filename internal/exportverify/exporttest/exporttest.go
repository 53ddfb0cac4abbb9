// Package exporttest writes DynamoDB exports in the layout AWS documents
// (manifest-summary.json, manifest-files.json, data/*.json.gz; full and
// incremental), for tests and benchmarks of exportverify: the local emulator
// writes data files without manifests, so manifest checks need exports
// written to the documented format.
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
}

// Written says where the export's objects are (keys relative to root).
type Written struct {
	SummaryKey string
	FilesKey   string
	DataKeys   []string
	Items      int64
	Bytes      int64 // compressed data bytes
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
	var files bytes.Buffer
	for i, n := range s.FileItems {
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
			"etag":          hex.EncodeToString(sum[:]),
			"dataFileS3Key": listed(key),
		})
		files.Write(line)
		files.WriteByte('\n')
		w.DataKeys = append(w.DataKeys, key)
		w.Items += int64(n)
		w.Bytes += int64(len(body))
	}
	w.FilesKey = path.Join(dir, "manifest-files.json")
	if err := put(root, w.FilesKey, files.Bytes()); err != nil {
		return w, err
	}
	summary := map[string]any{
		"version":            "2020-06-30",
		"exportArn":          "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user/export/" + s.ExportID,
		"startTime":          "2026-03-01T00:00:00.000Z",
		"endTime":            "2026-03-01T00:05:00.000Z",
		"tableArn":           "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user",
		"tableId":            "12345a12-abcd-123a-ab12-1234abc12345",
		"s3Bucket":           "export-bucket",
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
		summary["exportFromTime"] = "2026-03-01T00:00:00.000Z"
		summary["exportToTime"] = "2026-03-01T01:00:00.000Z"
		summary["outputView"] = "NEW_AND_OLD_IMAGES"
		summary["exportType"] = "INCREMENTAL_EXPORT"
	} else {
		summary["exportTime"] = "2026-03-01T00:00:00.000Z"
	}
	body, _ := json.MarshalIndent(summary, "", "  ")
	w.SummaryKey = path.Join(dir, "manifest-summary.json")
	if err := put(root, w.SummaryKey, body); err != nil {
		return w, err
	}
	// The empty marker AWS writes when the export begins.
	return w, put(root, path.Join(dir, "_started"), nil)
}

func dataFile(s Spec, file, n int) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	rnd := uint64(file + 1)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	enc := json.NewEncoder(zw)
	for i := 0; i < n; i++ {
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
		var line any = map[string]any{"Item": item}
		if s.Incremental {
			line = map[string]any{
				"Metadata": map[string]any{"WriteTimestampMicros": map[string]string{"N": fmt.Sprint(1772323200000000 + i)}},
				"Keys":     id,
				"NewImage": item,
				"OldImage": id,
			}
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
