package ddbtags

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// pagedFake is a fake of ListTagsOfResource (the emulator returns every tag
// on one page, so it cannot show that List follows NextToken).
type pagedFake struct {
	pages [][]types.Tag
	err   error
	calls int
}

func (f *pagedFake) ListTagsOfResource(_ context.Context, in *dynamodb.ListTagsOfResourceInput, _ ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error) {
	if f.err != nil {
		return nil, f.err
	}
	i := 0
	if in.NextToken != nil {
		i = int(aws.ToString(in.NextToken)[0] - '0')
	}
	f.calls++
	out := &dynamodb.ListTagsOfResourceOutput{Tags: f.pages[i]}
	if i+1 < len(f.pages) {
		out.NextToken = aws.String(string(rune('0' + i + 1)))
	}
	return out, nil
}

func TestListReadsEveryPageWithFake(t *testing.T) {
	f := &pagedFake{pages: [][]types.Tag{
		{{Key: aws.String("env"), Value: aws.String("prod")}},
		{{Key: aws.String("dynops:protected"), Value: aws.String("true")}},
		{{Key: aws.String("owner"), Value: aws.String("payments")}},
	}}
	got, err := List(context.Background(), f, "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-a-b")
	if err != nil {
		t.Fatal(err)
	}
	if f.calls != 3 || len(got) != 3 || got["dynops:protected"] != "true" || got["owner"] != "payments" {
		t.Fatalf("List = %v after %d calls; want the 3 tags of 3 pages", got, f.calls)
	}
}

func TestListReturnsTheError(t *testing.T) {
	want := errors.New("AccessDeniedException")
	if _, err := List(context.Background(), &pagedFake{err: want}, "arn"); !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
}
