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

	"github.com/dynops/dynops/internal/audit"
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
	// Waiting is told, while the run waits for messages in flight to come
	// back, the queue's depth, how many of them the run does not hold, the
	// time waited and its bound.
	Waiting func(d Depth, remaining int, waited, bound time.Duration)
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
	// Remaining is the messages still in the queue that the run did not
	// take (in flight or delayed when its wait ended); a re-run takes them.
	Remaining int     `json:"remaining"`
	Seconds   float64 `json:"seconds"`
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
	l := newLedger()
	var mu sync.Mutex // rep
	var recvErr error
	go func() {
		defer close(msgs)
		k := &taker{q: q, max: o.Max, held: l.held, idle: l.work.Wait, waiting: o.Waiting,
			fresh: func(m types.Message) {
				l.take(m) // held until replayed and deleted, or made visible again at the end
				if ctx.Err() != nil {
					return // interrupted: not started
				}
				l.work.Add(1)
				select {
				case msgs <- m:
				case <-ctx.Done():
					l.work.Done() // not started
				}
			},
			again: func(m types.Message) {
				if !l.back(m) {
					return
				}
				// Replayed before; its delete failed: delete it now (not replayed again).
				id := aws.ToString(m.MessageId)
				if err := q.delete(context.WithoutCancel(ctx), m); err != nil {
					return
				}
				l.gone(id)
				o.Act(audit.ActDLQDelete, id, q.URL)
				mu.Lock()
				rep.markDeleted(id, "the first delete failed; deleted when the message came back")
				mu.Unlock()
			},
		}
		recvErr = k.run(ctx)
	}()

	var wg sync.WaitGroup
	for range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range msgs {
				// A message taken finishes even if the run is interrupted.
				out := redriveOne(context.WithoutCancel(ctx), q, s, target, o, m)
				switch out.Status {
				case Replayed, Discarded:
					l.gone(out.MessageID)
				case NotDeleted:
					l.notDeleted(m)
				}
				mu.Lock()
				rep.Outcomes = append(rep.Outcomes, out)
				rep.Counts[out.Status]++
				done := len(rep.Outcomes)
				mu.Unlock()
				l.work.Done()
				if o.Progress != nil {
					o.Progress(done, out)
				}
			}
		}()
	}
	wg.Wait()
	if recvErr == nil && ctx.Err() == nil {
		// Settled: the queue holds no message the run does not hold, so a
		// message whose delete answer was lost is gone from it.
		for _, id := range l.undeletedIDs() {
			l.gone(id)
			rep.markDeleted(id, "the delete's answer was lost; the message is gone from the queue")
		}
	}
	var re *RemainingError
	if errors.As(recvErr, &re) {
		rep.Remaining = re.Remaining
	}
	relErr := q.release(context.WithoutCancel(ctx), l.heldMessages())
	rep.Seconds = o.Now().Sub(start).Seconds()
	return rep, errors.Join(recvErr, relErr)
}

// markDeleted turns a not-deleted outcome into a replayed one.
func (r *Report) markDeleted(id, reason string) {
	for i := range r.Outcomes {
		if o := &r.Outcomes[i]; o.MessageID == id && o.Status == NotDeleted {
			r.Counts[NotDeleted]--
			if r.Counts[NotDeleted] == 0 {
				delete(r.Counts, NotDeleted)
			}
			o.Status, o.Reason = Replayed, reason
			r.Counts[Replayed]++
			return
		}
	}
}

func redriveOne(ctx context.Context, q Queue, s Streams, target Target, o Options, m types.Message) Outcome {
	id := aws.ToString(m.MessageId)
	out := Outcome{MessageID: id}
	keep := func(status, reason string) Outcome {
		out.Status, out.Reason = status, reason
		o.Act(audit.ActDLQKeep, id, map[string]any{"status": status, "reason": reason, "dry_run": !o.Apply})
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
			o.Act(audit.ActDLQDiscardExpired, id, out.Batch)
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
		o.Act(audit.ActDLQWouldReplay, id, out)
		return out
	}
	out.Target, err = target.Deliver(ctx, rec, event)
	if err != nil {
		return keep(Failed, err.Error())
	}
	o.Act(audit.ActDLQReplay, id, map[string]any{"target": out.Target, "table": out.Table, "shard": out.Shard,
		"start": out.Start, "end": out.End, "records": len(recs)})
	if err := q.delete(ctx, m); err != nil {
		out.Status, out.Reason = NotDeleted, err.Error()+"; it comes back after the visibility timeout and is replayed again (idempotent consumer)"
		o.Act(audit.ActDLQDeleteFailed, id, out.Reason)
		return out
	}
	out.Status = Replayed
	o.Act(audit.ActDLQDelete, id, q.URL)
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
