package factory

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/iostreams"
)

func TestUsageError(t *testing.T) {
	err := UsageErrorf("bad --time %q", "x")
	if !IsUsageError(err) || IsUsageError(errors.New("other")) {
		t.Fatal("IsUsageError must recognise only usage errors")
	}
}

// TestAWSLoadedOncePerRun: every command of a run shares one loaded
// configuration (a backfill used to load it three times); a failed load is
// not kept, and a caller's change to its copy does not reach the next caller.
func TestAWSLoadedOncePerRun(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := New(ios)
	loads := 0
	fail := true
	f.LoadAWS = func(ctx context.Context, o awsconfig.Options) (aws.Config, error) {
		loads++
		if fail {
			return aws.Config{}, errors.New("no credentials")
		}
		return aws.Config{Region: "eu-west-1"}, nil
	}
	if _, err := f.AWS(context.Background()); err == nil {
		t.Fatal("a failed load must fail the call")
	}
	fail = false
	first, err := f.AWS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if other := first.In("us-east-1"); other.Region() != "us-east-1" {
		t.Fatalf("In(us-east-1): %s", other.Region())
	}
	queue, err := f.AWSForQueue(context.Background(), "https://sqs.us-east-1.amazonaws.com/123456789012/q")
	if err != nil || queue.Region() != "us-east-1" {
		t.Fatalf("the queue's region: %s, %v", queue.Region(), err)
	}
	second, err := f.AWS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if loads != 2 {
		t.Errorf("loads = %d, want 2 (one failed, then one kept for the run)", loads)
	}
	if second.Region() != "eu-west-1" {
		t.Errorf("second caller got Region %q: one caller's override leaked into the shared configuration", second.Region())
	}
}

// TestConfirmFlagRepeatableAndCommaSeparated: every command's --confirm
// keeps every value, repeated or comma-separated.
func TestConfirmFlagRepeatableAndCommaSeparated(t *testing.T) {
	for args, want := range map[string][]string{
		"--confirm a":                  {"a"},
		"--confirm a --confirm b":      {"a", "b"},
		"--confirm a,b":                {"a", "b"},
		"--confirm a,b --confirm c":    {"a", "b", "c"},
		"--confirm=prod-q-dlq,prod-fn": {"prod-q-dlq", "prod-fn"},
	} {
		var got []string
		fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
		AddConfirmFlag(fl, &got, "a name")
		if err := fl.Parse(strings.Fields(args)); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q, want %q", args, got, want)
		}
	}
}

// TestPrintResultAddsThrottles: a result printed after DynamoDB throttled
// the run carries the attempts per reason; without throttles, or for a
// result that is not an object, it is printed as it is.
func TestPrintResultAddsThrottles(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	f := New(ios)
	if err := f.PrintResult(map[string]int{"written": 3}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "throttles") {
		t.Fatalf("no throttle, no throttles field: %s", out)
	}
	f.Throttles().Observe(&types.ThrottlingException{ThrottlingReasons: []types.ThrottlingReason{
		{Reason: aws.String("TableWriteKeyRangeThroughputExceeded"), Resource: aws.String("arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user")}}})
	out.Reset()
	if err := f.PrintResult(map[string]int{"written": 3}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Written   int              `json:"written"`
		Throttles map[string]int64 `json:"throttles"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Written != 3 || got.Throttles["TableWriteKeyRangeThroughputExceeded"] != 1 {
		t.Fatalf("got %+v from %s", got, out)
	}
	out.Reset()
	if err := f.PrintResult([]int{1}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) != "[\n  1\n]" {
		t.Fatalf("a list is printed as it is: %q", out)
	}
}
