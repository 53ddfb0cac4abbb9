package export

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/export"
	fx "github.com/dynops/dynops/test/helpers/fixture"
)

// TestRevertOnABadDay (issue 43 #7): twelve keys the window changed were
// all changed again after it. Every conflict is available in full (-o json
// and a 0600 --conflicts-file), the terminal shows a sample and says where
// the rest is; a gap or an overlap in the chain is refused with exit 2 and
// nothing on stdout that claims work, the table unchanged.
func TestRevertOnABadDay(t *testing.T) {
	fxt := newFixture(t, 0)
	root := t.TempDir()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	h := &history{t: t, db: fxt.db, table: fxt.table, fx: fxt, root: root, micros: t0.UnixMicro()}
	users := fx.Users(12)
	fx.Put(t, fxt.db, fxt.table, users)
	for i := range users {
		h.put(with(users[i], "status", "bad"))
	}
	h.window("badday/w1", "01772326800000-d0000001", t0, t0.Add(time.Hour), "NEW_AND_OLD_IMAGES")
	upload(t, fxt, root)
	for i := range users {
		fx.Put(t, fxt.db, fxt.table, []map[string]types.AttributeValue{with(users[i], "status", "fixed by hand")})
	}
	before := tableState(t, fxt.db, fxt.table)
	args := append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", "badday/w1", "--table", fxt.table, "--yes"}, unverified...)

	t.Run("every conflict in -o json and in the conflicts file; a sample on the terminal", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "conflicts.jsonl")
		out, errOut, code := fxt.dynops(t, append(args, "-o", "json", "--conflicts-file", file)...)
		assert.Equal(t, 1, code, "conflicts: exit 1 (%s)", errOut)
		var rep export.RevertReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		assert.Equal(t, int64(12), rep.Conflicts)
		assert.Len(t, rep.ConflictKeys, 12, "all of them in the JSON")
		info, err := os.Stat(file)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		f, err := os.Open(file)
		require.NoError(t, err)
		defer f.Close()
		var lines int
		for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
			var c export.RevertConflict
			require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
			assert.Contains(t, string(c.Key), "user_")
		}
		assert.Equal(t, 12, lines, "all of them in the file")

		out, _, code = fxt.dynops(t, args...)
		assert.Equal(t, 1, code)
		assert.Equal(t, 10, strings.Count(out, "  conflict "), "a sample on the terminal")
		assert.Contains(t, out, "and 2 more: every conflict is in -o json and --conflicts-file FILE")
		assert.Equal(t, before, tableState(t, fxt.db, fxt.table), "conflicts are left alone")
	})
	for name, w := range map[string]struct {
		prefix, id string
		from, to   time.Time
	}{
		"a gap":      {"badday/gap", "01772330400000-d0000002", t0.Add(2 * time.Hour), t0.Add(3 * time.Hour)},
		"an overlap": {"badday/overlap", "01772330400000-d0000003", t0.Add(30 * time.Minute), t0.Add(2 * time.Hour)},
	} {
		t.Run(name+" in the chain is refused: exit 2, nothing claimed", func(t *testing.T) {
			dir := t.TempDir()
			h.root = dir
			h.put(with(users[0], "status", "again"))
			h.window(w.prefix, w.id, w.from, w.to, "NEW_AND_OLD_IMAGES")
			upload(t, fxt, dir)
			state := tableState(t, fxt.db, fxt.table)
			out, errOut, code := fxt.dynops(t, append([]string{"export", "revert", "--bucket", fxt.bucket, "--prefix", "badday/w1",
				"--prefix", w.prefix, "--table", fxt.table, "--yes"}, unverified...)...)
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out, "nothing on stdout claims work")
			assert.Contains(t, errOut, "do not chain")
			assert.Contains(t, errOut, strings.Fields(name)[1]+" between", "names the gap or the overlap")
			assert.Contains(t, errOut, "nothing was changed")
			assert.Equal(t, state, tableState(t, fxt.db, fxt.table))
		})
	}
}
