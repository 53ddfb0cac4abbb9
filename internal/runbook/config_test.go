package runbook

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func parseSection(t *testing.T, body string) (map[string]EnvConfig, error) {
	t.Helper()
	var doc struct {
		Runbook yaml.Node `yaml:"runbook"`
	}
	if err := yaml.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	rb, err := Parse("pitr-restore", "# x\n\n```dynops-params\ntable: the table\n```\n\n```dynops\nstep: status\nrun: dynops pitr status --table {{table}}\n```\n\n```dynops\nstep: restore\nrun: dynops pitr restore --table {{table}}\ndestructive: true\nconfirm: {{table}}\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	return ParseEnvConfigs("/home/u/.config/dynops/config.yaml", &doc.Runbook, []*Runbook{rb})
}

// TestEnvConfigDiscipline: the runbook section refuses what the top of the
// file refuses (TestConfigFileDiscipline): an unknown key at any depth,
// naming the file, where, and the closest key; values no flag would take;
// a step no runbook has; a webhook URL written in the file.
func TestEnvConfigDiscipline(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"typo in an env", "runbook:\n  prod:\n    approval: 1\n", `unknown key "approval" in runbook.prod: did you mean approvals?`},
		{"typo under notify", "runbook:\n  prod:\n    notify:\n      webhok: ssm:/x\n", `unknown key "webhok" in runbook.prod.notify: did you mean webhook?`},
		{"unrelated key", "runbook:\n  prod:\n    colour: red\n", "the keys are state_bucket, approvals, step_approvals, notify and destructive_runs_per_hour"},
		{"approvals out of range", "runbook:\n  prod:\n    approvals: 9\n", "runbook.prod.approvals is 9: use 0 to 5"},
		{"cap below 0", "runbook:\n  prod:\n    destructive_runs_per_hour: -1\n", "destructive_runs_per_hour is -1"},
		{"step of no runbook", "runbook:\n  prod:\n    step_approvals: {pitr-restor: {restore: 2}}\n", `no runbook "pitr-restor"`},
		{"step the runbook lacks", "runbook:\n  prod:\n    step_approvals: {pitr-restore: {restor: 2}}\n", `runbook pitr-restore has no step "restor" (steps: status, restore)`},
		{"webhook URL in the file", "runbook:\n  prod:\n    notify: {webhook: 'https://hooks.example.com/T0/SECRET'}\n", "not the URL itself"},
		{"not an env name", "runbook:\n  prod-eu:\n    approvals: 1\n", `"prod-eu" under runbook is not an env name`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseSection(t, c.body)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "/home/u/.config/dynops/config.yaml") {
				t.Fatalf("err = %v; want one naming the file and %q", err, c.want)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("the error shows the webhook URL: %v", err)
			}
		})
	}
}

// TestSettingsFlagOverConfigOverDefault: each setting says where it came
// from; a flag given wins over the env's section, which wins over the
// default; step approvals apply to the run's runbook unless --approvals is given.
func TestSettingsFlagOverConfigOverDefault(t *testing.T) {
	envs, err := parseSection(t, "runbook:\n  prod:\n    state_bucket: oncall/runs\n    approvals: 1\n    step_approvals: {pitr-restore: {restore: 2}}\n    notify: {webhook: 'ssm:/oncall/hook'}\n    destructive_runs_per_hour: 3\n")
	if err != nil {
		t.Fatal(err)
	}
	prod := envs["prod"]
	env := Setting[string]{"prod", "flag --env"}
	path := "/home/u/.config/dynops/config.yaml"
	s := ResolveSettings(env, FlagSettings{Cap: 10, Given: func(f string) bool { return f == "destructive-runs-per-hour" }}, path, &prod, "pitr-restore")
	cfg := func(k string) string { return "config " + path + ": runbook.prod." + k }
	for _, c := range []struct {
		name       string
		got, want  any
		from, wfrm string
	}{
		{"state bucket", s.StateBucket.Value, "oncall/runs", s.StateBucket.From, cfg("state_bucket")},
		{"approvals", s.Approvals.Value, 1, s.Approvals.From, cfg("approvals")},
		{"step approvals", s.StepApprovals.Value["restore"], 2, s.StepApprovals.From, cfg("step_approvals.pitr-restore")},
		{"webhook", s.Webhook.Value, "ssm:/oncall/hook", s.Webhook.From, cfg("notify.webhook")},
		{"sns", s.SNSTopicARN.Value, "", s.SNSTopicARN.From, "default"},
		{"cap", s.Cap.Value, 10, s.Cap.From, "flag --destructive-runs-per-hour"},
	} {
		if c.got != c.want || c.from != c.wfrm {
			t.Errorf("%s = %v from %q; want %v from %q", c.name, c.got, c.from, c.want, c.wfrm)
		}
	}
	s = ResolveSettings(env, FlagSettings{Approvals: 0, Given: func(f string) bool { return f == "approvals" }}, path, &prod, "pitr-restore")
	if s.Approvals.Value != 0 || s.Approvals.From != "flag --approvals" || len(s.StepApprovals.Value) != 0 {
		t.Errorf("--approvals 0 given: %+v, step approvals %v; want 0 from the flag, none per step", s.Approvals, s.StepApprovals)
	}
	var b strings.Builder
	s.Print(&b)
	if !strings.Contains(b.String(), "flag --approvals") || !strings.Contains(b.String(), cfg("state_bucket")) {
		t.Errorf("printed:\n%s", b.String())
	}
}
