package runbook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/notify"
	"github.com/dynops/dynops/test/helpers/harness"
)

// webhook is a local Slack-compatible webhook: it keeps the text of each
// POST, in order. Its URL carries a secret path, as Slack's do.
type webhook struct {
	URL   string
	mu    sync.Mutex
	texts []string
}

func newWebhook(t *testing.T) *webhook {
	t.Helper()
	h := &webhook{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Text string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		h.mu.Lock()
		h.texts = append(h.texts, body.Text)
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL + "/services/T0/B0/SECRET" + harness.UniqueID()
	return h
}

var lineType = regexp.MustCompile(`^\[[^\]]+\] [^ ]+(?: / ([^ ]+))? \(([a-z-]+)\): `)

// events are the webhook's posts as "type step".
func (h *webhook) events(t *testing.T) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, s := range h.texts {
		m := lineType.FindStringSubmatch(s)
		require.NotNil(t, m, "not an event line: %q", s)
		out = append(out, m[2]+" "+m[1])
	}
	return out
}

// webhookSecret stores the webhook's URL as an SSM SecureString and
// returns its reference (ssm:/...).
func webhookSecret(t *testing.T, url string) string {
	t.Helper()
	name := "/dynops/" + harness.UniqueID() + "/webhook"
	_, err := ssm.NewFromConfig(target.AWSConfig(t)).PutParameter(context.Background(), &ssm.PutParameterInput{Name: &name, Value: &url, Type: ssmtypes.ParameterTypeSecureString})
	require.NoError(t, err)
	return "ssm:" + name
}

// topicToQueue is an SNS topic with an SQS queue subscribed to it.
func topicToQueue(t *testing.T) (topicARN, queueURL string) {
	t.Helper()
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	id := harness.UniqueID()
	topic, err := sns.NewFromConfig(cfg).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("oncall-" + id)})
	require.NoError(t, err)
	q := sqs.NewFromConfig(cfg)
	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("oncall-" + id)})
	require.NoError(t, err)
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: queue.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	require.NoError(t, err)
	_, err = sns.NewFromConfig(cfg).Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(attrs.Attributes["QueueArn"])})
	require.NoError(t, err)
	return aws.ToString(topic.TopicArn), aws.ToString(queue.QueueUrl)
}

// topicEvents reads the queue's notifications back: "type step" in the
// order the run made them (their time), with the event_type attribute.
func topicEvents(t *testing.T, queueURL string) []string {
	t.Helper()
	q := sqs.NewFromConfig(target.AWSConfig(t))
	var evs []notify.Event
	for empty := 0; empty < 2; {
		out, err := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &queueURL, MaxNumberOfMessages: 10})
		require.NoError(t, err)
		if len(out.Messages) == 0 {
			empty++
			continue
		}
		for _, m := range out.Messages {
			var env struct {
				Message           string
				MessageAttributes map[string]struct{ Value string }
			}
			require.NoError(t, json.Unmarshal([]byte(aws.ToString(m.Body)), &env))
			var e notify.Event
			require.NoError(t, json.Unmarshal([]byte(env.Message), &e))
			assert.Equal(t, e.Type, env.MessageAttributes["event_type"].Value, "the event type is a message attribute")
			evs = append(evs, e)
			_, _ = q.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &queueURL, ReceiptHandle: m.ReceiptHandle})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At.Before(evs[j].At) })
	var labels []string
	for _, e := range evs {
		labels = append(labels, e.Type+" "+e.Step)
	}
	return labels
}

// timelineEvents are the events of the incident's audit timeline, as
// "type step": each step that ran for real (its start, then its end), the
// decisions, approval events and break-glass skips of the runbook run, and
// the approvals and rejections of other callers, in time order.
func timelineEvents(t *testing.T, log, incident string) []string {
	t.Helper()
	type at struct {
		t      time.Time
		labels []string
	}
	var all []at
	acts := map[string]string{audit.ActRunbookDecide: notify.Decided, audit.ActRunbookApprovalRequested: notify.ApprovalWaiting,
		audit.ActRunbookApprovalUsed: notify.ApprovalUsed, audit.ActRunbookApprovalRejected: notify.ApprovalRejected,
		audit.ActRunbookApprovalTimedOut: notify.ApprovalTimedOut, audit.ActRunbookBreakGlass: notify.BreakGlass,
		audit.ActRunbookApprove: notify.Approved, audit.ActRunbookReject: notify.Rejected}
	for _, r := range runs(t, log) {
		if r.Incident != incident {
			continue
		}
		if r.Step != "" && r.ParentRun != "" && !r.DryRun {
			end := notify.StepFinished // ok, or findings (check's exit 1, which the step allows)
			if r.Result == audit.ResultFailed || r.Result == audit.ResultRefused || r.Interrupted() {
				end = notify.StepFailed
			}
			all = append(all, at{r.Time, []string{notify.StepStarted + " " + r.Step, end + " " + r.Step}})
		}
		for _, a := range r.Actions { // the runbook run's, and those of `runbook approve` and `reject`
			if kind, ok := acts[a.What]; ok {
				all = append(all, at{a.Time, []string{kind + " " + a.Target}})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].t.Before(all[j].t) })
	var out []string
	for _, a := range all {
		out = append(out, a.labels...)
	}
	return out
}

