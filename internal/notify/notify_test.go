package notify

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssmincidents"
)

var ev = Event{Type: StepStarted, Incident: "INC-1", Runbook: "pitr-restore", Step: "restore", Text: "step 2/6 started", At: time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)}

// TestWebhookRetriesThenDelivers: a local webhook answers 503 then 200:
// the event is posted twice, as {"text": line}, and delivered.
func TestWebhookRetriesThenDelivers(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var b map[string]string
		_ = json.NewDecoder(r.Body).Decode(&b)
		bodies = append(bodies, b)
		if len(bodies) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	err := Webhook{URL: srv.URL + "/hooks/T000/SECRET", Ref: "ssm:/x", Backoff: time.Millisecond}.Send(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 2 || bodies[1]["text"] != ev.Line() {
		t.Fatalf("posts = %v; want two, the last {text: %q}", bodies, ev.Line())
	}
}

// TestWebhookErrorsNeverShowTheURL: a webhook that refuses connections or
// answers 404 fails with an error naming where the URL is kept, not the
// URL (it is a secret), and a 404 is not retried.
func TestWebhookErrorsNeverShowTheURL(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/hooks/T000/SECRET-TOKEN"
	l.Close()
	err = Webhook{URL: closed, Ref: "ssm:/oncall/webhook", Attempts: 2, Backoff: time.Millisecond}.Send(context.Background(), ev)
	if err == nil || strings.Contains(err.Error(), "SECRET-TOKEN") || strings.Contains(err.Error(), l.Addr().String()) || !strings.Contains(err.Error(), "ssm:/oncall/webhook") {
		t.Errorf("connection refused: err = %v; want one naming ssm:/oncall/webhook and not the URL", err)
	}
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n++; w.WriteHeader(http.StatusNotFound) }))
	defer srv.Close()
	err = Webhook{URL: srv.URL + "/SECRET-TOKEN", Ref: "secretsmanager:oncall", Backoff: time.Millisecond}.Send(context.Background(), ev)
	if err == nil || strings.Contains(err.Error(), "SECRET-TOKEN") || !strings.Contains(err.Error(), "HTTP 404") || n != 1 {
		t.Errorf("404: err = %v after %d post(s); want HTTP 404 after one, without the URL", err, n)
	}
}

// TestNotifierBoundsASlowTargetAndGoesOn: a webhook that never answers
// holds the run no longer than the notifier's timeout; the failure goes to
// Failed, and the next target still gets the event.
func TestNotifierBoundsASlowTargetAndGoesOn(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer slow.Close()
	defer close(release)
	var got []string
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, "fast") }))
	defer fast.Close()
	var failed []string
	n := &Notifier{Timeout: 300 * time.Millisecond, Sinks: []Sink{Webhook{URL: slow.URL, Ref: "ssm:/slow"}, Webhook{URL: fast.URL, Ref: "ssm:/fast"}},
		Failed: func(sink string, e Event, err error) { failed = append(failed, sink) }}
	start := time.Now()
	n.Notify(context.Background(), ev)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Notify took %s with a 300ms bound", d)
	}
	if len(failed) != 1 || failed[0] != "webhook ssm:/slow" || len(got) != 1 {
		t.Errorf("failed = %v, fast got %v; want the slow one failed and the fast one delivered", failed, got)
	}
}

type fakeIncidents struct {
	in []*ssmincidents.CreateTimelineEventInput
}

func (f *fakeIncidents) CreateTimelineEvent(_ context.Context, in *ssmincidents.CreateTimelineEventInput, _ ...func(*ssmincidents.Options)) (*ssmincidents.CreateTimelineEventOutput, error) {
	f.in = append(f.in, in)
	if aws.ToString(in.EventData) == "" {
		return nil, errors.New("ValidationException")
	}
	return &ssmincidents.CreateTimelineEventOutput{EventId: aws.String("e1")}, nil
}

// TestIncidentTimelineEvent_FakeSDK_MotoHasNoSSMIncidents: moto 5.2.1 has
// no ssm-incidents, so this decision is tested at the SDK interface: each
// event is a "Custom Event" on the record with the event's time and line,
// and a client token that is the same for the same event (an SDK retry
// adds it once) and differs between events.
func TestIncidentTimelineEvent_FakeSDK_MotoHasNoSSMIncidents(t *testing.T) {
	f := &fakeIncidents{}
	arn := "arn:aws:ssm-incidents::111122223333:incident-record/oncall/abc"
	sink := IncidentTimeline{API: f, RecordARN: arn}
	other := ev
	other.Type = StepFinished
	for _, e := range []Event{ev, ev, other} {
		if err := sink.Send(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	in := f.in[0]
	if aws.ToString(in.IncidentRecordArn) != arn || aws.ToString(in.EventType) != "Custom Event" || aws.ToString(in.EventData) != ev.Line() || !in.EventTime.Equal(ev.At) {
		t.Errorf("input = %+v", in)
	}
	if tok := aws.ToString(in.ClientToken); tok == "" || len(tok) > 128 || tok != aws.ToString(f.in[1].ClientToken) || tok == aws.ToString(f.in[2].ClientToken) {
		t.Errorf("client tokens %q %q %q: want one per event, at most 128 characters", tok, aws.ToString(f.in[1].ClientToken), aws.ToString(f.in[2].ClientToken))
	}
}

// TestNotifierGivesUpOnADeadTarget: after two failures in a row a target
// is not tried again in the run (each try would cost a step its timeout),
// and the second failure says so.
func TestNotifierGivesUpOnADeadTarget(t *testing.T) {
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts++; w.WriteHeader(http.StatusForbidden) }))
	defer srv.Close()
	var errs []error
	n := &Notifier{Sinks: []Sink{Webhook{URL: srv.URL, Ref: "ssm:/dead"}}, Failed: func(_ string, _ Event, err error) { errs = append(errs, err) }}
	for range 4 {
		n.Notify(context.Background(), ev)
	}
	if posts != 2 || len(errs) != 2 || errors.Is(errs[0], ErrGivenUp) || !errors.Is(errs[1], ErrGivenUp) {
		t.Errorf("posts = %d, failures = %v; want 2 posts, the second failure marked given up", posts, errs)
	}
}
