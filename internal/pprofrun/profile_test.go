package pprofrun

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// captureStderr runs fn with os.Stderr going to a pipe and returns what fn
// wrote there (Start reports its own failures on the process's stderr).
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stderr
	os.Stderr = w
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	defer func() { os.Stderr = old }()
	fn()
	require.NoError(t, w.Close())
	return <-got
}

// readProfile returns the decompressed bytes of a pprof file (pprof writes
// gzip-compressed protocol buffers).
func readProfile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err, "%s is not a gzip-compressed pprof profile", path)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return b
}

// burn keeps a CPU busy for d, so that the CPU profile has samples.
func burn(d time.Duration) int {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 1e5; i++ {
			n += i % 7
		}
	}
	return n
}

func TestStartWithoutEnvProfilesNothing(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("DYNOPS_CPUPROFILE", "")
	t.Setenv("DYNOPS_MEMPROFILE", "")
	stderr := captureStderr(t, func() { Start()() })
	assert.Empty(t, stderr, "no profile asked, nothing to report")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no profile asked, no file written")
}

func TestStartWritesCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	t.Setenv("DYNOPS_CPUPROFILE", path)
	t.Setenv("DYNOPS_MEMPROFILE", "")
	stderr := captureStderr(t, func() {
		stop := Start()
		burn(200 * time.Millisecond)
		stop()
	})
	assert.Empty(t, stderr)
	assert.NotEmpty(t, readProfile(t, path), "the CPU profile is written and closed by the returned func")
	// The profiler is stopped: another one can start.
	require.NoError(t, pprof.StartCPUProfile(io.Discard))
	pprof.StopCPUProfile()
}

func TestStartReportsWhatItCannotProfile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	cases := []struct {
		name, env, path, want string
		busy                  bool // a CPU profile is already running
	}{
		{"CPU profile in a missing folder", "DYNOPS_CPUPROFILE", filepath.Join(missing, "cpu.pprof"), "DYNOPS_CPUPROFILE: open " + filepath.Join(missing, "cpu.pprof"), false},
		{"CPU profiler already in use", "DYNOPS_CPUPROFILE", filepath.Join(t.TempDir(), "cpu.pprof"), "DYNOPS_CPUPROFILE: cpu profiling already in use", true},
		{"heap profile in a missing folder", "DYNOPS_MEMPROFILE", filepath.Join(missing, "mem.pprof"), "DYNOPS_MEMPROFILE: open " + filepath.Join(missing, "mem.pprof"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("DYNOPS_CPUPROFILE", "")
			t.Setenv("DYNOPS_MEMPROFILE", "")
			t.Setenv(tc.env, tc.path)
			if tc.busy {
				require.NoError(t, pprof.StartCPUProfile(io.Discard))
				defer pprof.StopCPUProfile()
			}
			stderr := captureStderr(t, func() { Start()() })
			assert.Contains(t, stderr, tc.want)
			assert.Equal(t, 1, strings.Count(stderr, "dynops: "), "one message: %s", stderr)
		})
	}
}