// configFile writes a dynops config file (the user's, 0600).
func configFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// TestRunbookNotificationsMatchTheTimeline: a runbook run whose env's
// config names an SNS topic and a webhook (its URL an SSM SecureString)
// notifies both of each step's start and end and of its decision: the
// events of the local webhook and of the queue subscribed to the topic
// are the timeline's, in its order. The URL is nowhere: not printed, not
// in the audit log, not in the shared state.
func TestRunbookNotificationsMatchTheTimeline(t *testing.T) {
	_, table := prodTable(t)
	bucket, s3c := stateBucket(t)
	hook := newWebhook(t)
	ref := webhookSecret(t, hook.URL)
	topic, queue := topicToQueue(t)
	cfg := configFile(t, fmt.Sprintf("runbook:\n  prod:\n    state_bucket: %s\n    notify:\n      sns_topic_arn: %s\n      webhook: %s\n", bucket, topic, ref))
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	out, errOut, code := runEnv(t, log, []string{"DYNOPS_CONFIG=" + cfg}, "runbook", "run", "throttling", "--incident", incident, "--yes", "--env", "prod",
		"--param", "table="+table, "--param", `key={"user_id": "user_00001"}`, "--decide", "cause=hot-key")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "config "+cfg+": runbook.prod.state_bucket", "the run says where each setting came from")
	assert.Contains(t, errOut, "config "+cfg+": runbook.prod.notify.webhook")
	assert.NotContains(t, errOut, "notify:", "every notification was delivered")

	want := timelineEvents(t, log, incident)
	require.Contains(t, want, notify.Decided+" cause")
	require.Contains(t, want, notify.StepFinished+" hot-partition")
	assert.Equal(t, want, hook.events(t), "the webhook's events are the timeline's")
	assert.Equal(t, want, topicEvents(t, queue), "the topic's events are the timeline's")

	secret := hook.URL[strings.Index(hook.URL, "/services/"):]
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), secret, "the webhook URL is not in the audit log")
	st, err := s3c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("dynops/runbooks/" + incident + "/throttling.state.json")})
	require.NoError(t, err)
	state, err := io.ReadAll(st.Body)
	require.NoError(t, err)
	require.Contains(t, string(state), `"done"`)
	assert.NotContains(t, string(state), secret, "the webhook URL is not in the shared state")
	assert.NotContains(t, out+errOut, secret, "the webhook URL is not printed")
}

// breakGlassRole is a session of the dynops-break-glass role (AssumeRole
// on the emulator, whose GetCallerIdentity answers the assumed-role ARN).
func breakGlassRole(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	cfg := target.AWSConfig(t)
	name := "prod-" + harness.UniqueID() + "-dynamodb-dynops-break-glass"
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:root"},"Action":"sts:AssumeRole"}]}`
	role, err := iam.NewFromConfig(cfg).CreateRole(ctx, &iam.CreateRoleInput{RoleName: &name, AssumeRolePolicyDocument: &trust})
	require.NoError(t, err)
	out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: role.Role.Arn, RoleSessionName: aws.String("carol")})
	require.NoError(t, err)
	c := out.Credentials
	return []string{"AWS_ACCESS_KEY_ID=" + aws.ToString(c.AccessKeyId), "AWS_SECRET_ACCESS_KEY=" + aws.ToString(c.SecretAccessKey), "AWS_SESSION_TOKEN=" + aws.ToString(c.SessionToken)}
}

// breakGlassActs are the runbook.break-glass actions of the log: step -> what was skipped and why.
func breakGlassActs(t *testing.T, log, incident string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range runs(t, log) {
		for _, a := range r.Actions {
			if a.What == audit.ActRunbookBreakGlass && r.Incident == incident {
				d, _ := a.Detail.(map[string]any)
				out = append(out, map[string]any{"step": a.Target, "skipped": d["skipped"], "reason": d["reason"]})
			}
		}
	}
	return out
}

