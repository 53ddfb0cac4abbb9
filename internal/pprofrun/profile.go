// Package pprofrun writes CPU and peak-heap profiles of a dynops run when
// DYNOPS_CPUPROFILE / DYNOPS_MEMPROFILE name files (used by `make bench`).
package pprofrun

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Start starts a CPU profile when DYNOPS_CPUPROFILE names a file and, when
// DYNOPS_MEMPROFILE names one, a heap profile taken at the process's peak
// resident memory (see peakHeap); the returned func ends them. `make bench`
// uses them to say where a command's time and memory go.
func Start() func() {
	var stops []func()
	if p := os.Getenv("DYNOPS_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err != nil {
			fmt.Fprintf(os.Stderr, "dynops: DYNOPS_CPUPROFILE: %v\n", err)
		} else if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "dynops: DYNOPS_CPUPROFILE: %v\n", err)
			f.Close()
		} else {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if p := os.Getenv("DYNOPS_MEMPROFILE"); p != "" {
		stops = append(stops, peakHeap(p))
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// peakHeap samples the process every 100 ms; at each new peak of resident
// memory (VmRSS) it keeps a heap profile and the runtime's memory classes.
// The returned func writes them to path and path.txt.
func peakHeap(path string) func() {
	runtime.MemProfileRate = 64 << 10
	var (
		mu   sync.Mutex
		peak int64
		prof bytes.Buffer
		txt  string
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	sample := func() {
		rss := rssBytes()
		if !isNewPeak(rss, peak) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		peak = rss
		prof.Reset()
		_ = pprof.Lookup("heap").WriteTo(&prof, 0)
		txt = memClasses(rss)
	}
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		sample()
		mu.Lock()
		defer mu.Unlock()
		if err := os.WriteFile(path, prof.Bytes(), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "dynops: DYNOPS_MEMPROFILE: %v\n", err)
		}
		_ = os.WriteFile(path+".txt", []byte(vmHWM()+txt), 0o644)
	}
}

// isNewPeak reports whether resident memory rss is a peak worth a new heap
// profile: the first sample (no peak yet), or more than 5 % above the last
// peak (smaller growth is noise, and each profile walks the heap).
func isNewPeak(rss, peak int64) bool { return peak <= 0 || rss > peak+peak/20 }

// vmHWM is the process's peak resident memory since its exec (Linux).
func vmHWM() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.Join(strings.Fields(line), " ") + " (peak resident memory of the process)\n"
		}
	}
	return ""
}

// rssBytes is the process's resident memory now (Linux; 0 elsewhere).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	return statmRSS(string(b), os.Getpagesize())
}

// statmRSS is the resident memory in a /proc/PID/statm line ("size resident
// shared text lib data dt", in pages), in bytes; 0 when it has no such field.
func statmRSS(statm string, pageSize int) int64 {
	f := strings.Fields(statm)
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(pageSize)
}

// memClasses renders where the Go runtime's memory is (runtime/metrics).
func memClasses(rss int64) string {
	names := []string{
		"/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes",
		"/memory/classes/heap/free:bytes",
		"/memory/classes/heap/released:bytes",
		"/memory/classes/heap/stacks:bytes",
		"/memory/classes/metadata/other:bytes",
		"/memory/classes/metadata/mspan/inuse:bytes",
		"/memory/classes/metadata/mcache/inuse:bytes",
		"/memory/classes/os-stacks:bytes",
		"/memory/classes/other:bytes",
		"/memory/classes/profiling/buckets:bytes",
		"/memory/classes/total:bytes",
		"/gc/heap/goal:bytes",
	}
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	var b strings.Builder
	fmt.Fprintf(&b, "VmRSS at the peak: %.1f MB\n", float64(rss)/(1<<20))
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			fmt.Fprintf(&b, "%-45s %8.1f MB\n", s.Name, float64(s.Value.Uint64())/(1<<20))
		}
	}
	return b.String()
}
