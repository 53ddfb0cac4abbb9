// Package ddbtags reads the tags of a DynamoDB resource: one loop over
// ListTagsOfResource's pages (the SDK has no paginator for it), shared by every
// package that needs a table's tags.
package ddbtags

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Lister is the one call List needs.
type Lister interface {
	ListTagsOfResource(ctx context.Context, in *dynamodb.ListTagsOfResourceInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error)
}

// List returns every tag of the resource arn, all pages read. The error is
// the SDK's, unwrapped: callers say which resource and why they read it.
func List(ctx context.Context, db Lister, arn string) (map[string]string, error) {
	tags := map[string]string{}
	in := &dynamodb.ListTagsOfResourceInput{ResourceArn: aws.String(arn)}
	for {
		out, err := db.ListTagsOfResource(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, t := range out.Tags {
			tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		if in.NextToken = out.NextToken; in.NextToken == nil {
			return tags, nil
		}
	}
}
