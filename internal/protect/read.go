package protect

import (
	"context"
	"errors"
	"fmt"
	"github.com/dynops/dynops/internal/ddbtags"
	"net/url"
	"path"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/smithy-go"
)

// The service calls that read a target's tags. Each reader returns a Target
// whose TagsErr is set when the tags could not be read, so that Decide
// protects it.

// TableAPI reads a table's tags.
type TableAPI interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	ListTagsOfResource(context.Context, *dynamodb.ListTagsOfResourceInput, ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error)
}

// ReadTable reads a table's tags (DescribeTable for its ARN, then ListTagsOfResource).
func ReadTable(ctx context.Context, db TableAPI, name string) Target {
	t := Target{Kind: Table, Name: name, TagsFrom: "ListTagsOfResource"}
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &name})
	if err != nil {
		t.TagsErr = fmt.Errorf("DescribeTable %s: %w", name, err)
		return t
	}
	tags, err := ddbtags.List(ctx, db, aws.ToString(dt.Table.TableArn))
	if err != nil {
		t.TagsErr = fmt.Errorf("ListTagsOfResource %s: %w", name, err)
		return t
	}
	t.Tags = tags
	return t
}

// QueueAPI reads a queue's tags.
type QueueAPI interface {
	ListQueueTags(context.Context, *sqs.ListQueueTagsInput, ...func(*sqs.Options)) (*sqs.ListQueueTagsOutput, error)
}

// QueueName is the name of a queue from its URL (its last path element).
func QueueName(queueURL string) string {
	if u, err := url.Parse(queueURL); err == nil && u.Path != "" {
		return path.Base(strings.TrimRight(u.Path, "/"))
	}
	return path.Base(strings.TrimRight(queueURL, "/"))
}

// ReadQueue reads a queue's tags (ListQueueTags).
func ReadQueue(ctx context.Context, c QueueAPI, queueURL string) Target {
	t := Target{Kind: Queue, Name: QueueName(queueURL), TagsFrom: "ListQueueTags"}
	out, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: &queueURL})
	if err != nil {
		t.TagsErr = fmt.Errorf("ListQueueTags %s: %w", queueURL, err)
		return t
	}
	t.Tags = out.Tags
	if t.Tags == nil {
		t.Tags = map[string]string{}
	}
	return t
}

// FunctionAPI reads a Lambda function's tags.
type FunctionAPI interface {
	GetFunctionConfiguration(context.Context, *lambda.GetFunctionConfigurationInput, ...func(*lambda.Options)) (*lambda.GetFunctionConfigurationOutput, error)
	ListTags(context.Context, *lambda.ListTagsInput, ...func(*lambda.Options)) (*lambda.ListTagsOutput, error)
}

// FunctionName is the name part of a function name, ARN or partial ARN
// (arn:aws:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER], ACCOUNT:function:NAME).
func FunctionName(nameOrArn string) string {
	p := strings.Split(nameOrArn, ":")
	for i, s := range p {
		if s == "function" && i+1 < len(p) {
			return p[i+1]
		}
	}
	return nameOrArn
}

// UnqualifiedFunctionARN is a function ARN without its version or alias
// (arn:PARTITION:lambda:REGION:ACCOUNT:function:NAME); other input is
// returned unchanged.
func UnqualifiedFunctionARN(arn string) string {
	if p := strings.Split(arn, ":"); len(p) > 7 {
		return strings.Join(p[:7], ":")
	}
	return arn
}

// ReadFunction reads a function's tags: GetFunctionConfiguration for its ARN
// (unless given one), then ListTags. opts go to both calls (e.g. the region
// of an ARN).
func ReadFunction(ctx context.Context, c FunctionAPI, nameOrArn string, opts ...func(*lambda.Options)) Target {
	t := Target{Kind: Function, Name: FunctionName(nameOrArn), TagsFrom: "ListTags"}
	arn := nameOrArn
	if !strings.HasPrefix(arn, "arn:") {
		cfg, err := c.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: &nameOrArn}, opts...)
		if err != nil {
			t.TagsErr = fmt.Errorf("GetFunctionConfiguration %s: %w", nameOrArn, err)
			return t
		}
		arn = aws.ToString(cfg.FunctionArn)
	}
	// ListTags takes the unqualified function ARN.
	arn = UnqualifiedFunctionARN(arn)
	t.ARN = arn
	out, err := c.ListTags(ctx, &lambda.ListTagsInput{Resource: &arn}, opts...)
	if err != nil {
		t.TagsErr = fmt.Errorf("ListTags %s: %w", arn, err)
		return t
	}
	t.Tags = out.Tags
	if t.Tags == nil {
		t.Tags = map[string]string{}
	}
	return t
}

// BucketAPI reads a bucket's tags.
type BucketAPI interface {
	GetBucketTagging(context.Context, *s3.GetBucketTaggingInput, ...func(*s3.Options)) (*s3.GetBucketTaggingOutput, error)
}

// ReadBucket reads a bucket's tags (GetBucketTagging; NoSuchTagSet is a
// bucket without tags, not an error).
func ReadBucket(ctx context.Context, c BucketAPI, bucket string) Target {
	t := Target{Kind: Bucket, Name: bucket, TagsFrom: "GetBucketTagging", Tags: map[string]string{}}
	out, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: &bucket})
	var ae smithy.APIError
	switch {
	case errors.As(err, &ae) && ae.ErrorCode() == "NoSuchTagSet":
		return t
	case err != nil:
		t.Tags, t.TagsErr = nil, fmt.Errorf("GetBucketTagging %s: %w", bucket, err)
		return t
	}
	for _, tag := range out.TagSet {
		t.Tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	return t
}

// ParameterAPI reads an SSM parameter's tags.
type ParameterAPI interface {
	ListTagsForResource(context.Context, *ssm.ListTagsForResourceInput, ...func(*ssm.Options)) (*ssm.ListTagsForResourceOutput, error)
}

// ReadParameter reads an SSM parameter's tags (ListTagsForResource).
func ReadParameter(ctx context.Context, c ParameterAPI, name string) Target {
	t := Target{Kind: Parameter, Name: name, TagsFrom: "ListTagsForResource"}
	out, err := c.ListTagsForResource(ctx, &ssm.ListTagsForResourceInput{ResourceType: ssmtypes.ResourceTypeForTaggingParameter, ResourceId: &name})
	if err != nil {
		t.TagsErr = fmt.Errorf("ListTagsForResource %s: %w", name, err)
		return t
	}
	t.Tags = map[string]string{}
	for _, tag := range out.TagList {
		t.Tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	return t
}