// TestRunbookDestructiveRunCapAcrossEngineers: env prod allows one
// destructive run on protected targets per hour (config file). Bob's
// restore takes it; Alice's restore of another incident stops at the step
// with exit 2, naming the cap, where it is set and Bob's run, nothing
// restored; the break-glass role lifts the cap for her incident, recorded
// with its reason in the audit and notified.
func TestRunbookDestructiveRunCapAcrossEngineers(t *testing.T) {
	bob, alice := iamUser(t, "bob"), iamUser(t, "alice")
	_, table := prodTable(t)
	bucket, _ := stateBucket(t)
	hook := newWebhook(t)
	// The cap's slots live under the bucket's prefix per env: a prefix of
	// this test's own keeps other tests' prod runs out of its count.
	cfg := configFile(t, fmt.Sprintf("runbook:\n  prod:\n    state_bucket: %s/cap-test\n    destructive_runs_per_hour: 1\n    notify: {webhook: '%s'}\n", bucket, webhookSecret(t, hook.URL)))
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	restore := func(env []string, incident string, extra ...string) (string, int) {
		args := append([]string{"runbook", "run", "pitr-restore", "--incident", incident, "--param", "table=" + table,
			"--param", "restore_point=" + restorePoint(), "--yes", "--confirm", table, "--through", "restore"}, extra...)
		_, errOut, code := runEnv(t, log, append([]string{"DYNOPS_CONFIG=" + cfg}, env...), args...)
		return errOut, code
	}
	first, second := "INC-A"+harness.UniqueID(), "INC-B"+harness.UniqueID()
	errOut, code := restore(bob.env(), first)
	require.Equal(t, exitcode.Stopped, code, errOut) // --through restore
	assert.Contains(t, errOut, "the env of the targets given with --param", "the env comes from the table's name")
	assert.Contains(t, errOut, "config "+cfg+": runbook.prod.destructive_runs_per_hour")
	assert.Equal(t, 1, realRuns(t, log, "restore"))

	errOut, code = restore(alice.env(), second)
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "env prod allows 1 destructive run(s) on protected targets per hour (config "+cfg+": runbook.prod.destructive_runs_per_hour)")
	assert.Contains(t, errOut, first+"/restore by "+bob.ARN)
	assert.Contains(t, errOut, "--break-glass REASON")
	assert.Equal(t, 1, realRuns(t, log, "restore"), "nothing more restored")

	errOut, code = restore(breakGlassRole(t), second, "--break-glass", second+": customers down, cap reached")
	require.Equal(t, exitcode.Stopped, code, errOut)
	assert.Contains(t, errOut, "break-glass: the cap of 1 destructive run(s) per hour in prod lifted")
	assert.Equal(t, 2, realRuns(t, log, "restore"), "the break-glass restore ran")
	assert.Equal(t, []map[string]any{{"step": "restore", "skipped": "cap", "reason": second + ": customers down, cap reached"}}, breakGlassActs(t, log, second))
	assert.Contains(t, hook.events(t), notify.BreakGlass+" restore")
	assert.Contains(t, hook.events(t), notify.CapReached+" restore", "the refusal was notified too")
}

