package runbook

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dynops/dynops/internal/guideline"
)

// Setting is one run setting and where it came from: "flag --approvals",
// "config PATH: runbook.prod.approvals" or "default".
type Setting[T any] struct {
	Value T
	From  string
}

// RunSettings are a run's team settings, each from its flag, else the
// config file's section of the run's env, else the default.
type RunSettings struct {
	Env           Setting[string]
	StateBucket   Setting[string]
	Approvals     Setting[int]
	StepApprovals Setting[map[string]int] // this runbook's steps
	SNSTopicARN   Setting[string]
	Webhook       Setting[string] // where the URL is kept (ssm:/... or secretsmanager:...)
	Cap           Setting[int]    // destructive runs per hour, 0: none
}

// FlagSettings are the run's flags that a config file may set too; Given
// reports whether a flag was on the command line.
type FlagSettings struct {
	StateBucket string
	Approvals   int
	SNSTopicARN string
	Webhook     string
	Cap         int
	Given       func(flag string) bool
}

// ResolveSettings picks each setting: the flag when given, else the env's
// config section (cfg nil: none), else the default. path names the config
// file; runbook is the run's runbook (its step_approvals).
func ResolveSettings(env Setting[string], flags FlagSettings, path string, cfg *EnvConfig, runbook string) RunSettings {
	given := flags.Given
	if given == nil {
		given = func(string) bool { return false }
	}
	if cfg == nil {
		cfg = &EnvConfig{}
	}
	from := func(key string) string { return fmt.Sprintf("config %s: runbook.%s.%s", path, env.Value, key) }
	str := func(flag, flagVal string, cfgVal *string, key string) Setting[string] {
		return pick(given(flag), flag, flagVal, cfgVal, from(key))
	}
	num := func(flag string, flagVal int, cfgVal *int, key string) Setting[int] {
		return pick(given(flag), flag, flagVal, cfgVal, from(key))
	}
	s := RunSettings{
		Env:         env,
		StateBucket: str("state-bucket", flags.StateBucket, cfg.StateBucket, "state_bucket"),
		Approvals:   num("approvals", flags.Approvals, cfg.Approvals, "approvals"),
		SNSTopicARN: str("notify-sns-topic", flags.SNSTopicARN, cfg.Notify.SNSTopicARN, "notify.sns_topic_arn"),
		Webhook:     str("notify-webhook", flags.Webhook, cfg.Notify.Webhook, "notify.webhook"),
		Cap:         num("destructive-runs-per-hour", flags.Cap, cfg.DestructiveRunsPerHour, "destructive_runs_per_hour"),
	}
	s.StepApprovals = Setting[map[string]int]{From: "default"}
	if steps := cfg.StepApprovals[runbook]; len(steps) > 0 && !given("approvals") {
		s.StepApprovals = Setting[map[string]int]{steps, from("step_approvals." + runbook)}
	}
	return s
}

// pick is the flag's value when given, else the config's when set, else
// the flag's default.
func pick[T any](given bool, flag string, flagVal T, cfgVal *T, from string) Setting[T] {
	switch {
	case given:
		return Setting[T]{flagVal, "flag --" + flag}
	case cfgVal != nil:
		return Setting[T]{*cfgVal, from}
	}
	return Setting[T]{flagVal, "default"}
}

// AllDefault reports whether no setting came from a flag or the config file.
func (s RunSettings) AllDefault() bool {
	for _, from := range []string{s.StateBucket.From, s.Approvals.From, s.StepApprovals.From, s.SNSTopicARN.From, s.Webhook.From, s.Cap.From} {
		if from != "default" {
			return false
		}
	}
	return true
}

// Print writes the settings and where each came from, one a line.
func (s RunSettings) Print(w io.Writer) {
	env := s.Env.Value
	if env == "" {
		env = "-"
	}
	fmt.Fprintf(w, "Settings of env %s (%s):\n", env, s.Env.From)
	row := func(name, v, from string) {
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(w, "  %-26s %-40s %s\n", name, v, from)
	}
	row("state bucket", s.StateBucket.Value, s.StateBucket.From)
	row("approvals", strconv.Itoa(s.Approvals.Value), s.Approvals.From)
	if len(s.StepApprovals.Value) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(s.StepApprovals.Value)) {
			parts = append(parts, fmt.Sprintf("%s=%d", k, s.StepApprovals.Value[k]))
		}
		row("step approvals", strings.Join(parts, ","), s.StepApprovals.From)
	}
	row("notify SNS topic", s.SNSTopicARN.Value, s.SNSTopicARN.From)
	row("notify webhook", s.Webhook.Value, s.Webhook.From)
	capv := "none"
	if s.Cap.Value > 0 {
		capv = strconv.Itoa(s.Cap.Value)
	}
	row("destructive runs per hour", capv, s.Cap.From)
}

// TargetEnvs are the envs (DDB-NAME-01's first word) of the protected
// targets rb's steps name with params, sorted; targets whose parameters
// are not given yet are left out.
func TargetEnvs(rb *Runbook, params map[string]string) []string {
	seen := map[string]bool{}
	for _, st := range rb.Steps {
		for _, c := range st.Confirm {
			v, err := Expand(c, params)
			if err != nil {
				continue
			}
			for _, t := range strings.Split(v, ",") {
				if e := guideline.EnvOf(strings.TrimSpace(t)); e != "" {
					seen[e] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
