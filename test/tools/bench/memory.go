package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/dynops/dynops/internal/tablediff"
)

// benchMemory measures the max RSS of `dynops table diff` at n and 10n items
// per table (goal: at most 1.2x), then runs the same diff in-process at 10n
// and keeps a heap profile taken at its peak heap, printing its top entries.
//
// With fake set, the tables are served by fakeDynamoDB instead (seconds, not
// minutes: moto scans ~500 items/s) and no in-process profile is taken.
func benchMemory(e *env, n int, profilePath string, fake bool) error {
	type point struct {
		items   int
		m       measure
		seconds float64
	}
	var pts []point
	var small [2]string
	for _, k := range []int{1, 10} {
		start := time.Now()
		var a, b string
		var m measure
		var err error
		e.gctrace = true
		if fake {
			m, err = e.fakeDiff(n * k)
		} else {
			if a, b, _, err = e.diffTables(fmt.Sprintf("mem%dx", k), n*k); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "bench: %d items x 2 tables written in %.0fs\n", n*k, time.Since(start).Seconds())
			_, m, err = e.diff(a, b)
		}
		e.gctrace = false
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: diff of 2 x %d items: %.1fs, max RSS %d MB, largest live heap after a GC %d MB, largest heap goal %d MB\n",
			n*k, m.seconds, m.rssKB/1024, m.liveMB, m.goalMB)
		pts = append(pts, point{items: n * k, m: m})
		if k == 1 && !fake {
			small = [2]string{a, b}
			if err := heapProfile(e, small, profilePath); err != nil {
				return err
			}
		}
	}
	ratio := float64(pts[1].m.rssKB) / float64(pts[0].m.rssKB)
	verdict := "met"
	if ratio > 1.2 {
		verdict = "MISSED"
	}
	fmt.Printf("%-34s %-10s %-12s %-10s %-14s %s\n", "table diff (dynops binary)", "seconds", "items/s", "max RSS", "max live heap", "max heap goal (gctrace)")
	for _, p := range pts {
		fmt.Printf("2 x %-30d %-10.1f %-12.0f %-10s %-14s %d MB\n", p.items, p.m.seconds, p.m.rate(), fmt.Sprintf("%.1f MB", float64(p.m.rssKB)/1024),
			fmt.Sprintf("%d MB", p.m.liveMB), p.m.goalMB)
	}
	fmt.Printf("max RSS at 10x / at 1x: %.2fx (goal <= 1.20x): %s\n\n", ratio, verdict)
	if fake {
		return nil
	}
	out, err := os.ReadFile(profilePath + ".txt")
	os.Stdout.Write(out)
	return err
}

// heapProfile runs the diff of tables in this process and keeps a heap
// profile taken at its peak heap, with its top entries beside it (.txt).
func heapProfile(e *env, tables [2]string, profilePath string) error {
	runtime.MemProfileRate = 64 << 10
	var (
		mu       sync.Mutex
		peak     uint64
		peakProf bytes.Buffer
		stop     = make(chan struct{})
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak+peak/10 {
				mu.Lock()
				peak = ms.HeapInuse
				peakProf.Reset()
				_ = pprof.Lookup("heap").WriteTo(&peakProf, 0)
				mu.Unlock()
			}
		}
	}()
	rep, err := tablediff.Diff(e.ctx, e.db, tablediff.Options{Source: tables[0], Target: tables[1], Segments: e.segments,
		KeysOut: filepath.Join(e.tmp, "keys-mem.jsonl"), TempDir: e.tmp})
	close(stop)
	<-done
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(profilePath), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(profilePath, peakProf.Bytes(), 0o644); err != nil {
		return err
	}
	var txt strings.Builder
	fmt.Fprintf(&txt, "in-process diff of 2 x %d items: peak heap in use %.1f MB; profile at the peak: %s\n", rep.SourceItems, float64(peak)/(1<<20), profilePath)
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=12", "-sample_index=inuse_space", profilePath).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go tool pprof: %v\n%s", err, out)
	}
	lines := strings.Split(string(out), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "File:") || strings.HasPrefix(l, "Build ID:") || strings.HasPrefix(l, "Type:") || strings.HasPrefix(l, "Time:") {
			continue
		}
		fmt.Fprintln(&txt, l)
	}
	return os.WriteFile(profilePath+".txt", []byte(txt.String()), 0o644)
}
