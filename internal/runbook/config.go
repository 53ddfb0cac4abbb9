package runbook

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dynops/dynops/internal/protect"
)

// EnvConfig is one env's part of the config file's runbook section:
//
//	runbook:
//	  prod:
//	    state_bucket: acme-oncall/dynops/runbooks
//	    approvals: 1
//	    step_approvals: {pitr-restore: {restore: 2}}
//	    notify:
//	      sns_topic_arn: arn:aws:sns:eu-west-1:123456789012:oncall
//	      webhook: ssm:/dynops/oncall/webhook
//	    destructive_runs_per_hour: 3
//
// Nil pointers are settings the file does not give (the flag or the default
// applies).
type EnvConfig struct {
	StateBucket   *string                   `yaml:"state_bucket"`
	Approvals     *int                      `yaml:"approvals"`
	StepApprovals map[string]map[string]int `yaml:"step_approvals"`
	Notify        NotifyConfig              `yaml:"notify"`
	// DestructiveRunsPerHour caps the destructive steps on protected
	// targets run in the env in any hour, across the team (0 or absent: no cap).
	DestructiveRunsPerHour *int `yaml:"destructive_runs_per_hour"`
}

// NotifyConfig are an env's notification targets.
type NotifyConfig struct {
	SNSTopicARN *string `yaml:"sns_topic_arn"`
	// Webhook is where the webhook URL is kept (ssm:/path or
	// secretsmanager:name), never the URL itself.
	Webhook *string `yaml:"webhook"`
}

// Keys of the runbook section, for the one refusal of unknown keys.
var (
	envConfigKeys    = []string{"state_bucket", "approvals", "step_approvals", "notify", "destructive_runs_per_hour"}
	notifyConfigKeys = []string{"sns_topic_arn", "webhook"}
)

const unknownWhy = "a runbook setting dynops does not read would leave the run other than you meant"

// ParseEnvConfigs parses the config file's runbook section (path names the
// file in errors): env -> settings. Unknown keys are refused as at the top
// of the file; a step_approvals entry must name a step of a runbook in
// books.
func ParseEnvConfigs(path string, node *yaml.Node, books []*Runbook) (map[string]EnvConfig, error) {
	out := map[string]EnvConfig{}
	if node == nil || node.Kind == 0 {
		return out, nil
	}
	if node.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the dynops config %s: runbook must map env names to their settings (e.g. runbook: {prod: {approvals: 1}})", path)
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		env, body := node.Content[i].Value, node.Content[i+1]
		where := "runbook." + env
		if strings.ContainsAny(env, "-_./: ,") || env == "" {
			return nil, fmt.Errorf("the dynops config %s: %q under runbook is not an env name (one word, e.g. prod or stg)", path, env)
		}
		if err := checkKeys(path, where, body, envConfigKeys); err != nil {
			return nil, err
		}
		var c EnvConfig
		if err := body.Decode(&c); err != nil {
			return nil, fmt.Errorf("parsing the dynops config %s: %s: %w", path, where, err)
		}
		for j := 0; j+1 < len(body.Content); j += 2 {
			if body.Content[j].Value == "notify" {
				if err := checkKeys(path, where+".notify", body.Content[j+1], notifyConfigKeys); err != nil {
					return nil, err
				}
			}
		}
		if err := c.check(path, where, books); err != nil {
			return nil, err
		}
		out[env] = c
	}
	return out, nil
}

func checkKeys(path, where string, node *yaml.Node, known []string) error {
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("the dynops config %s: %s must be a map of settings (%s)", path, where, strings.Join(known, ", "))
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if err := protect.UnknownKey(path, where, node.Content[i].Value, known, unknownWhy); err != nil {
			return err
		}
	}
	return nil
}

// check refuses values no flag would take: the same ranges as the flags.
func (c EnvConfig) check(path, where string, books []*Runbook) error {
	bad := func(key string, v int, max int) error {
		return fmt.Errorf("the dynops config %s: %s.%s is %d: use 0 to %d", path, where, key, v, max)
	}
	if c.Approvals != nil && (*c.Approvals < 0 || *c.Approvals > MaxApprovals) {
		return bad("approvals", *c.Approvals, MaxApprovals)
	}
	if c.DestructiveRunsPerHour != nil && (*c.DestructiveRunsPerHour < 0 || *c.DestructiveRunsPerHour > MaxDestructiveRunsPerHour) {
		return bad("destructive_runs_per_hour", *c.DestructiveRunsPerHour, MaxDestructiveRunsPerHour)
	}
	if c.StateBucket != nil {
		if _, _, err := ParseStateBucket(*c.StateBucket); err != nil {
			return fmt.Errorf("the dynops config %s: %s.state_bucket: %w", path, where, err)
		}
	}
	if c.Notify.Webhook != nil {
		if err := CheckSecretRef(*c.Notify.Webhook); err != nil {
			return fmt.Errorf("the dynops config %s: %s.notify.webhook: %w", path, where, err)
		}
	}
	for name, steps := range c.StepApprovals {
		i := slices.IndexFunc(books, func(b *Runbook) bool { return b.Name == name })
		if i < 0 {
			var names []string
			for _, b := range books {
				names = append(names, b.Name)
			}
			return fmt.Errorf("the dynops config %s: %s.step_approvals: no runbook %q (runbooks: %s)", path, where, name, strings.Join(names, ", "))
		}
		for step, n := range steps {
			if !books[i].HasStep(step) {
				return fmt.Errorf("the dynops config %s: %s.step_approvals.%s: runbook %s has no step %q (steps: %s)", path, where, name, name, step, strings.Join(books[i].StepIDs(), ", "))
			}
			if n < 0 || n > MaxApprovals {
				return bad("step_approvals."+name+"."+step, n, MaxApprovals)
			}
		}
	}
	return nil
}

// CheckSecretRef accepts where a secret is kept, ssm:/path (an SSM
// SecureString parameter) or secretsmanager:name, and refuses anything
// else (a URL written in the file would be a secret in plain text).
func CheckSecretRef(ref string) error {
	switch {
	case strings.HasPrefix(ref, "ssm:/") && len(ref) > len("ssm:/"):
		return nil
	case strings.HasPrefix(ref, "secretsmanager:") && len(ref) > len("secretsmanager:"):
		return nil
	}
	return fmt.Errorf("give where the webhook URL is kept, ssm:/PATH (an SSM SecureString parameter) or secretsmanager:NAME, not the URL itself (it is a secret: anyone with it can post to the channel)")
}

// Limits of the run's settings, shared by the flags and the config file.
const (
	MaxApprovals              = 5
	MaxDestructiveRunsPerHour = 1000
)
