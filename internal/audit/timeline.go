package audit

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Who is a run's actor: the AWS caller, with the OS user and host.
func (r Run) Who() string {
	local := r.Identity.OSUser + "@" + r.Identity.Host
	if r.Identity.CallerARN == "" {
		return local + " (AWS caller unknown)"
	}
	return r.Identity.CallerARN + " (" + local + ")"
}

// contextFlags are shown in the identity and tags, not in the command line.
var contextFlags = map[string]bool{"audit-log": true, "incident": true, "endpoint-url": true, "region": true, "profile": true, "output": true, "jq": true}

// CommandLine is the command with the flags that say what it did.
func (r Run) CommandLine() string {
	var b strings.Builder
	b.WriteString(r.Command)
	keys := make([]string, 0, len(r.Params))
	for k := range r.Params {
		if !contextFlags[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := r.Params[k]
		if v == "true" {
			fmt.Fprintf(&b, " --%s", k)
			continue
		}
		fmt.Fprintf(&b, " --%s %s", k, v)
	}
	return b.String()
}

// Outcome is the result with exit code and duration, e.g. "ok (exit 0, 1.2s)".
func (r Run) Outcome() string {
	if r.Interrupted() {
		return "INTERRUPTED (started, never finished: killed or crashed)"
	}
	if r.Result == ResultRunning {
		return "RUNNING (started, not finished yet; its process is alive)"
	}
	var extra []string
	if r.ExitCode != nil {
		extra = append(extra, fmt.Sprintf("exit %d", *r.ExitCode))
	}
	if r.DurationMS != nil {
		extra = append(extra, (time.Duration(*r.DurationMS) * time.Millisecond).Round(100*time.Millisecond).String())
	}
	s := r.Result
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	if r.Error != "" {
		s += ": " + r.Error
	}
	return s
}

// Changed summarises what the run changed: its actions by kind and target,
// and its result counts.
func (r Run) Changed() string {
	var parts []string
	type key struct{ what, target, note string }
	n := map[key]int{}
	var order []key
	for _, a := range r.Actions {
		k := key{a.What, a.Target, actionNote(a.Detail)}
		if n[k] == 0 {
			order = append(order, k)
		}
		n[k]++
	}
	for _, k := range order {
		s := k.what
		if n[k] > 1 {
			s += fmt.Sprintf(" ×%d", n[k])
		}
		if k.target != "" {
			s += " " + k.target
		}
		if k.note != "" {
			s += ": " + k.note
		}
		parts = append(parts, s)
	}
	if len(r.Counts) > 0 {
		parts = append(parts, formatCounts(r.Counts))
	}
	if len(r.Findings) > 0 {
		parts = append(parts, "findings: "+strings.Join(r.Findings, ", "))
	}
	switch {
	case !r.Finished() && r.Plan != nil && len(r.Plan.Counts) > 0:
		parts = append(parts, "planned: "+formatCounts(r.Plan.Counts))
	case r.Interrupted():
		parts = append(parts, "unknown: it may have written before it stopped")
	}
	s := strings.Join(parts, "; ")
	switch {
	case r.DryRun:
		return "nothing (dry run)" + prefixed("; ", s)
	case s == "":
		return "nothing"
	}
	return s
}

// actionNote is what an action's detail says in a few words, when it is a
// choice or a change: a decision's choice and how it was made ("repair
// (--decide)"), a parameter's old and new value ("--latest -> --time T"),
// a gate skipped by break-glass and why ("approval skipped: REASON").
func actionNote(detail any) string {
	d, ok := detail.(map[string]any)
	if !ok {
		if m, isStrings := detail.(map[string]string); isStrings {
			d = map[string]any{}
			for k, v := range m {
				d[k] = v
			}
		} else {
			return ""
		}
	}
	str := func(k string) string { s, _ := d[k].(string); return s }
	switch {
	case str("choice") != "" && str("how") != "":
		return str("choice") + " (" + str("how") + ")"
	case str("choice") != "":
		return str("choice")
	case str("old") != "" || str("new") != "":
		return str("old") + " -> " + str("new")
	case str("skipped") != "" && str("reason") != "":
		return str("skipped") + " skipped: " + str("reason")
	}
	return ""
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func formatCounts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// StepStatus is one runbook step in an incident, listed once however many
// times it ran.
type StepStatus struct {
	Runbook     string `json:"runbook"`
	Step        string `json:"step"`
	Result      string `json:"result"` // of its last attempt
	Attempts    int    `json:"attempts"`
	Interrupted int    `json:"interrupted"`
}

// Steps lists the runbook steps among runs, in the order they first ran.
func Steps(runs []Run) []StepStatus {
	idx := map[[2]string]int{}
	var out []StepStatus
	for _, r := range runs {
		if r.Step == "" {
			continue
		}
		k := [2]string{r.Runbook, r.Step}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, StepStatus{Runbook: r.Runbook, Step: r.Step})
		}
		s := &out[i]
		s.Attempts++
		s.Result = r.Result
		if r.Interrupted() {
			s.Interrupted++
		}
	}
	return out
}

// WriteTimeline renders runs as a postmortem-ready markdown timeline.
func WriteTimeline(w io.Writer, incident string, runs []Run) error {
	title := "Timeline"
	if incident != "" {
		title = "Incident " + incident + ": timeline"
	}
	fmt.Fprintf(w, "# %s\n\n", title)
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "No dynops runs recorded.")
		return err
	}
	first, last := runs[0].Time, runs[len(runs)-1].Time
	fmt.Fprintf(w, "%d dynops run(s) from %s to %s (UTC).\n\n", len(runs), first.UTC().Format(time.RFC3339), last.UTC().Format(time.RFC3339))
	fmt.Fprintln(w, "| time (UTC) | who | account / region | command | result | what changed |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range runs {
		cmd := r.CommandLine()
		if r.Step != "" {
			cmd = "[" + r.Runbook + " / " + r.Step + "] " + cmd
		}
		where := strings.TrimSpace(r.Identity.Account + " " + strings.Join(r.Identity.Regions, ","))
		fmt.Fprintf(w, "| %s | %s | %s | `%s` | %s | %s |\n", r.Time.UTC().Format("2006-01-02 15:04:05"),
			cell(r.Who()), cell(where), strings.ReplaceAll(cmd, "`", "'"), cell(r.Outcome()), cell(r.Changed()))
	}
	if steps := Steps(runs); len(steps) > 0 {
		fmt.Fprintf(w, "\n## Runbook steps\n\n")
		for _, s := range steps {
			note := ""
			if s.Interrupted > 0 {
				note = fmt.Sprintf(" — INTERRUPTED %d time(s), %d attempt(s)", s.Interrupted, s.Attempts)
			} else if s.Attempts > 1 {
				note = fmt.Sprintf(" — %d attempt(s)", s.Attempts)
			}
			fmt.Fprintf(w, "- %s / %s: %s%s\n", s.Runbook, s.Step, s.Result, note)
		}
	}
	var interrupted int
	for _, r := range runs {
		if r.Interrupted() {
			interrupted++
		}
	}
	if interrupted > 0 {
		fmt.Fprintf(w, "\n%d run(s) INTERRUPTED: each has a `started` record and no `finished`; check what it may have changed.\n", interrupted)
	}
	return nil
}

func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}
