package protect

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
)

type fakeBucket struct {
	tags map[string]string
	err  error
}

func (f fakeBucket) GetBucketTagging(context.Context, *s3.GetBucketTaggingInput, ...func(*s3.Options)) (*s3.GetBucketTaggingOutput, error) {
	if f.err != nil {
		return nil, f.err
	}
	out := &s3.GetBucketTaggingOutput{}
	for k, v := range f.tags {
		out.TagSet = append(out.TagSet, s3types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return out, nil
}

type fakeQueue struct {
	tags map[string]string
	err  error
}

func (f fakeQueue) ListQueueTags(context.Context, *sqs.ListQueueTagsInput, ...func(*sqs.Options)) (*sqs.ListQueueTagsOutput, error) {
	return &sqs.ListQueueTagsOutput{Tags: f.tags}, f.err
}

type fakeFunction struct {
	arn     string
	tags    map[string]string
	cfgErr  error
	listed  *string
	listErr error
}

func (f *fakeFunction) GetFunctionConfiguration(context.Context, *lambda.GetFunctionConfigurationInput, ...func(*lambda.Options)) (*lambda.GetFunctionConfigurationOutput, error) {
	if f.cfgErr != nil {
		return nil, f.cfgErr
	}
	return &lambda.GetFunctionConfigurationOutput{FunctionArn: aws.String(f.arn)}, nil
}

func (f *fakeFunction) ListTags(_ context.Context, in *lambda.ListTagsInput, _ ...func(*lambda.Options)) (*lambda.ListTagsOutput, error) {
	f.listed = in.Resource
	return &lambda.ListTagsOutput{Tags: f.tags}, f.listErr
}

// TestReaders checks what each tag reader hands Decide: the tags, or an
// error that leaves the target protected.
func TestReaders(t *testing.T) {
	p := NewPolicy()
	ctx := context.Background()
	noTagSet := &smithy.GenericAPIError{Code: "NoSuchTagSet", Message: "The TagSet does not exist"}
	denied := &smithy.GenericAPIError{Code: "AccessDenied", Message: "denied"}
	cases := []struct {
		name      string
		target    Target
		protected bool
	}{
		{"bucket tagged dev", ReadBucket(ctx, fakeBucket{tags: map[string]string{"env": "dev"}}, "legacy-exports"), false},
		{"bucket without tags, dev name", ReadBucket(ctx, fakeBucket{err: noTagSet}, "dev-hoge-exports"), false},
		{"bucket without tags, legacy name", ReadBucket(ctx, fakeBucket{err: noTagSet}, "exports"), true},
		{"bucket tags denied, dev name", ReadBucket(ctx, fakeBucket{err: denied}, "dev-hoge-exports"), true},
		{"queue tagged dev, legacy name", ReadQueue(ctx, fakeQueue{tags: map[string]string{"env": "dev"}}, "https://sqs.eu-west-1.amazonaws.com/1/OrdersDLQ"), false},
		{"queue tags denied, dev name", ReadQueue(ctx, fakeQueue{err: denied}, "https://sqs.eu-west-1.amazonaws.com/1/dev-a-dlq"), true},
		{"queue tagged prod, dev name", ReadQueue(ctx, fakeQueue{tags: map[string]string{"env": "prod"}}, "https://sqs.eu-west-1.amazonaws.com/1/dev-a-dlq"), true},
		{"function by name, tagged dev", ReadFunction(ctx, &fakeFunction{arn: "arn:aws:lambda:eu-west-1:1:function:consumer", tags: map[string]string{"env": "dev"}}, "consumer"), false},
		{"function not found", ReadFunction(ctx, &fakeFunction{cfgErr: errors.New("ResourceNotFoundException")}, "dev-a-fn"), true},
		{"function tags denied", ReadFunction(ctx, &fakeFunction{arn: "arn:aws:lambda:eu-west-1:1:function:dev-a-fn", listErr: denied}, "dev-a-fn"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := p.Decide(tc.target); d.Protected != tc.protected {
				t.Fatalf("protected = %v, want %v: %s", d.Protected, tc.protected, d.Reason)
			}
		})
	}

	t.Run("a qualified ARN lists the function's tags", func(t *testing.T) {
		f := &fakeFunction{tags: map[string]string{"env": "dev"}}
		tg := ReadFunction(ctx, f, "arn:aws:lambda:eu-west-1:1:function:dev-a-fn:live")
		if got := aws.ToString(f.listed); got != "arn:aws:lambda:eu-west-1:1:function:dev-a-fn" || tg.Name != "dev-a-fn" {
			t.Fatalf("ListTags of %q, name %q", got, tg.Name)
		}
	})
}