// TestRunbookBreakGlassSkipsTheApproval: env prod needs one approver
// (config file): alice's run waits for one (notified). --break-glass by
// her, not the break-glass role, is refused (exit 2, nothing run); as the
// role the same run restores without the approval, the waiting request
// dropped, the skip in the audit and the incident's timeline with its
// reason, and every event notified as the timeline has it.
func TestRunbookBreakGlassSkipsTheApproval(t *testing.T) {
	alice := iamUser(t, "alice")
	_, table := prodTable(t)
	bucket, _ := stateBucket(t)
	hook := newWebhook(t)
	cfg := configFile(t, fmt.Sprintf("runbook:\n  prod:\n    state_bucket: %s\n    approvals: 1\n    notify: {webhook: '%s'}\n", bucket, webhookSecret(t, hook.URL)))
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	reason := "approver unreachable, writes failing"
	args := []string{"runbook", "run", "pitr-restore", "--incident", incident, "--param", "table=" + table,
		"--param", "restore_point=" + restorePoint(), "--yes", "--confirm", table, "--through", "restore", "--break-glass", reason}

	_, errOut, code := runEnv(t, log, append([]string{"DYNOPS_CONFIG=" + cfg}, alice.env()...), args[:len(args)-2]...)
	require.Equal(t, exitcode.Stopped, code, errOut)
	assert.Contains(t, errOut, "needs 1 approval(s) by another caller", "without break-glass the restore waits")
	steps := stepRuns(t, log)
	status := func() string {
		out, errOut, code := target.Dynops(t, log, "runbook", "status", "--incident", incident, "--state-bucket", bucket, "-o", "json")
		require.Equal(t, 0, code, errOut)
		return out
	}
	require.Contains(t, status(), `"plan_sha256"`, "the request waits in the shared state")

	_, errOut, code = runEnv(t, log, append([]string{"DYNOPS_CONFIG=" + cfg}, alice.env()...), args...)
	require.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "only a session of the dynops-break-glass role may skip approvals and the cap, and the caller is "+alice.ARN)
	assert.Equal(t, steps, stepRuns(t, log), "nothing ran")

	_, errOut, code = runEnv(t, log, append([]string{"DYNOPS_CONFIG=" + cfg}, breakGlassRole(t)...), args...)
	require.Equal(t, exitcode.Stopped, code, errOut) // --through restore
	assert.Contains(t, errOut, "config "+cfg+": runbook.prod.approvals")
	assert.Contains(t, errOut, "break-glass: the approval of 1 other caller(s) skipped ("+reason+")")
	assert.Equal(t, 1, realRuns(t, log, "restore"), "the restore ran without an approval")
	assert.Equal(t, 1, countActs(t, log, audit.ActRunbookApprovalRequested), "only alice's run asked")
	assert.Equal(t, 0, countActs(t, log, audit.ActRunbookApprovalUsed))
	assert.Equal(t, []map[string]any{{"step": "restore", "skipped": "approval", "reason": reason}}, breakGlassActs(t, log, incident))
	assert.NotContains(t, status(), `"plan_sha256"`, "no request is left waiting after break-glass")
	md, errOut, code := target.Dynops(t, log, "audit", "timeline", "--incident", incident)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, md, "runbook.break-glass restore: approval skipped: "+reason, "the timeline shows the skip and its reason")
	assert.Equal(t, timelineEvents(t, log, incident), hook.events(t), "notified as the timeline has it")
	assert.Contains(t, hook.events(t), notify.ApprovalWaiting+" restore")
	assert.Contains(t, hook.events(t), notify.BreakGlass+" restore")
}

// TestRunbookNotificationFailuresDoNotStopTheRun: a topic that does not
// exist fails every Publish: the run still finishes (exit 0), the failure
// is printed and audited (twice, then the topic is not tried again), and
// the webhook read from Secrets Manager gets every event.
func TestRunbookNotificationFailuresDoNotStopTheRun(t *testing.T) {
	_, table := prodTable(t)
	hook := newWebhook(t)
	name := "dynops/oncall/prod-" + harness.UniqueID()
	_, err := secretsmanager.NewFromConfig(target.AWSConfig(t)).CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{Name: &name, SecretString: &hook.URL})
	require.NoError(t, err)
	missing := "arn:aws:sns:" + target.Region + ":123456789012:prod-" + harness.UniqueID()
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	_, errOut, code := runEnv(t, log, nil, "runbook", "run", "throttling", "--incident", incident, "--yes",
		"--param", "table="+table, "--param", `key={"user_id": "user_00001"}`, "--decide", "cause=hot-key",
		"--notify-sns-topic", missing, "--notify-webhook", "secretsmanager:"+name)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "notify: SNS topic "+missing+": ")
	assert.Contains(t, errOut, "(the run goes on)")
	assert.Equal(t, 2, countActs(t, log, audit.ActRunbookNotifyFailed), "two failures audited, then the topic is given up")
	assert.Equal(t, timelineEvents(t, log, incident), hook.events(t), "the webhook got every event")
}

