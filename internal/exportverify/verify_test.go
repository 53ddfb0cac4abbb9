package exportverify_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
)

const prefix = "exports/dev-hoge-user"

func write(t *testing.T, s exporttest.Spec) (string, exporttest.Written) {
	t.Helper()
	root := t.TempDir()
	if s.Prefix == "" {
		s.Prefix = prefix
	}
	if s.ExportID == "" {
		s.ExportID = "01772323200000-a1b2c3d4"
	}
	w, err := exporttest.Write(root, s)
	require.NoError(t, err)
	return root, w
}

func verify(t *testing.T, root string, o exportverify.Options) exportverify.Report {
	t.Helper()
	rep, err := exportverify.Verify(context.Background(), exportverify.DirStore{Root: root}, prefix, o)
	require.NoError(t, err)
	return rep
}

func TestVerifyGoodExports(t *testing.T) {
	cases := map[string]exporttest.Spec{
		"full":                             {FileItems: []int{10, 7, 0, 3}},
		"incremental (shared data folder)": {Incremental: true, FileItems: []int{4, 5}},
		"manifest keys without the prefix": {FileItems: []int{2, 2}, KeysWithoutPrefix: true},
		"incremental NEW_IMAGE view":       {Incremental: true, View: "NEW_IMAGE", FileItems: []int{6, 0, 3}},
		"checksum files named .checksum":   {FileItems: []int{3}, ChecksumSuffix: ".checksum"},
		"only empty partitions":            {FileItems: []int{0, 0}},
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			root, w := write(t, spec)
			rep := verify(t, root, exportverify.Options{})
			require.True(t, rep.OK, "problems: %v", rep.Exports[0].Problems)
			require.Len(t, rep.Exports, 1)
			ex := rep.Exports[0]
			assert.Equal(t, w.Items, ex.Items)
			assert.Equal(t, w.Items, ex.SummaryItems)
			assert.Equal(t, w.Bytes, ex.Bytes)
			assert.Len(t, ex.Files, len(spec.FileItems))
			for _, f := range ex.Files {
				assert.Equal(t, exportverify.StatusOK, f.Status, f.Key)
			}
			if spec.Incremental {
				assert.Equal(t, "INCREMENTAL_EXPORT", ex.ExportType)
			} else {
				assert.Equal(t, "FULL_EXPORT", ex.ExportType)
			}
		})
	}
}

// fileResult returns the verdict on key.
func fileResult(t *testing.T, rep exportverify.Report, key string) exportverify.FileResult {
	t.Helper()
	for _, ex := range rep.Exports {
		for _, f := range ex.Files {
			if f.Key == key || strings.HasSuffix(key, f.Key) {
				return f
			}
		}
	}
	t.Fatalf("no result for %s in %+v", key, rep)
	return exportverify.FileResult{}
}

