package redrive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/dynops/dynops/internal/onfailure"
)

// Outcome statuses of a redrive, per message.
const (
	Replayed      = "replayed"     // delivered, then deleted from the DLQ
	WouldReplay   = "would-replay" // dry run: the records were read and the event built
	Failed        = "failed"       // reading or delivery failed: kept
	NotDeleted    = "not-deleted"  // delivered, but the delete failed: it will be replayed again
	Expired       = "expired"      // past retention or trimmed from the stream: kept
	Discarded     = "discarded"    // expired and deleted (--discard-expired)
	KeptMalformed = "malformed"    // not an on-failure record: kept
)

// Options of a redrive run.
type Options struct {
	Apply          bool // false: dry run
	Max            int  // messages to take from the queue; 0: all
	Concurrency    int
	DiscardExpired bool
	Now            func() time.Time
	// Act records an action (or, in a dry run, a planned one) in the audit log.
	Act func(what, target string, detail any)
	// Progress is told each finished message.
	Progress func(done int, o Outcome)
}

// Outcome is what happened to one message.
type Outcome struct {
	MessageID string      `json:"message_id"`
	Status    string      `json:"status"`
	Reason    string      `json:"reason,omitempty"`
	Target    string      `json:"target,omitempty"` // function or queue delivered to
	Records   []RecordRef `json:"records,omitempty"`
	Batch
}

// RecordRef names one stream record of a replayed batch.
type RecordRef struct {
	EventID        string `json:"event_id"`
	EventName      string `json:"event_name"`
	SequenceNumber string `json:"sequence_number"`
	Keys           string `json:"keys"`
}

// Report is the result of a run.
type Report struct {
	Queue    string         `json:"queue"`
	DryRun   bool           `json:"dry_run"`
	Outcomes []Outcome      `json:"outcomes"`
	Counts   map[string]int `json:"counts"`
	Seconds  float64        `json:"seconds"`
}

// Kept reports how many messages the run left in the queue.
func (r Report) Kept() int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Status != Replayed && o.Status != Discarded {
			n++
		}
	}
	return n
}

// Run redrives the DLQ: for each message (up to Max, Concurrency at a time)
// it decodes the on-failure record, re-reads the batch from the stream,
// rebuilds the event and, unless it is a dry run, delivers it to target; the
// message is deleted only after the delivery succeeded. Anything else keeps
// the message, says why, and goes on with the next one.
//
// Interrupting (ctx cancelled) stops taking new messages; the messages in
// flight finish (delivery and delete), and every kept message is made visible
// again. If the process is killed instead, nothing was deleted that was not
// delivered; a message delivered but not yet deleted comes back after the
// visibility timeout and is delivered again on the next run: at-least-once,
// which the idempotent consumer (DDB-STREAM-04) absorbs.
func Run(ctx context.Context, q Queue, s Streams, target Target, o Options) (Report, error) {
	if o.Concurrency < 1 {
		o.Concurrency = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Act == nil {
		o.Act = func(string, string, any) {}
	}
	start := o.Now()
	rep := Report{Queue: q.URL, DryRun: !o.Apply, Counts: map[string]int{}}

	msgs := make(chan types.Message)
	var recvErr error
	var unstarted []types.Message // received, then interrupted before a worker took them
	go func() {
		defer close(msgs)
		seen := map[string]bool{}
		for taken := 0; o.Max == 0 || taken < o.Max; {
			want := 10
			if o.Max > 0 {
				want = min(want, o.Max-taken)
			}
			got, err := q.receive(ctx, want)
			if err != nil {
				if ctx.Err() == nil {
					recvErr = err
				}
				return
			}
			fresh := 0
			for _, m := range got {
				if id := aws.ToString(m.MessageId); !seen[id] {
					seen[id] = true
					fresh++
					taken++
					select {
					case msgs <- m:
					case <-ctx.Done():
						unstarted = append(unstarted, m)
					}
				}
			}
			if fresh == 0 || ctx.Err() != nil {
				return
			}
		}
	}()

	var mu sync.Mutex
	var kept []types.Message
	var wg sync.WaitGroup
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range msgs {
				// A message taken finishes even if the run is interrupted.
				out := redriveOne(context.WithoutCancel(ctx), q, s, target, o, m)
				mu.Lock()
				rep.Outcomes = append(rep.Outcomes, out)
				rep.Counts[out.Status]++
				if out.Status != Replayed && out.Status != Discarded && out.Status != NotDeleted {
					kept = append(kept, m)
				}
				done := len(rep.Outcomes)
				mu.Unlock()
				if o.Progress != nil {
					o.Progress(done, out)
				}
			}
		}()
	}
	wg.Wait()
	relErr := q.release(context.WithoutCancel(ctx), append(kept, unstarted...))
	rep.Seconds = o.Now().Sub(start).Seconds()
	return rep, errors.Join(recvErr, relErr)
}

