package export

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
	"github.com/dynops/dynops/internal/testctx"
)

func TestJoinPrefix(t *testing.T) {
	assert.Equal(t, "dev-hoge-user/incremental", joinPrefix("exports", "dev-hoge-user/incremental")[len("exports/"):])
	assert.Equal(t, "exports/x", joinPrefix("exports", "x"))
	assert.Equal(t, "x", joinPrefix("", "x"), "no prefix: no leading slash")
}

// A gap says what it is measured from: the table's checkpoint for the
// first window, the previous window's end after it.
func TestCheckChainSaysFromWhere(t *testing.T) {
	inc := func(a, b int) Increment { return Increment{Dir: "d", From: hour(a), To: hour(b)} }
	err := CheckChain([]Increment{inc(1, 2)}, hour(0))
	assert.ErrorContains(t, err, "(the table's checkpoint (dynops:applied-through) is at 2026-03-01T00:00:00Z, d starts at 2026-03-01T01:00:00Z)")
	err = CheckChain([]Increment{inc(0, 1), inc(2, 3)}, hour(0))
	assert.ErrorContains(t, err, "(the previous window ends at 2026-03-01T01:00:00Z, d starts at 2026-03-01T02:00:00Z)")
}

// readChanges reads the data files the summary's manifestFilesS3Key
// names, wherever that is; a key that names nothing falls back to the
// export's own manifest-files.json.
func TestReadChangesFollowsTheSummarysFilesKey(t *testing.T) {
	ctx := testctx.Bounded(t)
	setup := func(t *testing.T) (string, Increment) {
		root := t.TempDir()
		_, err := exporttest.Write(root, exporttest.Spec{Prefix: "p", ExportID: "01-x", Incremental: true,
			Records: [][]exporttest.Record{{{Keys: userKey("a"), New: userImg("a", "v"), Micros: 1}}}})
		require.NoError(t, err)
		incs, err := FindIncrements(ctx, exportverify.DirStore{Root: root}, []string{"p"})
		require.NoError(t, err)
		require.Len(t, incs, 1)
		return root, incs[0]
	}
	t.Run("moved", func(t *testing.T) {
		root, inc := setup(t)
		moved := inc.Dir + "/elsewhere/files.json"
		require.NoError(t, os.MkdirAll(filepath.Join(root, inc.Dir, "elsewhere"), 0o755))
		require.NoError(t, os.Rename(filepath.Join(root, inc.Dir, exportverify.FilesName), filepath.Join(root, moved)))
		inc.summary.ManifestFilesS3Key = moved
		changes, err := readChanges(ctx, exportverify.DirStore{Root: root}, inc)
		require.NoError(t, err)
		assert.Len(t, changes, 1)
	})
	t.Run("names nothing", func(t *testing.T) {
		root, inc := setup(t)
		inc.summary.ManifestFilesS3Key = inc.Dir + "/nowhere.json"
		changes, err := readChanges(ctx, exportverify.DirStore{Root: root}, inc)
		require.NoError(t, err)
		assert.Len(t, changes, 1)
	})
}

// Two changes of one key with the same WriteTimestampMicros: the later
// line is the later change.
func TestReadChangesTieGoesToTheLaterLine(t *testing.T) {
	root := t.TempDir()
	_, err := exporttest.Write(root, exporttest.Spec{Prefix: "p", ExportID: "01-x", Incremental: true, Records: [][]exporttest.Record{
		{{Keys: userKey("a"), New: userImg("a", "first"), Micros: 5}, {Keys: userKey("a"), New: userImg("a", "second"), Micros: 5}},
	}})
	require.NoError(t, err)
	store := exportverify.DirStore{Root: root}
	incs, err := FindIncrements(testctx.Bounded(t), store, []string{"p"})
	require.NoError(t, err)
	changes, err := readChanges(testctx.Bounded(t), store, incs[0])
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.Equal(t, "second", changes[0].image["v"].(*types.AttributeValueMemberS).Value)
}

// A failure is shown when the service gives a code, a message or both.
func TestFailureShown(t *testing.T) {
	cases := []struct {
		code, msg *string
		want      string
	}{
		{nil, nil, ""},
		{aws.String("S3AccessDenied"), nil, "S3AccessDenied"},
		{nil, aws.String("no access to the bucket"), "no access to the bucket"},
		{aws.String("S3AccessDenied"), aws.String("no access"), "S3AccessDenied no access"},
	}
	for _, c := range cases {
		e := fromDescription(&types.ExportDescription{FailureCode: c.code, FailureMessage: c.msg, ExportTime: aws.Time(time.Now())})
		assert.Equal(t, c.want, e.Failure)
		i := fromImport(&types.ImportTableDescription{FailureCode: c.code, FailureMessage: c.msg})
		assert.Equal(t, c.want, i.Failure)
	}
}
