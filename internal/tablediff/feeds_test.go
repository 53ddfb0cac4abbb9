package tablediff

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func feedOf(items ...map[string]types.AttributeValue) Feed {
	return func(ctx context.Context, emit func(map[string]types.AttributeValue) error) error {
		for _, it := range items {
			if err := emit(it); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestCompareFeedsUnionOfTargets(t *testing.T) {
	item := func(id, v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}, "v": &types.AttributeValueMemberS{Value: v}}
	}
	var src []map[string]types.AttributeValue
	for i := range 100 {
		src = append(src, item(fmt.Sprint(i), "a"))
	}
	// The target is split over two feeds; 0 is missing, 1 changed, x extra.
	t1 := append([]map[string]types.AttributeValue{}, src[2:50]...)
	t2 := append([]map[string]types.AttributeValue{item("1", "b"), item("x", "a")}, src[50:]...)
	var rep *Report
	var err error
	returnsWithin(t, func() {
		rep, err = CompareFeeds(context.Background(), FeedOptions{Source: "s", Target: "t", KeyNames: []string{"id"}, Buckets: 7},
			[]Feed{feedOf(src...)}, []Feed{feedOf(t1...), feedOf(t2...)})
	})
	require.NoError(t, err)
	assert.EqualValues(t, 100, rep.SourceItems)
	assert.EqualValues(t, 100, rep.TargetItems)
	assert.EqualValues(t, 98, rep.Same)
	assert.EqualValues(t, 1, rep.OnlyInSource)
	assert.EqualValues(t, 1, rep.OnlyInTarget)
	assert.EqualValues(t, 1, rep.Changed)
	assert.JSONEq(t, `{"id":{"S":"0"}}`, string(rep.Sample.OnlyInSource[0]))

	_, err = CompareFeeds(context.Background(), FeedOptions{KeyNames: []string{"missing"}}, []Feed{feedOf(src[0])}, nil)
	assert.ErrorContains(t, err, "no key attribute")
}
