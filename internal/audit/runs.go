package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"
)

// Read returns every record in the log at path, in file order. A torn last
// line (a crash in the middle of a write) is skipped; any other bad line is
// an error naming its line number.
func Read(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	var recs []Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			if n == bytes.Count(data, []byte("\n"))+1 && !bytes.HasSuffix(data, []byte("\n")) {
				break // torn last line
			}
			return recs, fmt.Errorf("audit log %s line %d: %w", path, n, err)
		}
		recs = append(recs, rec)
	}
	return recs, sc.Err()
}

// Run is one command run read back: its `started` record and, unless the run
// was interrupted, its `finished` record.
type Run struct {
	RunID    string    `json:"run_id"`
	Time     time.Time `json:"time"`
	Identity Identity  `json:"identity"`
	Tags
	Command    string            `json:"command"`
	Params     map[string]string `json:"params,omitempty"`
	Targets    []string          `json:"targets,omitempty"`
	DryRun     bool              `json:"dry_run"`
	Plan       *Plan             `json:"plan,omitempty"`
	Result     string            `json:"result"` // a finished record's result, or interrupted
	ExitCode   *int              `json:"exit_code,omitempty"`
	DurationMS *int64            `json:"duration_ms,omitempty"`
	Counts     map[string]int64  `json:"counts,omitempty"`
	Findings   []string          `json:"findings,omitempty"`
	Error      string            `json:"error,omitempty"`
	Actions    []Action          `json:"actions,omitempty"`
}

// Interrupted reports whether the run has a `started` record and no `finished`.
func (r Run) Interrupted() bool { return r.Result == ResultInterrupted }

// Finished reports whether the run has its `finished` record.
func (r Run) Finished() bool { return r.Result != ResultInterrupted && r.Result != ResultRunning }

// ResultRunning is a run without `finished` whose process is still alive on
// this host: not (yet) interrupted.
const ResultRunning = "running"

// MarkRunning turns the unfinished runs of this host whose process is still
// a live dynops into "running": an hours-long restore in progress is not
// an interrupted one.
func MarkRunning(runs []Run, host string, alive func(pid int) bool) {
	for i := range runs {
		r := &runs[i]
		if r.Interrupted() && r.Identity.Host == host && r.Identity.PID > 0 && alive(r.Identity.PID) {
			r.Result = ResultRunning
		}
	}
}

// DynopsAlive reports whether pid is a live process running dynops (Linux:
// /proc/PID/cmdline); elsewhere it says no, so runs read as interrupted.
func DynopsAlive(pid int) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return bytes.Contains(argv0, []byte("dynops")) || pid == os.Getpid()
}

// Runs pairs the records by run id, in the order the runs started.
func Runs(recs []Record) []Run {
	idx := map[string]int{}
	var runs []Run
	for _, rec := range recs {
		i, ok := idx[rec.RunID]
		if !ok {
			i = len(runs)
			idx[rec.RunID] = i
			runs = append(runs, Run{RunID: rec.RunID, Time: rec.Time, Result: ResultInterrupted})
		}
		run := &runs[i]
		switch rec.Event {
		case EventStarted:
			run.Time = rec.Time
			run.Plan = rec.Plan
		case EventFinished:
			run.Result = rec.Result
			run.ExitCode, run.DurationMS = rec.ExitCode, rec.DurationMS
			run.Counts, run.Findings, run.Error, run.Actions = rec.Counts, rec.Findings, rec.Error, rec.Actions
		}
		if run.Command == "" || rec.Event == EventFinished {
			run.Identity, run.Tags = rec.Identity, rec.Tags
			run.Command, run.Params, run.Targets, run.DryRun = rec.Command, rec.Params, rec.Targets, rec.DryRun
		}
	}
	sort.SliceStable(runs, func(a, b int) bool { return runs[a].Time.Before(runs[b].Time) })
	return runs
}

// Filter selects runs.
type Filter struct {
	Incident string
	Since    time.Time // zero: all
}

// Select returns the runs that match f.
func (f Filter) Select(runs []Run) []Run {
	var out []Run
	for _, r := range runs {
		if f.Incident != "" && r.Incident != f.Incident {
			continue
		}
		if !f.Since.IsZero() && r.Time.Before(f.Since) {
			continue
		}
		out = append(out, r)
	}
	return out
}
