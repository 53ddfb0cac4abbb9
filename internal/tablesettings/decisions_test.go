package tablesettings

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fakeDB is a DynamoDB at the SDK interface for the decision logic only
// (which calls, in which order, with what); the emulator tests cover the
// real API. The table is always ACTIVE. fail names a method that fails.
type fakeDB struct {
	DynamoDB // methods not overridden panic: a call nobody expects
	calls    []string
	updates  []*dynamodb.UpdateTableInput
	tagCalls [][]types.Tag
	ttl      types.TimeToLiveStatus
	fail     string
}

var errBoom = errors.New("boom")

func (f *fakeDB) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableArn: aws.String("arn:aws:dynamodb:eu-west-1:123456789012:table/t"), TableStatus: types.TableStatusActive}}, nil
}

func (f *fakeDB) UpdateTable(_ context.Context, in *dynamodb.UpdateTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error) {
	f.calls = append(f.calls, "UpdateTable")
	f.updates = append(f.updates, in)
	if f.fail == "UpdateTable" {
		return nil, errBoom
	}
	return &dynamodb.UpdateTableOutput{}, nil
}

func (f *fakeDB) TagResource(_ context.Context, in *dynamodb.TagResourceInput, _ ...func(*dynamodb.Options)) (*dynamodb.TagResourceOutput, error) {
	f.calls = append(f.calls, "TagResource")
	f.tagCalls = append(f.tagCalls, in.Tags)
	if f.fail == "TagResource" {
		return nil, errBoom
	}
	return &dynamodb.TagResourceOutput{}, nil
}

func (f *fakeDB) DescribeContinuousBackups(context.Context, *dynamodb.DescribeContinuousBackupsInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeContinuousBackupsOutput, error) {
	return &dynamodb.DescribeContinuousBackupsOutput{}, nil
}

func (f *fakeDB) DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error) {
	return &dynamodb.DescribeTimeToLiveOutput{TimeToLiveDescription: &types.TimeToLiveDescription{TimeToLiveStatus: f.ttl, AttributeName: aws.String("ttl")}}, nil
}

func (f *fakeDB) ListTagsOfResource(context.Context, *dynamodb.ListTagsOfResourceInput, ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error) {
	return &dynamodb.ListTagsOfResourceOutput{}, nil
}

func (f *fakeDB) GetResourcePolicy(context.Context, *dynamodb.GetResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.GetResourcePolicyOutput, error) {
	return nil, &types.PolicyNotFoundException{}
}

// TestCaptureTTLBeingEnabled: TTL that is ENABLING is on (its attribute is
// captured); DISABLING and DISABLED are off.
func TestCaptureTTLBeingEnabled(t *testing.T) {
	for status, want := range map[types.TimeToLiveStatus]string{types.TimeToLiveStatusEnabled: "ttl", types.TimeToLiveStatusEnabling: "ttl", types.TimeToLiveStatusDisabling: "", types.TimeToLiveStatusDisabled: ""} {
		s, err := Capture(context.Background(), &fakeDB{ttl: status}, "t")
		if err != nil || s.TTLAttribute != want {
			t.Errorf("TTL %s: captured %q (%v), want %q", status, s.TTLAttribute, err, want)
		}
	}
}

// TestStreamViewChange: a live stream's view type is changed by disabling
// the stream, then enabling it with the new view; a table without one gets
// one UpdateTable.
func TestStreamViewChange(t *testing.T) {
	for have, want := range map[string][]string{"NEW_IMAGE": {"off", "on KEYS_ONLY"}, "": {"on KEYS_ONLY"}} {
		db := &fakeDB{}
		if err := Apply(context.Background(), db, "t", Plan(Settings{StreamViewType: have}, Settings{StreamViewType: "KEYS_ONLY"}), nil); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, u := range db.updates {
			if !aws.ToBool(u.StreamSpecification.StreamEnabled) {
				got = append(got, "off")
			} else {
				got = append(got, "on "+string(u.StreamSpecification.StreamViewType))
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("stream %q -> KEYS_ONLY: UpdateTable %v, want %v", have, got, want)
		}
	}
}

// TestApplyStopsAtTheFailingChange: a failing UpdateTable (stream, deletion
// protection) or TagResource stops the plan with an error naming the step;
// nothing after it runs.
func TestApplyStopsAtTheFailingChange(t *testing.T) {
	for _, c := range []struct {
		fail       string
		have, want Settings
		step       string
	}{
		{"UpdateTable", Settings{}, Settings{StreamViewType: "NEW_IMAGE", Tags: map[string]string{"a": "1"}}, "applying stream"},
		{"UpdateTable", Settings{}, Settings{DeletionProtection: true}, "applying deletion-protection"},
		{"TagResource", Settings{}, Settings{Tags: map[string]string{"a": "1"}, DeletionProtection: true}, "applying tags"},
	} {
		db := &fakeDB{fail: c.fail}
		var done []string
		err := Apply(context.Background(), db, "t", Plan(c.have, c.want), func(ch Change) { done = append(done, ch.What) })
		if !errors.Is(err, errBoom) || !strings.Contains(err.Error(), c.step) {
			t.Errorf("%s failing: Apply = %v, want boom at %q", c.fail, err, c.step)
		}
		if len(db.calls) != 1 || len(done) != 0 {
			t.Errorf("%s failing: calls %v, done %v; want the failing call only", c.fail, db.calls, done)
		}
	}
}

// TestTagsInBatchesOf50: TagResource takes at most 50 tags a call; every
// missing tag is set once, in as few calls as that allows.
func TestTagsInBatchesOf50(t *testing.T) {
	for n, calls := range map[int]int{1: 1, 50: 1, 51: 2, 120: 3} {
		want := map[string]string{}
		for i := range n {
			want[fmt.Sprintf("k%03d", i)] = "v"
		}
		db := &fakeDB{}
		if err := Apply(context.Background(), db, "t", Plan(Settings{}, Settings{Tags: want}), nil); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, tags := range db.tagCalls {
			if len(tags) == 0 || len(tags) > 50 {
				t.Errorf("%d tags: a TagResource call with %d", n, len(tags))
			}
			for _, tg := range tags {
				seen[aws.ToString(tg.Key)] = true
			}
		}
		if len(db.tagCalls) != calls || len(seen) != n {
			t.Errorf("%d tags: %d calls setting %d tags, want %d calls setting all", n, len(db.tagCalls), len(seen), calls)
		}
	}
}

// TestPlanDetails: what the plan says it will do, exactly.
func TestPlanDetails(t *testing.T) {
	details := func(have, want Settings) string {
		var out []string
		for _, c := range Plan(have, want) {
			out = append(out, c.What+": "+c.Detail)
		}
		return strings.Join(out, "; ")
	}
	for _, c := range []struct {
		have, want Settings
		plan       string
	}{
		{Settings{}, Settings{PITR: true}, "pitr: enable PITR"},
		{Settings{}, Settings{PITR: true, RecoveryPeriodInDays: 35}, "pitr: enable PITR, 35-day recovery period"},
		{Settings{Tags: map[string]string{"a": "1"}}, Settings{Tags: map[string]string{"a": "1", "b": "2", "c": "3"}}, "tags: set 2 tag(s): b=2, c=3"},
		{Settings{}, Settings{Tags: map[string]string{"a": "1"}}, "tags: set 1 tag(s): a=1"},
	} {
		if got := details(c.have, c.want); got != c.plan {
			t.Errorf("Plan(%+v, %+v) = %q, want %q", c.have, c.want, got, c.plan)
		}
	}
}
