package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
)

// CloudWatchLogsAPI is what the central copy calls.
type CloudWatchLogsAPI interface {
	CreateLogStream(ctx context.Context, in *cloudwatchlogs.CreateLogStreamInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogStreamOutput, error)
	PutLogEvents(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error)
}

// CloudWatchLogs copies each record, as one JSON log event, to a log group
// the team shares (--audit-log-group): one log stream per run, named by the
// run id, so the two records of a run sit together and no sequence token is
// shared between concurrent runs. The log group must exist (Terraform owns
// it, with its retention and KMS key).
type CloudWatchLogs struct {
	Client CloudWatchLogsAPI
	Group  string

	mu      sync.Mutex
	streams map[string]bool
}

// Name is the log group, for messages.
func (c *CloudWatchLogs) Name() string { return "CloudWatch Logs group " + c.Group }

// Put appends rec to the run's log stream.
func (c *CloudWatchLogs) Put(ctx context.Context, rec Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streams == nil {
		c.streams = map[string]bool{}
	}
	stream := rec.RunID
	if !c.streams[stream] {
		_, err := c.Client.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String(c.Group), LogStreamName: aws.String(stream)})
		var exists *types.ResourceAlreadyExistsException
		var missing *types.ResourceNotFoundException
		switch {
		case errors.As(err, &missing):
			return fmt.Errorf("log group %s does not exist in this account and region: create it (Terraform) or drop --audit-log-group: %w", c.Group, err)
		case err != nil && !errors.As(err, &exists):
			return fmt.Errorf("creating log stream %s in %s: %w", stream, c.Group, err)
		}
		c.streams[stream] = true
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	out, err := c.Client.PutLogEvents(ctx, &cloudwatchlogs.PutLogEventsInput{
		LogGroupName: aws.String(c.Group), LogStreamName: aws.String(stream),
		LogEvents: []types.InputLogEvent{{Message: aws.String(string(line)), Timestamp: aws.Int64(rec.Time.UnixMilli())}},
	})
	if err != nil {
		return fmt.Errorf("PutLogEvents to %s/%s: %w", c.Group, stream, err)
	}
	if r := out.RejectedLogEventsInfo; r != nil {
		return fmt.Errorf("CloudWatch Logs rejected the record in %s/%s (too old %v, too new %v, expired %v)", c.Group, stream,
			aws.ToInt32(r.TooOldLogEventEndIndex), aws.ToInt32(r.TooNewLogEventStartIndex), aws.ToInt32(r.ExpiredLogEventEndIndex))
	}
	return nil
}