// TestWebhookSecretMustBeASecureString: a webhook URL kept in a plain
// String parameter is refused, naming the parameter and the fix, never the
// value; a SecureString is read decrypted.
func TestWebhookSecretMustBeASecureString(t *testing.T) {
	ctx := context.Background()
	client := ssm.NewFromConfig(target.AWSConfig(t))
	name := "/dynops/oncall/prod-" + harness.UniqueID()
	url := "https://hooks.example.com/services/T0/B0/SECRET" + harness.UniqueID()
	_, err := client.PutParameter(ctx, &ssm.PutParameterInput{Name: &name, Value: &url, Type: ssmtypes.ParameterTypeString})
	require.NoError(t, err)
	_, err = notify.ResolveSecret(ctx, "ssm:"+name, client, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ssm:"+name+" is a String parameter")
	assert.Contains(t, err.Error(), "SecureString")
	assert.NotContains(t, err.Error(), "SECRET")

	ref := webhookSecret(t, url)
	got, err := notify.ResolveSecret(ctx, ref, client, nil)
	require.NoError(t, err)
	assert.Equal(t, url, got)
}

// TestRunbookSettingsRefusedBeforeAnything: settings that cannot work are
// refused (exit 2) naming the setting, where it was set and the fix, before
// any step or AWS call: a cap or approvals without the shared state, an
// env dynops cannot tell while the file has per-env settings, an unknown
// key in the runbook section.
func TestRunbookSettingsRefusedBeforeAnything(t *testing.T) {
	for _, c := range []struct {
		name, config string
		args         []string
		want         []string
	}{
		{"cap without the shared state", "runbook:\n  prod:\n    destructive_runs_per_hour: 2\n",
			[]string{"--param", "table=prod-hoge-user"}, []string{"a cap of 2 destructive run(s) per hour (config ", "runbook.prod.destructive_runs_per_hour) needs the team's shared run state"}},
		{"approvals without the shared state", "runbook:\n  prod:\n    approvals: 1\n",
			[]string{"--param", "table=prod-hoge-user"}, []string{"1 approval(s) (config ", "runbook.prod.approvals) needs the team's shared run state"}},
		{"no env to tell", "runbook:\n  prod:\n    approvals: 1\n", nil, []string{"cannot tell which env's runbook settings", "give --env ENV (one of prod)"}},
		{"unknown key", "runbook:\n  prod:\n    aprovals: 1\n", []string{"--env", "prod"}, []string{`unknown key "aprovals" in runbook.prod: did you mean approvals?`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := configFile(t, c.config)
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			_, errOut, code := runEnv(t, log, []string{"DYNOPS_CONFIG=" + cfg}, append([]string{"runbook", "run", "pitr-restore", "--incident", "INC-" + harness.UniqueID(), "--yes"}, c.args...)...)
			require.Equal(t, 2, code, errOut)
			for _, w := range append(c.want, cfg) {
				assert.Contains(t, errOut, w)
			}
			assert.Empty(t, stepRuns(t, log), "nothing ran")
		})
	}
}

// TestRunbookApprovalNotifiedWhenGiven: the second approver's approval is
// notified the moment it is recorded (the run's holder hears it without
// polling), and the whole approval flow (waiting, approved, used, the
// restore) reaches the webhook as the timeline has it.
func TestRunbookApprovalNotifiedWhenGiven(t *testing.T) {
	bob, alice := iamUser(t, "bob"), iamUser(t, "alice")
	_, table := prodTable(t)
	bucket, _ := stateBucket(t)
	hook := newWebhook(t)
	cfg := configFile(t, fmt.Sprintf("runbook:\n  prod:\n    state_bucket: %s\n    approvals: 1\n    notify: {webhook: '%s'}\n", bucket, webhookSecret(t, hook.URL)))
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	args := []string{"runbook", "run", "pitr-restore", "--incident", incident, "--param", "table=" + table,
		"--param", "restore_point=" + restorePoint(), "--yes", "--confirm", table, "--through", "restore"}
	_, errOut, code := runEnv(t, log, append([]string{"DYNOPS_CONFIG=" + cfg}, bob.env()...), args...)
	require.Equal(t, exitcode.Stopped, code, errOut)
	hash := hashOf(t, errOut)

	_, errOut, code = runEnv(t, log, append([]string{"DYNOPS_CONFIG=" + cfg}, alice.env()...), "runbook", "approve", "--incident", incident,
		"--step", "restore", "--plan-sha256", hash, "--state-bucket", bucket)
	require.Equal(t, 0, code, errOut)
	events := hook.events(t)
	require.NotEmpty(t, events)
	assert.Equal(t, notify.Approved+" restore", events[len(events)-1], "the approval is notified when given")
	hook.mu.Lock()
	assert.Contains(t, hook.texts[len(hook.texts)-1], "approved by "+alice.ARN)
	hook.mu.Unlock()

	_, errOut, code = runEnv(t, log, append([]string{"DYNOPS_CONFIG=" + cfg}, bob.env()...), args...)
	require.Equal(t, exitcode.Stopped, code, errOut)
	assert.Equal(t, 1, realRuns(t, log, "restore"))
	assert.Equal(t, timelineEvents(t, log, incident), hook.events(t), "notified as the timeline has it")
}
