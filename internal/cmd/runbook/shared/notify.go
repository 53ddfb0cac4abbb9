package shared

import (
	"context"
	"fmt"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/notify"
	"github.com/dynops/dynops/internal/runbook"
	"github.com/dynops/dynops/runbooks"
)

// Notifier builds the notifier of a run's settings (its SNS topic, its
// webhook, and recordARN's Incident Manager timeline). A target that
// cannot be set up (its secret unreadable) is said, audited and left out:
// notifications never stop a command. Nil when nothing is configured.
func Notifier(ctx context.Context, f *factory.Factory, set runbook.RunSettings, recordARN string) *notify.Notifier {
	n := &notify.Notifier{Failed: func(sink string, e notify.Event, err error) {
		fmt.Fprintf(f.IOStreams.ErrOut, "   notify: %s: %v (the run goes on)\n", sink, err)
		f.Audit.Act(audit.ActRunbookNotifyFailed, sink, map[string]string{"event": e.Type, "step": e.Step, "error": err.Error()})
	}}
	if set.SNSTopicARN.Value == "" && set.Webhook.Value == "" && recordARN == "" {
		return nil
	}
	clients, err := f.AWS(ctx)
	if err != nil {
		n.Failed("notifications", notify.Event{Type: "setup"}, err)
		return nil
	}
	if arn := set.SNSTopicARN.Value; arn != "" {
		n.Sinks = append(n.Sinks, notify.Topic{SNS: clients.SNS(), ARN: arn})
	}
	if ref := set.Webhook.Value; ref != "" {
		url, err := notify.ResolveSecret(ctx, ref, clients.SSM(), clients.SecretsManager())
		if err != nil {
			n.Failed("webhook "+ref, notify.Event{Type: "setup"}, err)
		} else {
			n.Sinks = append(n.Sinks, notify.Webhook{URL: url, Ref: ref})
		}
	}
	if recordARN != "" {
		endpoint, err := awsconfig.ServiceEndpoint("SSM_INCIDENTS", "", "", f.Flags.AllowInsecureEndpoint)
		if err != nil {
			n.Failed("Incident Manager record "+recordARN, notify.Event{Type: "setup"}, err)
		} else {
			n.Sinks = append(n.Sinks, notify.IncidentTimeline{API: clients.Incidents(endpoint), RecordARN: recordARN})
		}
	}
	return n
}

// NotifyDecision tells the notification targets of the run's env (the
// config file's section of the env of its targets) an approval or a
// rejection just recorded, so that the run's holder hears it without
// polling. Without a config section for that env nobody is told; a config
// that cannot be read is said and the decision stands.
func NotifyDecision(ctx context.Context, f *factory.Factory, st *runbook.State, kind, step, text string) {
	path, envs, err := EnvConfigs(f)
	if err != nil {
		fmt.Fprintf(f.IOStreams.ErrOut, "   notify: not sent: %v\n", err)
		return
	}
	rb, err := runbook.Find(runbooks.FS, st.Runbook)
	if err != nil {
		return
	}
	names := runbook.TargetEnvs(rb, st.Params)
	if len(names) != 1 {
		return
	}
	cfg, ok := envs[names[0]]
	if !ok {
		return
	}
	set := runbook.ResolveSettings(runbook.Setting[string]{Value: names[0], From: "the run's targets"}, runbook.FlagSettings{}, path, &cfg, rb.Name)
	n := Notifier(ctx, f, set, "")
	n.Notify(ctx, notify.Event{Type: kind, Incident: st.Incident, Runbook: st.Runbook, Step: step, Text: text, At: f.Now().UTC()})
}