func TestVerifyFindsDamage(t *testing.T) {
	spec := exporttest.Spec{FileItems: []int{10, 10, 10}}
	t.Run("missing data file is named", func(t *testing.T) {
		root, w := write(t, spec)
		require.NoError(t, os.Remove(filepath.Join(root, w.DataKeys[1])))
		rep := verify(t, root, exportverify.Options{})
		assert.False(t, rep.OK)
		f := fileResult(t, rep, w.DataKeys[1])
		assert.Equal(t, exportverify.StatusMissing, f.Status)
		assert.Contains(t, strings.Join(rep.Exports[0].Problems, "\n"), w.DataKeys[1])
		assert.Equal(t, exportverify.StatusOK, fileResult(t, rep, w.DataKeys[0]).Status, "the other files still pass")
	})
	// A file cut short anywhere (header, mid-line, between lines, trailer)
	// is "truncated", never a JSON error.
	for _, frac := range []float64{0, 0.05, 0.3, 0.5, 0.7, 0.9, 0.99} {
		t.Run(fmt.Sprintf("gzip cut at %.0f%% is truncated", frac*100), func(t *testing.T) {
			root, w := write(t, exporttest.Spec{FileItems: []int{10, 10, 200}, PadBytes: 64})
			p := filepath.Join(root, w.DataKeys[2])
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b[:int(float64(len(b))*frac)], 0o644))
			rep := verify(t, root, exportverify.Options{})
			assert.False(t, rep.OK)
			f := fileResult(t, rep, w.DataKeys[2])
			assert.Equal(t, exportverify.StatusTruncated, f.Status, f.Detail)
			assert.NotContains(t, f.Detail, "not DynamoDB JSON")
			assert.Contains(t, strings.Join(rep.Exports[0].Problems, "\n"), w.DataKeys[2])
		})
	}
	t.Run("manifest changed after its checksum is named", func(t *testing.T) {
		for _, name := range []string{"manifest-summary.json", "manifest-files.json"} {
			root, w := write(t, spec)
			key := w.SummaryKey
			if name == "manifest-files.json" {
				key = w.FilesKey
			}
			p := filepath.Join(root, key)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, append(b, ' '), 0o644)) // still valid JSON
			rep := verify(t, root, exportverify.Options{})
			assert.False(t, rep.OK, name)
			assert.Contains(t, strings.Join(rep.Exports[0].Problems, "\n"), name+" does not match", name)
		}
	})
	t.Run("manifest without its checksum file", func(t *testing.T) {
		root, w := write(t, spec)
		require.NoError(t, os.Remove(filepath.Join(root, w.Checksums[0])))
		rep := verify(t, root, exportverify.Options{})
		assert.False(t, rep.OK)
		assert.Contains(t, strings.Join(rep.Exports[0].Problems, "\n"), "no checksum file")
	})
	t.Run("flipped byte fails the gzip CRC or the MD5", func(t *testing.T) {
		root, w := write(t, spec)
		p := filepath.Join(root, w.DataKeys[0])
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		b[len(b)-5] ^= 0xff // inside the gzip trailer (CRC32/size)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		rep := verify(t, root, exportverify.Options{})
		assert.False(t, rep.OK)
		assert.NotEqual(t, exportverify.StatusOK, fileResult(t, rep, w.DataKeys[0]).Status)
	})
	t.Run("a file replaced by another valid file fails the MD5", func(t *testing.T) {
		root, w := write(t, spec)
		b, err := os.ReadFile(filepath.Join(root, w.DataKeys[1]))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(root, w.DataKeys[0]), b, 0o644))
		rep := verify(t, root, exportverify.Options{})
		assert.False(t, rep.OK)
		f := fileResult(t, rep, w.DataKeys[0])
		assert.Equal(t, exportverify.StatusMismatch, f.Status)
		assert.Contains(t, f.Detail, "MD5")
	})
	t.Run("not DynamoDB JSON is corrupt", func(t *testing.T) {
		root, w := write(t, spec)
		p := filepath.Join(root, w.DataKeys[0])
		require.NoError(t, os.WriteFile(p, gz(t, `{"Item": {"user_id": {"S": "a"}}}`+"\n"+`{"Item": {"user_id": "plain"}}`+"\n"), 0o644))
		rep := verify(t, root, exportverify.Options{})
		f := fileResult(t, rep, w.DataKeys[0])
		assert.Equal(t, exportverify.StatusCorrupt, f.Status)
		assert.Contains(t, f.Detail, "line 2")
	})
	t.Run("summary itemCount that does not add up", func(t *testing.T) {
		root, w := write(t, spec)
		p := filepath.Join(root, w.SummaryKey)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"itemCount":30`, `"itemCount":31`, 1)), 0o644))
		rep := verify(t, root, exportverify.Options{})
		assert.False(t, rep.OK)
		problems := strings.Join(rep.Exports[0].Problems, "\n")
		assert.Contains(t, problems, "itemCount 31")
		assert.Contains(t, problems, "manifest-summary.json does not match")
	})
	t.Run("files manifest item count differs from the data", func(t *testing.T) {
		root, w := write(t, spec)
		p := filepath.Join(root, w.FilesKey)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"itemCount":10`, `"itemCount":11`, 1)), 0o644))
		rep := verify(t, root, exportverify.Options{})
		assert.False(t, rep.OK)
		f := fileResult(t, rep, w.DataKeys[0])
		assert.Equal(t, exportverify.StatusMismatch, f.Status)
		assert.Contains(t, f.Detail, "10 items, manifest says 11")
	})
	t.Run("missing files manifest", func(t *testing.T) {
		root, w := write(t, spec)
		require.NoError(t, os.Remove(filepath.Join(root, w.FilesKey)))
		rep := verify(t, root, exportverify.Options{})
		assert.False(t, rep.OK)
		assert.Contains(t, strings.Join(rep.Exports[0].Problems, "\n"), "manifest-files.json")
	})
}

