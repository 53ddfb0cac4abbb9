package run

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/runbook/shared"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/runbook"
)

// settings resolves the run's team settings (flag, else the config file's
// section of the run's env, else the default), prints where each came
// from when any is not the default, and refuses combinations that cannot
// work (exit 2, nothing run).
func settings(f *factory.Factory, opts *Options, rb *runbook.Runbook, params map[string]string) (runbook.RunSettings, error) {
	path, envs, err := shared.EnvConfigs(f)
	if err != nil {
		return runbook.RunSettings{}, err
	}
	env := runbook.Setting[string]{Value: opts.Env, From: "flag --env"}
	if opts.Env == "" {
		targets := runbook.TargetEnvs(rb, params)
		switch {
		case len(targets) == 1:
			env = runbook.Setting[string]{Value: targets[0], From: "the env of the targets given with --param"}
		case len(envs) > 0 && len(targets) > 1:
			return runbook.RunSettings{}, factory.UsageErrorf("runbook %s: its targets are in envs %s, and %s has runbook settings per env: give --env ENV; nothing was run", rb.Name, strings.Join(targets, ", "), path)
		case len(envs) > 0:
			return runbook.RunSettings{}, factory.UsageErrorf("runbook %s: no --param names a target, so dynops cannot tell which env's runbook settings of %s apply: give --env ENV (one of %s); nothing was run", rb.Name, path, strings.Join(slices.Sorted(maps.Keys(envs)), ", "))
		default:
			env = runbook.Setting[string]{From: "none: no target given with --param, no --env"}
		}
	}
	var cfg *runbook.EnvConfig
	if c, ok := envs[env.Value]; ok {
		cfg = &c
	}
	given := opts.Given
	if given == nil {
		given = func(string) bool { return false }
	}
	set := runbook.ResolveSettings(env, runbook.FlagSettings{StateBucket: opts.StateBucket, Approvals: opts.Approvals,
		SNSTopicARN: opts.NotifySNSTopic, Webhook: opts.NotifyWebhook, Cap: opts.DestructiveRunsPerHour, Given: given}, path, cfg, rb.Name)
	if !set.AllDefault() {
		set.Print(f.IOStreams.ErrOut)
	}
	if set.Webhook.Value != "" {
		if err := runbook.CheckSecretRef(set.Webhook.Value); err != nil {
			return set, factory.UsageErrorf("--notify-webhook: %w; nothing was run", err)
		}
	}
	needsShared := func(what, from string) error {
		return factory.UsageErrorf("%s (%s) needs the team's shared run state (--state-bucket BUCKET, or state_bucket in the config file's runbook.%s): "+
			"approvers record their approvals there, and the cap counts the whole team's runs there, which a local file cannot; nothing was run", what, from, envOr(env.Value))
	}
	if set.StateBucket.Value == "" {
		if set.Approvals.Value > 0 {
			return set, needsShared(fmt.Sprintf("%d approval(s)", set.Approvals.Value), set.Approvals.From)
		}
		for _, n := range set.StepApprovals.Value {
			if n > 0 {
				return set, needsShared("step approvals", set.StepApprovals.From)
			}
		}
		if set.Cap.Value > 0 {
			return set, needsShared(fmt.Sprintf("a cap of %d destructive run(s) per hour", set.Cap.Value), set.Cap.From)
		}
	}
	if set.Cap.Value > 0 && env.Value == "" {
		return set, factory.UsageErrorf("a cap of destructive runs per hour (%s) is per env: give --env ENV or a --param naming the targets; nothing was run", set.Cap.From)
	}
	return set, nil
}

// breakGlass checks that the caller may break glass (the break-glass role,
// protect.IsBreakGlass, as guard.AllowException decides for a flag's
// exception) and says so; anyone else is refused (exit 2, nothing run).
func breakGlass(ctx context.Context, f *factory.Factory, reason string) (string, error) {
	if strings.TrimSpace(reason) == "" {
		return "", factory.UsageErrorf("--break-glass needs a reason (e.g. --break-glass 'INC-1234: prod down, approver unreachable'); nothing was run")
	}
	caller, err := f.CallerArn(ctx)
	if err != nil {
		return "", factory.UsageErrorf("--break-glass: reading who you are: %v; only the %s role may break glass; nothing was run", err, protect.BreakGlassRole)
	}
	if !protect.IsBreakGlass(caller) {
		return "", factory.UsageErrorf("--break-glass is refused: only a session of the %s role may skip approvals and the cap, and the caller is %s; nothing was run; assume the break-glass role (with MFA), or drop --break-glass",
			protect.BreakGlassRole, caller)
	}
	fmt.Fprintf(f.IOStreams.ErrOut, "Break-glass as %s: %s (approvals and the cap are skipped, each skip audited and notified).\n", caller, reason)
	return caller, nil
}

func envOr(s string) string {
	if s == "" {
		return "ENV"
	}
	return s
}
