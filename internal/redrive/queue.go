package redrive

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQS is the part of the SQS API dynops dlq uses.
type SQS interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	QueueAttributes
}

// Queue is a DLQ read by dynops.
//
// Visibility: SQS has no "peek". A received message is hidden from every other
// consumer for VisibilityTimeout, and comes back by itself when that ends. So
// dynops receives with a timeout long enough for its own work (inspect: the
// time to list; redrive: the time to replay), keeps what it received hidden
// while it works (so one run never sees a message twice), and at the end sets
// the visibility of every message it did not delete back to 0: they are at
// once visible again, as before. If dynops is killed, they come back when the
// timeout ends. Only a successful replay (or --discard-expired) deletes.
type Queue struct {
	Client            SQS
	URL               string
	VisibilityTimeout time.Duration
}

// receive returns up to n (at most 10) messages, waiting up to 1 s for the first.
func (q Queue) receive(ctx context.Context, n int) ([]types.Message, error) {
	if n > 10 {
		n = 10
	}
	out, err := q.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    &q.URL,
		MaxNumberOfMessages:         int32(n),
		VisibilityTimeout:           int32(q.VisibilityTimeout / time.Second),
		WaitTimeSeconds:             1,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, fmt.Errorf("receiving from %s: %w", q.URL, err)
	}
	return out.Messages, nil
}

// peek receives up to max messages (0: all) without consuming them: each is
// hidden while the listing runs and made visible again before peek returns.
func (q Queue) peek(ctx context.Context, max int) ([]types.Message, error) {
	var msgs []types.Message
	seen := map[string]bool{}
	defer func() { _ = q.release(context.WithoutCancel(ctx), msgs) }()
	for max == 0 || len(msgs) < max {
		want := 10
		if max > 0 && max-len(msgs) < want {
			want = max - len(msgs)
		}
		got, err := q.receive(ctx, want)
		if err != nil {
			return msgs, err
		}
		fresh := 0
		for _, m := range got {
			if id := aws.ToString(m.MessageId); !seen[id] {
				seen[id] = true
				msgs = append(msgs, m)
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	return msgs, nil
}

// release makes messages visible again at once (visibility timeout 0).
func (q Queue) release(ctx context.Context, msgs []types.Message) error {
	for start := 0; start < len(msgs); start += 10 {
		end := min(start+10, len(msgs))
		var entries []types.ChangeMessageVisibilityBatchRequestEntry
		for i, m := range msgs[start:end] {
			entries = append(entries, types.ChangeMessageVisibilityBatchRequestEntry{
				Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0,
			})
		}
		out, err := q.Client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &q.URL, Entries: entries})
		if err != nil {
			return fmt.Errorf("making messages visible again in %s: %w (they come back when the visibility timeout ends)", q.URL, err)
		}
		if len(out.Failed) > 0 {
			return fmt.Errorf("making %d message(s) visible again in %s failed: %s (they come back when the visibility timeout ends)", len(out.Failed), q.URL, aws.ToString(out.Failed[0].Message))
		}
	}
	return nil
}

func (q Queue) delete(ctx context.Context, m types.Message) error {
	_, err := q.Client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &q.URL, ReceiptHandle: m.ReceiptHandle})
	if err != nil {
		return fmt.Errorf("deleting message %s from %s: %w", aws.ToString(m.MessageId), q.URL, err)
	}
	return nil
}

// sentAt and receiveCount read a message's system attributes.
func sentAt(m types.Message) time.Time {
	ms, err := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// receiveCount is -1 when SQS did not say (not 0: a count nobody read is
// not a count of zero).
func receiveCount(m types.Message) int {
	n, err := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
	if err != nil {
		return -1
	}
	return n
}
