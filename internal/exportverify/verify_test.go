package exportverify_test

import (
	"compress/gzip"
	"context"
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
	t.Run("truncated gzip is corrupt", func(t *testing.T) {
		root, w := write(t, spec)
		p := filepath.Join(root, w.DataKeys[2])
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, b[:len(b)/2], 0o644))
		rep := verify(t, root, exportverify.Options{})
		assert.False(t, rep.OK)
		f := fileResult(t, rep, w.DataKeys[2])
		assert.Equal(t, exportverify.StatusCorrupt, f.Status)
		assert.Contains(t, strings.Join(rep.Exports[0].Problems, "\n"), w.DataKeys[2])
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
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"itemCount": 30`, `"itemCount": 31`, 1)), 0o644))
		rep := verify(t, root, exportverify.Options{})
		assert.False(t, rep.OK)
		assert.Contains(t, strings.Join(rep.Exports[0].Problems, "\n"), "itemCount 31")
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

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b strings.Builder
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return []byte(b.String())
}