func TestVerifyTwoExportsUnderOnePrefix(t *testing.T) {
	root := t.TempDir()
	_, err := exporttest.Write(root, exporttest.Spec{Prefix: prefix, ExportID: "01-full", FileItems: []int{3}})
	require.NoError(t, err)
	_, err = exporttest.Write(root, exporttest.Spec{Prefix: prefix, ExportID: "02-incr", Incremental: true, FileItems: []int{2}})
	require.NoError(t, err)
	rep := verify(t, root, exportverify.Options{})
	assert.True(t, rep.OK)
	assert.Len(t, rep.Exports, 2)
	assert.EqualValues(t, 5, rep.Items)
}

func TestVerifyWithoutManifest(t *testing.T) {
	// The emulator's layout: data files only, named .gz.
	root := t.TempDir()
	key := prefix + "/AWSDynamoDB/5e2bc0a6/data/e6b3b445.gz"
	require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, key)), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, key), gz(t, `{"Item": {"id": {"S": "0"}}}`+"\n"+`{"Item": {"id": {"S": "1"}}}`+"\n"), 0o644))

	_, err := exportverify.Verify(context.Background(), exportverify.DirStore{Root: root}, prefix, exportverify.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no manifest-summary.json under")
	assert.Contains(t, err.Error(), "--data-only")

	rep := verify(t, root, exportverify.Options{DataOnly: true})
	assert.True(t, rep.OK)
	assert.Equal(t, "data-only", rep.Mode)
	assert.EqualValues(t, 2, rep.Items)

	require.NoError(t, os.WriteFile(filepath.Join(root, key), []byte("not gzip"), 0o644))
	rep = verify(t, root, exportverify.Options{DataOnly: true})
	assert.False(t, rep.OK)
	assert.Equal(t, exportverify.StatusCorrupt, rep.Exports[0].Files[0].Status)
	assert.Contains(t, rep.Exports[0].Problems[0], key)

	_, err = exportverify.Verify(context.Background(), exportverify.DirStore{Root: root}, "elsewhere/", exportverify.Options{DataOnly: true})
	assert.ErrorContains(t, err, "no data files")
}

// TestVerifyDataOnlyCountsEachDataFolder: a data-only prefix holding two
// exports' data folders (the emulator's layout, twice) is two exports, each
// decoded and counted on its own, not one export with the sum.
func TestVerifyDataOnlyCountsEachDataFolder(t *testing.T) {
	root := t.TempDir()
	folders := map[string]string{
		prefix + "/AWSDynamoDB/0001-first/data/a.gz":  `{"Item": {"id": {"S": "0"}}}` + "\n" + `{"Item": {"id": {"S": "1"}}}` + "\n",
		prefix + "/AWSDynamoDB/0002-second/data/b.gz": `{"Item": {"id": {"S": "0"}}}` + "\n" + `{"Item": {"id": {"S": "1"}}}` + "\n" + `{"Item": {"id": {"S": "2"}}}` + "\n",
		prefix + "/AWSDynamoDB/0002-second/data/c.gz": `{"Item": {"id": {"S": "3"}}}` + "\n",
	}
	for key, body := range folders {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, key)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, key), gz(t, body), 0o644))
	}
	var calls []int
	rep := verify(t, root, exportverify.Options{DataOnly: true, Progress: func(done, total int) {
		assert.Equal(t, 3, total, "progress counts the files of every folder")
		calls = append(calls, done)
	}})
	assert.True(t, rep.OK)
	require.Len(t, rep.Exports, 2, "each data folder is its own export")
	assert.Equal(t, prefix+"/AWSDynamoDB/0001-first", rep.Exports[0].Dir)
	assert.EqualValues(t, 2, rep.Exports[0].Items)
	assert.Len(t, rep.Exports[0].Files, 1)
	assert.Equal(t, prefix+"/AWSDynamoDB/0002-second", rep.Exports[1].Dir)
	assert.EqualValues(t, 4, rep.Exports[1].Items)
	assert.Len(t, rep.Exports[1].Files, 2)
	assert.EqualValues(t, 6, rep.Items, "the report's total is the sum")
	assert.Equal(t, []int{1, 2, 3}, calls)

	// A corrupt file fails its own export only.
	require.NoError(t, os.WriteFile(filepath.Join(root, prefix+"/AWSDynamoDB/0001-first/data/a.gz"), []byte("not gzip"), 0o644))
	rep = verify(t, root, exportverify.Options{DataOnly: true})
	assert.False(t, rep.OK)
	assert.False(t, rep.Exports[0].OK)
	assert.True(t, rep.Exports[1].OK)
}

