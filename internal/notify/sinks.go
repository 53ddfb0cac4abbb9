package notify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/ssmincidents"
)

// SNSAPI is the part of the SNS client a topic sink uses.
type SNSAPI interface {
	Publish(ctx context.Context, in *sns.PublishInput, optFns ...func(*sns.Options)) (*sns.PublishOutput, error)
}

// Topic publishes events to an SNS topic: the message is the event as
// JSON, the subject its line, and message attributes event_type, incident
// and runbook let subscribers filter.
type Topic struct {
	SNS SNSAPI
	ARN string
}

// Name is the topic's ARN.
func (t Topic) Name() string { return "SNS topic " + t.ARN }

// Send publishes e.
func (t Topic) Send(ctx context.Context, e Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	subject := e.Line()
	if len(subject) > 100 { // SNS: at most 100 characters
		subject = subject[:97] + "..."
	}
	attr := func(v string) snstypes.MessageAttributeValue {
		return snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	_, err = t.SNS.Publish(ctx, &sns.PublishInput{TopicArn: &t.ARN, Message: aws.String(string(body)), Subject: &subject,
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"event_type": attr(e.Type), "incident": attr(e.Incident), "runbook": attr(e.Runbook)}})
	if err != nil {
		return fmt.Errorf("sns Publish to %s: %w", t.ARN, err)
	}
	return nil
}

// Webhook posts {"text": line} to a Slack-compatible incoming webhook.
// Its URL is a secret: Name shows where it was read (Ref), errors never
// show the URL.
type Webhook struct {
	URL string
	Ref string // ssm:/path or secretsmanager:name
	// Client is the HTTP client (a bounded one when nil).
	Client *http.Client
	// Attempts bounds the tries of one event (3 when 0); Backoff is the
	// wait before the second (doubled after).
	Attempts int
	Backoff  time.Duration
}

// Name is where the URL is kept.
func (w Webhook) Name() string { return "webhook " + w.Ref }

// Send posts e, retrying a network error, a 429 or a 5xx.
func (w Webhook) Send(ctx context.Context, e Event) error {
	body, err := json.Marshal(map[string]string{"text": e.Line()})
	if err != nil {
		return err
	}
	client := w.Client
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Second}
	}
	attempts, backoff := w.Attempts, w.Backoff
	if attempts <= 0 {
		attempts = 3
	}
	if backoff <= 0 {
		backoff = 250 * time.Millisecond
	}
	var last error
	for i := range attempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("posting to %s: %w (after %d attempt(s): %v)", w.Name(), ctx.Err(), i, last)
			case <-time.After(backoff):
			}
			backoff *= 2
		}
		retry, err := w.post(ctx, client, body)
		if err == nil {
			return nil
		}
		last = err
		if !retry {
			break
		}
	}
	return fmt.Errorf("posting to %s: %w", w.Name(), last)
}

func (w Webhook) post(ctx context.Context, client *http.Client, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return false, errors.New("the URL read from it is not a valid URL")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return true, withoutURL(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500, fmt.Errorf("HTTP %d", resp.StatusCode)
}

// withoutURL is a transport error without the URL, host or address (the
// URL is a secret): its operation and cause.
func withoutURL(err error) error {
	var dns *net.DNSError
	var op *net.OpError
	var ue *url.Error
	switch {
	case errors.As(err, &dns):
		return fmt.Errorf("looking up the webhook's host: %s", dns.Err)
	case errors.As(err, &op):
		return fmt.Errorf("%s: %s", op.Op, errors.Unwrap(op.Err))
	case errors.As(err, &ue) && ue.Timeout():
		return errors.New("no answer in time")
	case errors.As(err, &ue):
		return errors.New("the request failed (" + fmt.Sprintf("%T", ue.Err) + ")")
	}
	return errors.New("the request failed")
}

// IncidentsAPI is the part of the Incident Manager client a timeline sink uses.
type IncidentsAPI interface {
	CreateTimelineEvent(ctx context.Context, in *ssmincidents.CreateTimelineEventInput, optFns ...func(*ssmincidents.Options)) (*ssmincidents.CreateTimelineEventOutput, error)
}

// IncidentTimeline adds events to an Incident Manager incident record's
// timeline as "Custom Event"s (the type the API lets a client create,
// besides "Note"), with a client token per event so that a retry of the
// SDK does not add it twice.
type IncidentTimeline struct {
	API       IncidentsAPI
	RecordARN string
}

// Name is the incident record's ARN.
func (t IncidentTimeline) Name() string { return "Incident Manager record " + t.RecordARN }

// maxEventData is CreateTimelineEvent's limit on eventData.
const maxEventData = 12000

// Send creates the timeline event of e.
func (t IncidentTimeline) Send(ctx context.Context, e Event) error {
	data := e.Line()
	if len(data) > maxEventData {
		data = data[:maxEventData]
	}
	sum := sha256.Sum256([]byte(e.Incident + "\x00" + e.Runbook + "\x00" + e.Step + "\x00" + e.Type + "\x00" + e.At.UTC().Format(time.RFC3339Nano)))
	at := e.At.UTC()
	_, err := t.API.CreateTimelineEvent(ctx, &ssmincidents.CreateTimelineEventInput{IncidentRecordArn: &t.RecordARN,
		EventType: aws.String("Custom Event"), EventData: &data, EventTime: &at, ClientToken: aws.String(hex.EncodeToString(sum[:16]))})
	if err != nil {
		return fmt.Errorf("ssm-incidents CreateTimelineEvent on %s: %w", t.RecordARN, err)
	}
	return nil
}
