package exportverify_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/exportverify/exporttest"
)

// bigFile is an export of one data file of n items of ~250 bytes: many
// of the parsers' 64 KB chunks.
func bigFile(t *testing.T, n int, records []exporttest.Record) (string, exporttest.Written) {
	t.Helper()
	root := t.TempDir()
	spec := exporttest.Spec{Prefix: prefix, ExportID: "01-big", FileItems: []int{n}, PadBytes: 150}
	if records != nil {
		spec.Records = [][]exporttest.Record{records}
	}
	w, err := exporttest.Write(root, spec)
	require.NoError(t, err)
	return root, w
}

func openAt(t *testing.T, root string) *exportverify.Export {
	t.Helper()
	e, err := exportverify.OpenExport(root, nil)
	require.NoError(t, err)
	e.Prefix = prefix
	return e
}

// TestEachItemParsesOneFileOnSeveralCores: with one file read at a time,
// its lines are still decoded by more than one goroutine at once (fn is
// seen twice in flight), and every item arrives exactly once.
func TestEachItemParsesOneFileOnSeveralCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	root, w := bigFile(t, 6000, nil)
	var (
		inFlight atomic.Int32
		waits    atomic.Int32
		both     = make(chan struct{})
		once     sync.Once
		mu       sync.Mutex
		seen     = map[string]int{}
	)
	_, err := openAt(t, root).EachItem(context.Background(), 1, func(it map[string]types.AttributeValue) error {
		if inFlight.Add(1) >= 2 {
			once.Do(func() { close(both) })
		}
		defer inFlight.Add(-1)
		if waits.Add(1) <= 20 { // the first calls wait (a bounded while) for a second parser
			select {
			case <-both:
			case <-time.After(100 * time.Millisecond):
			}
		}
		mu.Lock()
		seen[it["user_id"].(*types.AttributeValueMemberS).Value]++
		mu.Unlock()
		return nil
	})
	require.NoError(t, err)
	select {
	case <-both:
	default:
		t.Fatal("fn was never called from two goroutines at once: one file is decoded on one core")
	}
	assert.Len(t, seen, int(w.Items))
	for k, n := range seen {
		if n != 1 {
			t.Errorf("item %s handed over %d times", k, n)
		}
	}
}

// TestEachItemNamesTheFirstBadLine: bad lines in two different chunks of a
// file: the error names the file and the first bad line, whichever parser
// reached its line first.
func TestEachItemNamesTheFirstBadLine(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var recs []exporttest.Record
	for i := 0; i < 6000; i++ {
		item := map[string]any{"user_id": map[string]string{"S": fmt.Sprintf("u-%d", i)}, "pad": map[string]string{"S": fmt.Sprintf("%0200d", i)}}
		if i == 3999 || i == 5499 { // lines 4000 and 5500
			item["logins"] = map[string]any{"N": 12}
		}
		recs = append(recs, exporttest.Record{New: item})
	}
	root, w := bigFile(t, 0, recs)
	for range 3 {
		_, err := openAt(t, root).EachItem(context.Background(), 2, func(map[string]types.AttributeValue) error { return nil })
		require.Error(t, err)
		assert.Contains(t, err.Error(), w.DataKeys[0])
		assert.Contains(t, err.Error(), "line 4000 is not DynamoDB JSON")
	}
}

// TestEachItemSaysTruncatedWhenTheCutLineFails: a file cut short in its
// middle chunk: the partial last line fails in a parser, but the file is
// reported as truncated (as the sequential reader reports it).
func TestEachItemSaysTruncatedWhenTheCutLineFails(t *testing.T) {
	root, w := bigFile(t, 6000, nil)
	p := filepath.Join(root, filepath.FromSlash(w.DataKeys[0]))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b[:len(b)*6/10], 0o644))
	_, err = openAt(t, root).EachItem(context.Background(), 1, func(map[string]types.AttributeValue) error { return nil })
	require.ErrorIs(t, err, exportverify.ErrTruncated)
	assert.Contains(t, err.Error(), w.DataKeys[0])
}

// TestEachItemStopsAtTheFirstErrorOfFn: fn's error ends the read and is
// returned with the file and line, and fn is not called again and again
// for the rest of the export.
func TestEachItemStopsAtTheFirstErrorOfFn(t *testing.T) {
	root, w := bigFile(t, 6000, nil)
	var calls atomic.Int64
	_, err := openAt(t, root).EachItem(context.Background(), 1, func(map[string]types.AttributeValue) error {
		calls.Add(1)
		return fmt.Errorf("spill disk full")
	})
	require.ErrorContains(t, err, "spill disk full")
	assert.Contains(t, err.Error(), w.DataKeys[0])
	assert.Less(t, calls.Load(), w.Items/2, "fn kept being called after its error")
}