func TestDataFolderExport(t *testing.T) {
	for key, want := range map[string]string{
		"p/AWSDynamoDB/01-x/data/a.gz": "p/AWSDynamoDB/01-x",
		"p/AWSDynamoDB/data/a.gz":      "p/AWSDynamoDB",
		"data/a.gz":                    "",
		"p/data/sub/a.gz":              "p",
	} {
		got, ok := exportverify.DataFolderExport(key)
		assert.True(t, ok, key)
		assert.Equal(t, want, got, key)
	}
	_, ok := exportverify.DataFolderExport("p/AWSDynamoDB/01-x/manifest-summary.json")
	assert.False(t, ok)
	_, ok = exportverify.DataFolderExport("p/metadata/a.gz")
	assert.False(t, ok)
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b strings.Builder
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return []byte(b.String())
}

// TestFixtureWritesWhatAWSWrites pins the details of S3DataExport.Output.md
// (and real exports) the fixture writer must reproduce.
func TestFixtureWritesWhatAWSWrites(t *testing.T) {
	root, w := write(t, exporttest.Spec{Incremental: true, FileItems: []int{6, 0}})
	empty, err := os.ReadFile(filepath.Join(root, w.DataKeys[1]))
	require.NoError(t, err)
	assert.Len(t, empty, 20, "an empty partition is the 20-byte empty gzip")
	assert.FileExists(t, filepath.Join(root, strings.TrimSuffix(w.SummaryKey, ".json")+".md5"))
	assert.FileExists(t, filepath.Join(root, strings.TrimSuffix(w.FilesKey, ".json")+".md5"))
	assert.Contains(t, w.DataKeys[0], prefix+"/AWSDynamoDB/data/", "incremental data files share one folder")

	files, err := os.ReadFile(filepath.Join(root, w.FilesKey))
	require.NoError(t, err)
	var e exportverify.FileEntry
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(string(files), "\n", 2)[0]), &e))
	assert.Regexp(t, `^[0-9a-f]{32}-1$`, e.ETag, "multipart ETag")

	var sum exportverify.Summary
	b, err := os.ReadFile(filepath.Join(root, w.SummaryKey))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	assert.Equal(t, "INCREMENTAL_EXPORT", sum.ExportType)
	assert.Equal(t, "NEW_AND_OLD_IMAGES", sum.OutputView)
	assert.NotEmpty(t, sum.ExportFromTime)
	assert.NotEmpty(t, sum.ExportToTime)

	f, err := os.Open(filepath.Join(root, w.DataKeys[0]))
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	shapes := map[string]int{}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		var line map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		require.Contains(t, string(line["Metadata"]), `"WriteTimestampMicros":{"N":"`)
		_, n := line["NewImage"]
		_, o := line["OldImage"]
		shapes[fmt.Sprintf("new=%v old=%v", n, o)]++
	}
	assert.Equal(t, map[string]int{"new=true old=false": 2, "new=true old=true": 2, "new=false old=true": 2}, shapes,
		"inserts, updates and deletes (a delete has no NewImage)")
}

// TestPrefixMatchesBySegment: a prefix names a folder, not the start of a
// string.
func TestPrefixMatchesBySegment(t *testing.T) {
	root := t.TempDir()
	_, err := exporttest.Write(root, exporttest.Spec{Prefix: "exports/a-full", ExportID: "01-a", FileItems: []int{3}})
	require.NoError(t, err)
	_, err = exporttest.Write(root, exporttest.Spec{Prefix: "exports/a-full-old", ExportID: "02-b", FileItems: []int{5}})
	require.NoError(t, err)
	for _, p := range []string{"exports/a-full", "exports/a-full/", "exports/a-full/AWSDynamoDB"} {
		rep, err := exportverify.Verify(context.Background(), exportverify.DirStore{Root: root}, p, exportverify.Options{})
		require.NoError(t, err, p)
		assert.Len(t, rep.Exports, 1, p)
		assert.EqualValues(t, 3, rep.Items, p)
	}
	cases := []struct {
		key, prefix string
		under       bool
	}{
		{"a/b/c", "a/b", true}, {"a/b", "a/b", true}, {"a/bc/d", "a/b", false}, {"a/b-old/x", "a/b", false},
		{"a/bc", "a/b", false}, {"a/b/c", "a/b/", true}, {"a/bc", "", true}, {"x/a/b", "a/b", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.under, exportverify.UnderPrefix(c.key, c.prefix), "%s under %s", c.key, c.prefix)
	}
}
