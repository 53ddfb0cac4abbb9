package exportverify

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memStore is a Store in memory, with ETags, and errors for chosen keys.
type memStore struct {
	objects map[string][]byte
	etags   map[string]string
	broken  map[string]error // Stat fails with this error
}

func (m memStore) List(context.Context, string) ([]Object, error) { return nil, nil }

func (m memStore) Stat(_ context.Context, key string) (Object, error) {
	if err := m.broken[key]; err != nil {
		return Object{}, err
	}
	b, ok := m.objects[key]
	if !ok {
		return Object{}, keyNotFound{key}
	}
	return Object{Key: key, Size: int64(len(b)), ETag: m.etags[key]}, nil
}

func (m memStore) Open(_ context.Context, key string) (io.ReadCloser, error) {
	b, ok := m.objects[key]
	if !ok {
		return nil, ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (m memStore) Describe(key string) string { return "mem://" + key }

// keyNotFound is a missing key, named.
type keyNotFound struct{ key string }

func (e keyNotFound) Error() string { return e.key + ": not found" }
func (e keyNotFound) Unwrap() error { return ErrNotFound }

// TestResolveTriesEachCandidate: the key as written, then under the export
// prefix, then the fallback; the error is the first not-found, or the
// first other error at once.
func TestResolveTriesEachCandidate(t *testing.T) {
	boom := errors.New("access denied")
	store := memStore{
		objects: map[string][]byte{"data/a.gz": nil, "exp/data/b.gz": nil, "exp/manifest-files.json": nil},
		broken:  map[string]error{"data/broken.gz": boom},
	}
	sum := Summary{S3Prefix: "/exp/"}
	cases := []struct {
		key, fallback, want, wantErr string
	}{
		{"data/a.gz", "", "data/a.gz", ""},
		{"data/b.gz", "", "exp/data/b.gz", ""},
		{"exp/data/b.gz", "", "exp/data/b.gz", ""},
		{"manifest.json", "exp/manifest-files.json", "exp/manifest-files.json", ""},
		{"", "exp/manifest-files.json", "exp/manifest-files.json", ""},
		{"data/c.gz", "", "", "data/c.gz: not found"},              // the first candidate's error
		{"data/c.gz", "exp/nope.json", "", "data/c.gz: not found"}, // still the first
		{"", "", "", "no key given: not found"},
		{"data/broken.gz", "exp/manifest-files.json", "", "access denied"},
	}
	for _, c := range cases {
		got, err := resolve(context.Background(), store, sum, c.key, c.fallback)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("resolve(%q, %q) = %q, %v; want error %q", c.key, c.fallback, got, err, c.wantErr)
			}
			if c.wantErr != "access denied" && !errors.Is(err, ErrNotFound) {
				t.Errorf("resolve(%q, %q): %v is not ErrNotFound", c.key, c.fallback, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("resolve(%q, %q) = %q, %v; want %q", c.key, c.fallback, got, err, c.want)
		}
	}
}

func gz(t *testing.T, lines ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	for _, l := range lines {
		_, err := zw.Write([]byte(l + "\n"))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// TestCheckFileETag: a file whose ETag differs from the manifest's is a
// mismatch; an ETag that one side does not know is no evidence.
func TestCheckFileETag(t *testing.T) {
	data := gz(t, `{"Item":{"pk":{"S":"a"}}}`)
	cases := []struct {
		storeETag, manifestETag string
		want                    string
	}{
		{"e1", "e1", StatusOK},
		{"e1", "e2", StatusMismatch},
		{"", "e2", StatusOK},
		{"e1", "", StatusOK},
		{"", "", StatusOK},
	}
	for _, c := range cases {
		store := memStore{objects: map[string][]byte{"d/a.gz": data}, etags: map[string]string{"d/a.gz": c.storeETag}}
		r := checkFile(context.Background(), store, Summary{}, job{key: "d/a.gz", entry: FileEntry{ItemCount: 1, ETag: c.manifestETag, DataFileS3Key: "d/a.gz"}})
		if r.Status != c.want {
			t.Errorf("ETag %q, manifest %q: %s (%s), want %s", c.storeETag, c.manifestETag, r.Status, r.Detail, c.want)
		}
		if c.want == StatusMismatch && !strings.Contains(r.Detail, "ETag e1, manifest says e2") {
			t.Errorf("detail %q", r.Detail)
		}
	}
}

func TestDirStoreListIsSortedByKey(t *testing.T) {
	root := t.TempDir()
	for _, k := range []string{"p/b.gz", "p/a.gz", "p/c/z.json", "p/c/a.json", "p/B.gz"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, k)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, k), []byte("x"), 0o644))
	}
	objs, err := DirStore{Root: root}.List(context.Background(), "p/")
	require.NoError(t, err)
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	assert.Equal(t, []string{"p/B.gz", "p/a.gz", "p/b.gz", "p/c/a.json", "p/c/z.json"}, keys)
}

func TestFilesManifestErrorsNameTheLine(t *testing.T) {
	good := `{"itemCount":1,"dataFileS3Key":"d/a.gz"}`
	cases := map[string]string{
		good + "\n\n" + "{not json\n":                        "mem://m line 3 is not valid JSON",
		good + "\n" + good + "\n" + `{"itemCount":1}` + "\n": "mem://m line 3 has no dataFileS3Key",
		`{"itemCount":1}`:                                    "mem://m line 1 has no dataFileS3Key",
	}
	for body, want := range cases {
		_, err := readFilesManifest(context.Background(), memStore{objects: map[string][]byte{"m": []byte(body)}}, "m")
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("manifest %q: err %v, want %q", body, err, want)
		}
	}
	entries, err := readFilesManifest(context.Background(), memStore{objects: map[string][]byte{"m": []byte(good + "\n\n" + good + "\n")}}, "m")
	require.NoError(t, err)
	assert.Len(t, entries, 2)
}

// TestTruncatedSaysHowManyItemsWereWhole: the count of complete items before
// the gzip stream ends is a count (never negative) and grows with the cut.
func TestTruncatedSaysHowManyItemsWereWhole(t *testing.T) {
	var lines []string
	for i := 0; i < 2000; i++ {
		lines = append(lines, `{"Item":{"pk":{"S":"item-`+strings.Repeat("x", i%50)+`"}}}`)
	}
	data := gz(t, lines...)
	re := regexp.MustCompile(`after ([0-9]+) complete items`)
	last := -1
	for _, frac := range []float64{0.3, 0.6, 0.95} {
		err := EachLine(bytes.NewReader(data[:int(float64(len(data))*frac)]), func([]byte) error { return nil })
		require.ErrorIs(t, err, ErrTruncated)
		m := re.FindStringSubmatch(err.Error())
		require.NotNil(t, m, "%v", err)
		n := 0
		for _, c := range m[1] {
			n = n*10 + int(c-'0')
		}
		assert.Greater(t, n, last, "cut at %.0f%%: %v", frac*100, err)
		assert.Less(t, n, len(lines))
		last = n
	}
}
