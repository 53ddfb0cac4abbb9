package redrive

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/dynops/dynops/internal/onfailure"
)

// Target receives a rebuilt event. Deliver returns where it went, or an error
// when the event was not (or not wholly) processed: the message is then kept.
type Target interface {
	Deliver(ctx context.Context, rec onfailure.Record, event []byte) (string, error)
}

// Invoker is the Lambda API a Function target calls.
type Invoker interface {
	Invoke(context.Context, *lambda.InvokeInput, ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Function invokes a Lambda function synchronously (RequestResponse), as an
// event source mapping does. Name is a function name or ARN; empty means the
// function named in the on-failure record (requestContext.functionArn).
type Function struct {
	Client Invoker
	Name   string
	// Allow, when set, is asked before each invocation; an error keeps the
	// message uninvoked (e.g. a protected function nobody confirmed).
	Allow func(ctx context.Context, function string) error
}

// streamsResponse is the partial batch response of a stream consumer.
type streamsResponse struct {
	BatchItemFailures []struct {
		ItemIdentifier *string `json:"itemIdentifier"`
	} `json:"batchItemFailures"`
}

// Deliver invokes the function. Success needs: no invocation error, no
// FunctionError, and no batchItemFailures in the response. Any reported item
// failure keeps the whole message: re-running replays the batch, and the
// consumer, being idempotent (DDB-STREAM-04), skips what it already did.
func (f Function) Deliver(ctx context.Context, rec onfailure.Record, event []byte) (string, error) {
	name := FunctionFor(f.Name, rec)
	if name == "" {
		return "", fmt.Errorf("the on-failure record names no function: pass --function NAME|ARN")
	}
	if f.Allow != nil {
		if err := f.Allow(ctx, name); err != nil {
			return name, err
		}
	}
	out, err := f.Client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName: &name, InvocationType: lambdatypes.InvocationTypeRequestResponse, Payload: event,
	}, func(o *lambda.Options) {
		if r := ARNRegion(name); r != "" {
			o.Region = r
		}
	})
	if err != nil {
		return name, fmt.Errorf("invoking %s: %w", name, err)
	}
	if fe := aws.ToString(out.FunctionError); fe != "" {
		e := &FunctionError{Function: name, Kind: fe}
		_ = json.Unmarshal(out.Payload, e)
		return name, e
	}
	if out.StatusCode/100 != 2 {
		return name, fmt.Errorf("%s answered status %d", name, out.StatusCode)
	}
	var resp streamsResponse
	if json.Unmarshal(out.Payload, &resp) == nil && len(resp.BatchItemFailures) > 0 {
		return name, &BatchItemFailures{Function: name, Count: len(resp.BatchItemFailures), First: aws.ToString(resp.BatchItemFailures[0].ItemIdentifier)}
	}
	return name, nil
}

// FunctionError is an invocation that ended in a function error.
type FunctionError struct {
	Function string
	Kind     string // the FunctionError header: Unhandled, Handled
	Type     string `json:"errorType"`
	Message  string `json:"errorMessage"`
}

func (e *FunctionError) Error() string {
	return fmt.Sprintf("%s returned a function error (%s): %s: %s", e.Function, e.Kind, e.Type, e.Message)
}

// BatchItemFailures is a partial batch response: the function reported
// records it did not process, from First (a sequence number) on.
type BatchItemFailures struct {
	Function string
	Count    int
	First    string // "" means the whole batch
}

func (e *BatchItemFailures) Error() string {
	first := e.First
	if first == "" {
		first = "(empty itemIdentifier: the whole batch)"
	}
	return fmt.Sprintf("%s reported %d batch item failure(s), the first at sequence number %s", e.Function, e.Count, first)
}

// FunctionFor is the function a record is replayed to: override, or the
// record's own function.
func FunctionFor(override string, rec onfailure.Record) string {
	if override != "" {
		return override
	}
	return rec.RequestContext.FunctionArn
}

// ARNRegion is the region of a Lambda function ARN, or "" for a plain name.
func ARNRegion(name string) string {
	p := strings.Split(name, ":")
	if len(p) >= 7 && p[0] == "arn" && p[2] == "lambda" {
		return p[3]
	}
	return ""
}

// QueueTarget sends the rebuilt event, as the message body, to another SQS
// queue: for consumers that are not Lambda functions.
type QueueTarget struct {
	Client SQS
	URL    string
}

// Deliver sends the event; success is SQS accepting it.
func (q QueueTarget) Deliver(ctx context.Context, _ onfailure.Record, event []byte) (string, error) {
	body := string(event)
	if _, err := q.Client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q.URL, MessageBody: &body}); err != nil {
		return q.URL, fmt.Errorf("sending the event to %s: %w", q.URL, err)
	}
	return q.URL, nil
}
