package awsconfig

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestRetryerPolicy: the one retry policy, read back from the retryer the
// SDK gets: DefaultMaxAttempts unless a positive count is given, and a
// full-jitter delay in (0, min(100 ms << attempt, 5 s)].
func TestRetryerPolicy(t *testing.T) {
	for _, c := range []struct{ in, want int }{{0, DefaultMaxAttempts}, {-1, DefaultMaxAttempts}, {1, 1}, {3, 3}, {25, 25}} {
		if got := Retryer(c.in).MaxAttempts(); got != c.want {
			t.Errorf("Retryer(%d).MaxAttempts() = %d, want %d", c.in, got, c.want)
		}
	}
	r := Retryer(0)
	for _, c := range []struct {
		attempt int
		max     time.Duration
	}{{0, 100 * time.Millisecond}, {1, 200 * time.Millisecond}, {3, 800 * time.Millisecond}, {5, 3200 * time.Millisecond}, {6, 5 * time.Second}, {20, 5 * time.Second}, {40, 5 * time.Second}, {1000, 5 * time.Second}} {
		var longest time.Duration
		for range 400 {
			d, err := r.RetryDelay(c.attempt, errors.New("throttled"))
			if err != nil {
				t.Fatal(err)
			}
			if d <= 0 || d > c.max {
				t.Fatalf("attempt %d: delay %s outside (0, %s]", c.attempt, d, c.max)
			}
			longest = max(longest, d)
		}
		// 400 uniform draws all in the lower half: probability 2^-400.
		if longest <= c.max/2 {
			t.Errorf("attempt %d: longest of 400 delays %s, want some above %s (full jitter up to %s)", c.attempt, longest, c.max/2, c.max)
		}
	}
}

// TestTimeoutFor: a synchronous Lambda invoke may run as long as the
// function (15 minutes at most), longer than any --timeout; a --timeout
// longer still wins; every other operation gets --timeout.
func TestTimeoutFor(t *testing.T) {
	cases := []struct {
		timeout         time.Duration
		service, op     string
		want, atLeast   time.Duration
		describeAtLeast string
	}{
		{30 * time.Second, "Lambda", "Invoke", 0, 15*time.Minute + time.Second, "Lambda's 15-minute maximum"},
		{time.Second, "Lambda", "Invoke", 0, 15*time.Minute + time.Second, "Lambda's 15-minute maximum"},
		{30 * time.Minute, "Lambda", "Invoke", 30 * time.Minute, 0, ""},
		{30 * time.Second, "Lambda", "GetFunctionConfiguration", 30 * time.Second, 0, ""},
		{30 * time.Second, "DynamoDB", "Invoke", 30 * time.Second, 0, ""},
		{30 * time.Second, "DynamoDB", "DescribeTable", 30 * time.Second, 0, ""},
	}
	for _, c := range cases {
		g := &guard{timeout: c.timeout, slow: operationTimeouts()}
		got := g.timeoutFor(c.service, c.op)
		if c.want != 0 && got != c.want {
			t.Errorf("timeout %s: %s.%s gets %s, want %s", c.timeout, c.service, c.op, got, c.want)
		}
		if c.atLeast != 0 && got < c.atLeast {
			t.Errorf("timeout %s: %s.%s gets %s, want at least %s (%s)", c.timeout, c.service, c.op, got, c.atLeast, c.describeAtLeast)
		}
	}
	// A slow operation's own limit equal to --timeout is --timeout.
	g := &guard{timeout: time.Minute, slow: map[string]time.Duration{"S3.GetObject": time.Minute}}
	if got := g.timeoutFor("S3", "GetObject"); got != time.Minute {
		t.Errorf("equal limits: %s", got)
	}
}

type otherBody struct{ Body string }

type nilBody struct{ Body io.ReadCloser }

