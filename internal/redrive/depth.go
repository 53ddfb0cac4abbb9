package redrive

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// QueueAttributes is the part of the SQS API QueueDepth uses.
type QueueAttributes interface {
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// QueueDepth is the number of messages visible in the queue at url
// (ApproximateNumberOfMessages): the total of a redrive's or move's progress.
func QueueDepth(ctx context.Context, c QueueAttributes, url string) (int, error) {
	name := string(types.QueueAttributeNameApproximateNumberOfMessages)
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		return 0, fmt.Errorf("reading the depth of %s: %w", url, err)
	}
	n, _ := strconv.Atoi(out.Attributes[name])
	return n, nil
}