func redriveOne(ctx context.Context, q Queue, s Streams, target Target, o Options, m types.Message) Outcome {
	id := aws.ToString(m.MessageId)
	out := Outcome{MessageID: id}
	keep := func(status, reason string) Outcome {
		out.Status, out.Reason = status, reason
		o.Act("dlq.keep", id, map[string]any{"status": status, "reason": reason, "dry_run": !o.Apply})
		return out
	}
	rec, err := onfailure.Decode(aws.ToString(m.Body))
	if err != nil {
		return keep(KeptMalformed, err.Error())
	}
	now := o.Now()
	out.Batch = batchOf(rec, now)
	b := *rec.Batch

	var recs []RecordRef
	var event []byte
	if left := b.TimeLeft(now); left <= 0 {
		err = fmt.Errorf("%w: first record arrived %s, %s past the %s stream retention (DDB-STREAM-05): keys unknown",
			ErrExpired, b.ApproximateArrivalOfFirstRecord.Format(time.RFC3339), (-left).Round(time.Second), onfailure.Retention)
	} else {
		recs, event, err = rebuild(ctx, s, b)
	}
	if errors.Is(err, ErrExpired) {
		if o.DiscardExpired && o.Apply {
			if derr := q.delete(ctx, m); derr != nil {
				return keep(Expired, err.Error()+"; discarding failed: "+derr.Error())
			}
			out.Status, out.Reason = Discarded, err.Error()
			o.Act("dlq.discard-expired", id, out.Batch)
			return out
		}
		return keep(Expired, err.Error())
	}
	if err != nil {
		return keep(Failed, err.Error())
	}
	out.Records = recs
	if !o.Apply {
		out.Status, out.Target = WouldReplay, FunctionOrQueue(target, rec)
		o.Act("dlq.would-replay", id, out)
		return out
	}
	out.Target, err = target.Deliver(ctx, rec, event)
	if err != nil {
		return keep(Failed, err.Error())
	}
	o.Act("dlq.replay", id, map[string]any{"target": out.Target, "table": out.Table, "shard": out.Shard,
		"start": out.Start, "end": out.End, "records": len(recs)})
	if err := q.delete(ctx, m); err != nil {
		out.Status, out.Reason = NotDeleted, err.Error()+"; it comes back after the visibility timeout and is replayed again (idempotent consumer)"
		o.Act("dlq.delete-failed", id, out.Reason)
		return out
	}
	out.Status = Replayed
	o.Act("dlq.delete", id, q.URL)
	return out
}

// rebuild reads a batch and returns its records and the event as JSON.
func rebuild(ctx context.Context, s Streams, b onfailure.BatchInfo) ([]RecordRef, []byte, error) {
	recs, err := ReadBatch(ctx, s, b)
	if err != nil {
		return nil, nil, err
	}
	ev, err := BuildEvent(b.StreamArn, recs)
	if err != nil {
		return nil, nil, err
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the event: %w", err)
	}
	refs := make([]RecordRef, 0, len(recs))
	for _, r := range recs {
		refs = append(refs, RecordRef{
			EventID: aws.ToString(r.EventID), EventName: string(r.EventName),
			SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber), Keys: KeyString(r.Dynamodb.Keys),
		})
	}
	return refs, payload, nil
}

// FunctionOrQueue names where a record would be delivered.
func FunctionOrQueue(t Target, rec onfailure.Record) string {
	switch t := t.(type) {
	case Function:
		return FunctionFor(t.Name, rec)
	case QueueTarget:
		return t.URL
	}
	return ""
}