// TestPeakHeapKeepsThePeak: the heap profile and the memory classes are the
// ones taken at the highest resident memory, not at the end of the run.
func TestPeakHeapKeepsThePeak(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("resident memory is read from /proc (Linux)")
	}
	path := filepath.Join(t.TempDir(), "mem.pprof")
	t.Setenv("DYNOPS_CPUPROFILE", "")
	t.Setenv("DYNOPS_MEMPROFILE", path)
	const size = 128 << 20
	stderr := captureStderr(t, func() {
		stop := Start()
		big := make([]byte, size)
		for i := 0; i < len(big); i += 4096 {
			big[i] = 1 // resident, not only reserved
		}
		// The sampler ticks every 100 ms: a second at the peak leaves it about
		// ten ticks, so a loaded machine that delays a few still samples it.
		time.Sleep(time.Second)
		runtime.KeepAlive(big)
		big = nil
		runtime.GC()
		debug.FreeOSMemory() // resident memory falls well below the peak
		time.Sleep(350 * time.Millisecond)
		stop()
	})
	assert.Empty(t, stderr)
	assert.NotEmpty(t, readProfile(t, path), "the heap profile at the peak")
	txt, err := os.ReadFile(path + ".txt")
	require.NoError(t, err)
	lines := strings.Split(string(txt), "\n")
	assert.Regexp(t, `^VmHWM: [0-9]+ kB \(peak resident memory of the process\)$`, lines[0])
	m := regexp.MustCompile(`VmRSS at the peak: ([0-9.]+) MB`).FindStringSubmatch(string(txt))
	require.NotNil(t, m, "%s", txt)
	mb, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, mb, float64(size>>20), "the memory classes are those of the peak, not of the end (%s)", txt)
	assert.Contains(t, string(txt), "/memory/classes/heap/objects:bytes")
}

func TestIsNewPeak(t *testing.T) {
	cases := []struct {
		rss, peak int64
		want      bool
	}{
		{0, 0, true},          // the first sample, even where rss cannot be read
		{1000, 0, true},       // the first sample
		{1000, 1000, false},   // no growth
		{999, 1000, false},    // less than the peak
		{100, 1000, false},    // far less
		{1050, 1000, false},   // exactly 5 % more: noise
		{1051, 1000, true},    // more than 5 %
		{2000, 1000, true},    // twice
		{20999, 20000, false}, // just under 5 %
		{21001, 20000, true},  // just over 5 %
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("rss %d peak %d", c.rss, c.peak), func(t *testing.T) {
			assert.Equal(t, c.want, isNewPeak(c.rss, c.peak))
		})
	}
}

func TestStatmRSS(t *testing.T) {
	cases := []struct {
		statm    string
		pageSize int
		want     int64
	}{
		{"5000 1200 300 10 0 900 0\n", 4096, 1200 * 4096},
		{"5000 1200 300 10 0 900 0\n", 65536, 1200 * 65536},
		{"5000 7", 4096, 7 * 4096}, // only the fields it needs
		{"5000", 4096, 0},          // no resident field
		{"", 4096, 0},
		{"5000 x 300", 4096, 0}, // not a number
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%q", c.statm), func(t *testing.T) {
			assert.Equal(t, c.want, statmRSS(c.statm, c.pageSize))
		})
	}
	if runtime.GOOS == "linux" {
		rss := rssBytes()
		assert.Greater(t, rss, int64(1<<20), "a Go test process has more than 1 MB resident")
		assert.Zero(t, rss%int64(os.Getpagesize()), "whole pages")
	}
}

func TestMemClassesAndPeak(t *testing.T) {
	txt := memClasses(64 << 20)
	assert.True(t, strings.HasPrefix(txt, "VmRSS at the peak: 64.0 MB\n"), txt)
	for _, name := range []string{"/memory/classes/heap/objects:bytes", "/memory/classes/total:bytes", "/gc/heap/goal:bytes"} {
		assert.Regexp(t, regexp.QuoteMeta(name)+` +[0-9]+\.[0-9] MB\n`, txt)
	}
	// The classes in MB: the runtime's total, read here too, is within a few
	// MB of the one printed (a little allocation between the two reads).
	m := regexp.MustCompile(`/memory/classes/total:bytes +([0-9.]+) MB`).FindStringSubmatch(txt)
	require.NotNil(t, m, txt)
	printed, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	assert.InDelta(t, float64(s[0].Value.Uint64())/(1<<20), printed, 16, "runtime total in MB")
	var b bytes.Buffer
	b.WriteString(vmHWM())
	if runtime.GOOS == "linux" {
		assert.Regexp(t, `^VmHWM: [0-9]+ kB \(peak resident memory of the process\)\n$`, b.String())
	}
}
