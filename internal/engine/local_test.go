package engine

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The local engine runs real processes here: /bin/sh stands for the dynops
// binary, its script reading the --shard I/N the engine appends ($0 $1).

func TestLocalRunsEveryShardWithItsIndex(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	l := NewLocal("/bin/sh", &log)
	s := Stage{Name: "map", Args: []string{"-c", `touch "` + dir + `/$(echo $1 | tr / -)"`}, Shards: 3}
	require.NoError(t, RunStages(context.Background(), l, []Stage{s}, 10*time.Millisecond, nil))
	for _, name := range []string{"0-3", "1-3", "2-3"} {
		assert.FileExists(t, filepath.Join(dir, name))
	}
	assert.Empty(t, log.String())
}

func TestLocalFailedShardFailsTheStageAndSkipsTheNext(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	l := NewLocal("/bin/sh", &log)
	failOne := Stage{Name: "map", Args: []string{"-c", `case "$1" in 1/*) echo "shard broke" >&2; exit 3;; esac`}, Shards: 2}
	next := Stage{Name: "reduce", Args: []string{"-c", `touch "` + dir + `/ran"`}, Shards: 2}
	var last Status
	err := RunStages(context.Background(), l, []Stage{failOne, next}, 10*time.Millisecond, func(s Stage, st Status) {
		if s.Name == "map" {
			last = st
		}
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stage map: local job local-1-map: 1 shard(s) failed")
	assert.Equal(t, Status{Succeeded: 1, Failed: 1, Done: true}, last)
	assert.Contains(t, log.String(), "map shard 1/2 failed: exit status 3: shard broke")
	assert.NoFileExists(t, filepath.Join(dir, "ran"), "reduce runs only after map succeeded")
}

func TestLocalCancelKillsTheShards(t *testing.T) {
	l := NewLocal("/bin/sh", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- RunStages(ctx, l, []Stage{{Name: "map", Args: []string{"-c", "sleep 30"}, Shards: 2}}, 10*time.Millisecond, nil)
	}()
	time.Sleep(200 * time.Millisecond)
	cancel() // Ctrl-C
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 10*time.Second, "the shards were killed, not waited for")
	st, serr := l.Status(context.Background(), &localJob{id: "local-1-map"})
	require.NoError(t, serr)
	assert.True(t, st.Done)
	assert.Equal(t, 2, st.Failed)
}
