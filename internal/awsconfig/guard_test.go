package awsconfig

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

func isolate(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "testing")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
}

// silent accepts connections and never answers.
func silent(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return "http://" + ln.Addr().String()
}

func TestOperationTimeoutNamesServiceEndpointRegion(t *testing.T) {
	isolate(t)
	endpoint := silent(t)
	for _, timeout := range []time.Duration{300 * time.Millisecond, time.Second} {
		cfg, err := Load(context.Background(), Options{Region: "eu-west-1", EndpointURL: endpoint, Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = dynamodb.NewFromConfig(cfg).DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: new("dev-a-user")})
		took := time.Since(start)
		var te *TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("err = %v, want a *TimeoutError", err)
		}
		for _, want := range []string{"DynamoDB: DescribeTable", "no answer from " + endpoint, "region eu-west-1", "within " + timeout.String(), "--timeout"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		if took > 2*timeout {
			t.Errorf("took %s with --timeout %s", took, timeout)
		}
	}
}

func TestCallerCancelIsNotATimeout(t *testing.T) {
	isolate(t)
	cfg, err := Load(context.Background(), Options{Region: "eu-west-1", EndpointURL: silent(t), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err = dynamodb.NewFromConfig(cfg).ListTables(ctx, &dynamodb.ListTablesInput{})
	var te *TimeoutError
	if errors.As(err, &te) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled and no TimeoutError", err)
	}
}

// answer serves one canned AWS JSON error for every request, and the STS
// GetCallerIdentity (query protocol) answer for the account lookup.
func answer(t *testing.T, status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := new(bytes.Buffer)
		_, _ = buf.ReadFrom(r.Body)
		if strings.Contains(buf.String(), "Action=GetCallerIdentity") {
			w.Header().Set("Content-Type", "text/xml")
			_, _ = w.Write([]byte(`<GetCallerIdentityResponse><GetCallerIdentityResult><Account>210987654321</Account><Arn>arn:aws:iam::210987654321:user/x</Arn><UserId>X</UserId></GetCallerIdentityResult></GetCallerIdentityResponse>`))
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amzn-Query-Error", "AWS.SimpleQueueService.NonExistentQueue;Sender")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestNotFoundNamesAccountRegionEndpointAndFix(t *testing.T) {
	isolate(t)
	cases := []struct {
		name string
		body string
		call func(ctx context.Context, o Options) error
		want []string
	}{
		{name: "DynamoDB table",
			body: `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found"}`,
			call: func(ctx context.Context, o Options) error {
				cfg, _ := Load(ctx, o)
				_, err := dynamodb.NewFromConfig(cfg).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: new("dev-a-user")})
				var rnf *types.ResourceNotFoundException
				if !errors.As(err, &rnf) {
					t.Errorf("the service's own exception must still match errors.As: %v", err)
				}
				return err
			},
			want: []string{"not found: ResourceNotFoundException", "account 210987654321", "region eu-west-1", "check the table"}},
		{name: "SQS queue of another region",
			body: `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`,
			call: func(ctx context.Context, o Options) error {
				cfg, _ := Load(ctx, o)
				_, err := sqs.NewFromConfig(cfg).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: new("https://sqs.us-east-1.amazonaws.com/210987654321/dev-a-dlq")})
				return err
			},
			want: []string{"not found", "account 210987654321", "region eu-west-1", "the queue URL is in region us-east-1, not eu-west-1: pass --region us-east-1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			endpoint := answer(t, 400, tc.body)
			err := tc.call(context.Background(), Options{Region: "eu-west-1", EndpointURL: endpoint, Timeout: 5 * time.Second})
			var nf *NotFoundError
			if !errors.As(err, &nf) {
				t.Fatalf("err = %v, want a *NotFoundError", err)
			}
			for _, w := range append(tc.want, "endpoint "+endpoint) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "StatusCode: 400") || strings.Contains(err.Error(), "RequestID") {
				t.Errorf("raw SDK chain shown without --debug: %q", err)
			}
		})
	}
	t.Run("--debug keeps the raw chain and logs requests", func(t *testing.T) {
		endpoint := answer(t, 400, `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found"}`)
		var log bytes.Buffer
		cfg, err := Load(context.Background(), Options{Region: "eu-west-1", EndpointURL: endpoint, Debug: true, LogOutput: &log})
		if err != nil {
			t.Fatal(err)
		}
		_, err = dynamodb.NewFromConfig(cfg).DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: new("x-y-z")})
		if err == nil || !strings.Contains(err.Error(), "[raw: ") || !strings.Contains(err.Error(), "StatusCode: 400") {
			t.Errorf("err = %v, want the raw chain", err)
		}
		if !strings.Contains(log.String(), "DescribeTable") && !strings.Contains(log.String(), "Request") {
			t.Errorf("no request logged: %q", log.String())
		}
	})
}

func TestUnreachableNamesEndpoint(t *testing.T) {
	isolate(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	endpoint := "http://" + ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	cfg, err := Load(context.Background(), Options{Region: "eu-west-1", EndpointURL: endpoint, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = dynamodb.NewFromConfig(cfg).ListTables(context.Background(), &dynamodb.ListTablesInput{})
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "cannot connect to "+endpoint) {
		t.Fatalf("err = %v", err)
	}
}

func TestBadProfileIsNamed(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "config")
	if err := os.WriteFile(conf, []byte("[profile real]\nregion = eu-west-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", conf)
	t.Setenv("AWS_PROFILE", "x")
	_, err := Load(context.Background(), Options{Region: "eu-west-1"})
	if err == nil || !strings.Contains(err.Error(), `profile "x" from AWS_PROFILE`) {
		t.Errorf("AWS_PROFILE=x: err = %v", err)
	}
	t.Setenv("AWS_PROFILE", "")
	_, err = Load(context.Background(), Options{Region: "eu-west-1", Profile: "nope"})
	if err == nil || !strings.Contains(err.Error(), `profile "nope" from --profile`) {
		t.Errorf("--profile nope: err = %v", err)
	}
}

func TestQueueURLRegion(t *testing.T) {
	for url, want := range map[string]string{
		"https://sqs.us-east-1.amazonaws.com/123456789012/q":     "us-east-1",
		"https://eu-west-1.queue.amazonaws.com/123456789012/q":   "eu-west-1",
		"https://sqs.cn-north-1.amazonaws.com.cn/1/q":            "",
		"http://127.0.0.1:5000/123456789012/q":                   "",
		"not a url":                                              "",
		"https://sqs.ap-northeast-1.amazonaws.com/123456789012/": "ap-northeast-1",
	} {
		if got := QueueURLRegion(url); got != want {
			t.Errorf("QueueURLRegion(%q) = %q, want %q", url, got, want)
		}
	}
	region, note := QueueRegion("eu-west-1", "https://sqs.us-east-1.amazonaws.com/1/q")
	if region != "us-east-1" || !strings.Contains(note, "using us-east-1") {
		t.Errorf("QueueRegion: %s, %q", region, note)
	}
	if region, note := QueueRegion("eu-west-1", "https://sqs.eu-west-1.amazonaws.com/1/q"); note != "" || region != "eu-west-1" {
		t.Errorf("same region: note %q", note)
	}
}

func Config(t *testing.T, region string) aws.Config {
	isolate(t)
	c, err := Load(context.Background(), Options{Region: region, EndpointURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
