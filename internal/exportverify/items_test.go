package exportverify_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
)

func eachItem(t *testing.T, root, pfx string) (int64, error) {
	t.Helper()
	var n atomic.Int64
	e, err := exportverify.OpenExport(root, nil)
	require.NoError(t, err)
	e.Prefix = pfx
	_, err = e.EachItem(context.Background(), 3, func(it map[string]types.AttributeValue) error {
		if _, ok := it["user_id"].(*types.AttributeValueMemberS); !ok {
			t.Errorf("item without its key: %v", it)
		}
		n.Add(1)
		return nil
	})
	return n.Load(), err
}

func TestEachItemStreamsACheckedExport(t *testing.T) {
	for name, spec := range map[string]exporttest.Spec{
		"keys with prefix":    {FileItems: []int{30, 0, 17, 5}},
		"keys without prefix": {FileItems: []int{1, 40}, KeysWithoutPrefix: true},
		"one empty file":      {FileItems: []int{0}},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			spec.Prefix, spec.ExportID = prefix, "01-a"
			w, err := exporttest.Write(root, spec)
			require.NoError(t, err)
			n, err := eachItem(t, root, prefix)
			require.NoError(t, err)
			assert.Equal(t, w.Items, n)
		})
	}
}

func TestEachItemRefusesWhatCannotBeTrusted(t *testing.T) {
	cases := map[string]struct {
		damage func(t *testing.T, root string, w exporttest.Written)
		want   string
	}{
		"flipped byte": {func(t *testing.T, root string, w exporttest.Written) {
			p := filepath.Join(root, w.DataKeys[1])
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0xff
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}, "data/"},
		"truncated file": {func(t *testing.T, root string, w exporttest.Written) {
			p := filepath.Join(root, w.DataKeys[0])
			b, _ := os.ReadFile(p)
			require.NoError(t, os.WriteFile(p, b[:len(b)-20], 0o644))
		}, "data/"},
		"missing file": {func(t *testing.T, root string, w exporttest.Written) {
			require.NoError(t, os.Remove(filepath.Join(root, w.DataKeys[1])))
		}, "listed in manifest-files.json"},
		"summary count off": {func(t *testing.T, root string, w exporttest.Written) {
			p := filepath.Join(root, w.SummaryKey)
			b, _ := os.ReadFile(p)
			before := string(b)
			b = []byte(regexp.MustCompile(`"itemCount": ?40\b`).ReplaceAllString(before, `"itemCount":41`))
			require.NotEqual(t, before, string(b), "the damage must change the summary")
			require.NoError(t, os.WriteFile(p, b, 0o644))
		}, "says itemCount 41"},
		"no manifest": {func(t *testing.T, root string, w exporttest.Written) {
			require.NoError(t, os.Remove(filepath.Join(root, w.SummaryKey)))
		}, "no manifest-summary.json"},
		"second export under the prefix": {func(t *testing.T, root string, w exporttest.Written) {
			_, err := exporttest.Write(root, exporttest.Spec{Prefix: prefix, ExportID: "01-b", FileItems: []int{1}})
			require.NoError(t, err)
		}, "2 exports under"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			w, err := exporttest.Write(root, exporttest.Spec{Prefix: prefix, ExportID: "01-a", FileItems: []int{25, 15}})
			require.NoError(t, err)
			c.damage(t, root, w)
			_, err = eachItem(t, root, prefix)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	root := t.TempDir()
	_, err := exporttest.Write(root, exporttest.Spec{Prefix: prefix, ExportID: "01-i", FileItems: []int{3}, Incremental: true})
	require.NoError(t, err)
	_, err = eachItem(t, root, prefix)
	assert.ErrorContains(t, err, "incremental export")
}

func TestOpenExportRefusesOtherURIs(t *testing.T) {
	for uri, want := range map[string]string{
		"s3:///prefix":      "has no bucket",
		"https://b/p":       "give s3://BUCKET/PREFIX",
		"/no/such/dir/here": "not a local directory",
	} {
		_, err := exportverify.OpenExport(uri, nil)
		assert.ErrorContains(t, err, want, uri)
	}
}
