package audit

import "testing"

// TestRunText: what `dynops audit` prints for a run, exactly, for each
// shape of run: the command line without the context flags, the outcome
// with exit code, rounded duration and error, and what changed.
func TestRunText(t *testing.T) {
	exit := func(n int) *int { return &n }
	ms := func(n int64) *int64 { return &n }
	cases := []struct {
		name                   string
		run                    Run
		command, outcome, diff string
	}{
		{"finished with actions",
			Run{Command: "pitr repair", Params: map[string]string{"yes": "true", "table": "dev-a-b", "region": "eu-west-1", "audit-log": "x", "output": "json", "jq": ".result"}, Result: "ok", ExitCode: exit(0), DurationMS: ms(1249),
				Actions: []Action{{What: "update-continuous-backups", Target: "dev-a-b"}, {What: "update-continuous-backups", Target: "dev-a-b"}, {What: "tag"}}, Counts: map[string]int64{"repaired": 1, "checked": 3}},
			"pitr repair --table dev-a-b --yes", "ok (exit 0, 1.2s)", "update-continuous-backups ×2 dev-a-b; tag; checked 3, repaired 1"},
		{"failed with an error", Run{Command: "redrive", Result: "error", ExitCode: exit(2), Error: "bad --max"},
			"redrive", "error (exit 2): bad --max", "nothing"},
		{"no exit code nor duration", Run{Command: "check", Result: "ok", Findings: []string{"DDB-PITR-01", "DDB-MON-01"}},
			"check", "ok", "findings: DDB-PITR-01, DDB-MON-01"},
		{"dry run", Run{Command: "repair", DryRun: true, Result: "ok", Counts: map[string]int64{"missing": 2}},
			"repair", "ok", "nothing (dry run); missing 2"},
		{"interrupted with a plan", Run{Command: "migrate", Result: ResultInterrupted, Plan: &Plan{Counts: map[string]int64{"changed": 3}}},
			"migrate", "INTERRUPTED (started, never finished: killed or crashed)", "planned: changed 3"},
		{"interrupted without a plan", Run{Command: "migrate", Result: ResultInterrupted},
			"migrate", "INTERRUPTED (started, never finished: killed or crashed)", "unknown: it may have written before it stopped"},
		{"a runbook run with its decision and a changed parameter (as read back from the log)", Run{Command: "runbook run", Result: ResultRefused, ExitCode: exit(2),
			Actions: []Action{{What: ActRunbookChangeParam, Target: "restore_point", Detail: map[string]any{"old": "--latest", "new": "--time T"}},
				{What: ActRunbookDecide, Target: "path", Detail: map[string]any{"choice": "repair", "how": "--decide"}}}},
			"runbook run", "refused (exit 2)", "runbook.change-param restore_point: --latest -> --time T; runbook.decide path: repair (--decide)"},
		{"a decision as recorded (strings)", Run{Command: "runbook run", Result: "ok", Actions: []Action{{What: ActRunbookDecide, Target: "path", Detail: map[string]string{"choice": "cutover", "how": "default"}}}},
			"runbook run", "ok", "runbook.decide path: cutover (default)"},
		{"running", Run{Command: "migrate", Result: ResultRunning, Plan: &Plan{Counts: map[string]int64{}}},
			"migrate", "RUNNING (started, not finished yet; its process is alive)", "nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.run.CommandLine(); got != c.command {
				t.Errorf("CommandLine() = %q, want %q", got, c.command)
			}
			if got := c.run.Outcome(); got != c.outcome {
				t.Errorf("Outcome() = %q, want %q", got, c.outcome)
			}
			if got := c.run.Changed(); got != c.diff {
				t.Errorf("Changed() = %q, want %q", got, c.diff)
			}
		})
	}
}