func TestStreamingBody(t *testing.T) {
	body := io.NopCloser(strings.NewReader("x"))
	cases := []struct {
		name   string
		result any
		want   bool
	}{
		{"S3 GetObject output", &s3.GetObjectOutput{Body: body}, true},
		{"a struct with a Body reader", &nilBody{Body: body}, true},
		{"Body not read yet (nil)", &nilBody{}, false},
		{"Body of another type", &otherBody{Body: "x"}, false},
		{"no Body field", &dynamodb.DescribeTableOutput{}, false},
		{"not a pointer", s3.GetObjectOutput{Body: body}, false},
		{"nil pointer", (*s3.GetObjectOutput)(nil), false},
		{"pointer to a non-struct", &body, false},
		{"nil", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := streamingBody(c.result)
			if (got != nil) != c.want {
				t.Fatalf("streamingBody = %v, want a body: %v", got, c.want)
			}
			if got != nil && *got != body {
				t.Errorf("streamingBody points at %v, not the output's Body", *got)
			}
		})
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "::1": true, "127.0.0.1": true, "127.1.2.3": true,
		"127.": false, "127": false, "": false, "10.0.0.1": false, "128.0.0.1": false, "dynamodb.eu-west-1.amazonaws.com": false,
		"localhost.example.com": false, "::2": false, "1127.0.0.1": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestUnansweredRemembersTheFirstTimeoutPerEndpointAndRegion(t *testing.T) {
	var none *Unanswered
	none.add("http://a", "eu-west-1", &TimeoutError{}) // nil: nothing kept, no panic
	if none.first("http://a", "eu-west-1") != nil {
		t.Error("a nil Unanswered remembered an endpoint")
	}
	u := &Unanswered{}
	first, second := &TimeoutError{After: time.Second}, &TimeoutError{After: 2 * time.Second}
	u.add("", "eu-west-1", first) // no endpoint known: nothing to skip later
	if u.first("", "eu-west-1") != nil {
		t.Error("an empty endpoint was remembered")
	}
	u.add("http://a", "eu-west-1", first)
	u.add("http://a", "eu-west-1", second)
	if got := u.first("http://a", "eu-west-1"); got != first {
		t.Errorf("first(a, eu-west-1) = %v, want the first timeout", got)
	}
	if u.first("http://a", "us-east-1") != nil || u.first("http://b", "eu-west-1") != nil {
		t.Error("another region or endpoint was marked unanswered")
	}
}

// TestUnansweredEndpointIsNotWaitedOnAgain: through Load's clients, a call
// to an endpoint that timed out earlier in the run fails without being sent
// (and names the first timeout), in that region only; the endpoint is the
// one the request went to, also when only AWS_ENDPOINT_URL_<SERVICE> names it.
func TestUnansweredEndpointIsNotWaitedOnAgain(t *testing.T) {
	isolate(t)
	const timeout = 300 * time.Millisecond
	for _, viaEnv := range []bool{false, true} {
		name := "--endpoint-url"
		if viaEnv {
			name = "AWS_ENDPOINT_URL_DYNAMODB"
		}
		t.Run(name, func(t *testing.T) {
			endpoint := silent(t)
			o := Options{EndpointURL: endpoint, Timeout: timeout, Unanswered: &Unanswered{}}
			if viaEnv {
				t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
				o.EndpointURL = ""
			}
			call := func(region string) (*TimeoutError, bool) {
				t.Helper()
				o.Region = region
				cfg, err := Load(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				_, err = dynamodb.NewFromConfig(cfg).DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: new("dev-a-user")})
				var te *TimeoutError
				if !errors.As(err, &te) {
					t.Fatalf("%s: err = %v, want a *TimeoutError", region, err)
				}
				if !strings.Contains(err.Error(), "no answer from "+endpoint) {
					t.Errorf("%s: error %q does not name the endpoint %s", region, err, endpoint)
				}
				var nta *notTriedAgain
				return te, errors.As(err, &nta)
			}
			if _, skipped := call("eu-west-1"); skipped {
				t.Fatal("the first call was not sent")
			}
			te, skipped := call("eu-west-1")
			if !skipped {
				t.Error("the second call to the same endpoint and region was sent again")
			}
			if te.After != timeout {
				t.Errorf("the second error says %s, want the first timeout's %s", te.After, timeout)
			}
			if _, skipped := call("us-east-1"); skipped {
				t.Error("a call in another region was not sent")
			}
		})
	}
}
