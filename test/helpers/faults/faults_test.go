package faults_test

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/test/helpers/faults"
)

// backend answers every DynamoDB call with an empty JSON object (and its
// CRC32), everything else with 200.
func backend(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := `{}`
		if strings.HasPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB") {
			body = `{"TableNames":[` + strings.Repeat(`"dev-hoge-user",`, 200) + `"x"]}`
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE([]byte(body))))
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func config(t *testing.T, url string, attempts int) aws.Config {
	cfg, err := awsconfig.Load(context.Background(), awsconfig.Options{Region: "eu-west-1", EndpointURL: url, MaxAttempts: attempts})
	require.NoError(t, err)
	return cfg
}

func proxy(t *testing.T, rate float64, kinds ...faults.Kind) *faults.Proxy {
	p, err := faults.Start(backend(t), faults.Config{Rate: rate, Kinds: kinds, Seed: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// Each service's client decodes the injected error as the service's own
// error code, and dynops's retry policy retries it.
func TestErrorShapesPerService(t *testing.T) {
	ctx := context.Background()
	calls := map[string]func(aws.Config) error{
		"dynamodb": func(c aws.Config) error {
			_, err := dynamodb.NewFromConfig(c).ListTables(ctx, &dynamodb.ListTablesInput{})
			return err
		},
		"sqs": func(c aws.Config) error {
			_, err := sqs.NewFromConfig(c).ListQueues(ctx, &sqs.ListQueuesInput{})
			return err
		},
		"s3": func(c aws.Config) error {
			_, err := awsclients.New(c).S3().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("b")})
			return err
		},
		"lambda": func(c aws.Config) error {
			_, err := lambda.NewFromConfig(c).ListFunctions(ctx, &lambda.ListFunctionsInput{})
			return err
		},
		"sts": func(c aws.Config) error {
			_, err := sts.NewFromConfig(c).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
			return err
		},
	}
	want := map[string]map[faults.Kind][]string{
		"dynamodb": {faults.Throttle: {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"},
			faults.Error500: {"InternalServerError"}, faults.Error503: {"ServiceUnavailableException"}},
		"sqs":    {faults.Throttle: {"RequestThrottled", "ThrottlingException"}, faults.Error500: {"InternalError", "InternalFailure"}, faults.Error503: {"ServiceUnavailable"}},
		"s3":     {faults.Throttle: {"SlowDown"}, faults.Error500: {"InternalError"}, faults.Error503: {"SlowDown"}},
		"lambda": {faults.Throttle: {"TooManyRequestsException"}, faults.Error500: {"ServiceException"}, faults.Error503: {"ServiceException"}},
		"sts":    {faults.Throttle: {"Throttling"}, faults.Error500: {"InternalFailure"}, faults.Error503: {"ServiceUnavailable"}},
	}
	retryer := awsconfig.Retryer(0)
	for svc, call := range calls {
		for kind, codes := range want[svc] {
			t.Run(svc+"/"+string(kind), func(t *testing.T) {
				p := proxy(t, 1, kind)
				err := call(config(t, p.URL, 1))
				require.Error(t, err)
				var ae smithy.APIError
				require.True(t, errors.As(err, &ae), "%v", err)
				assert.Contains(t, codes, ae.ErrorCode(), "%v", err)
				assert.True(t, retryer.IsErrorRetryable(err), "dynops retries %s %s: %v", svc, kind, err)
			})
		}
	}
}

// A connection reset half-way through a response, and a response cut short,
// are retried; slow bodies and latency only slow the call down.
func TestForwardedFaults(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []faults.Kind{faults.Reset, faults.SlowBody, faults.Latency} {
		t.Run(string(kind), func(t *testing.T) {
			p := proxy(t, 1, kind)
			_, err := dynamodb.NewFromConfig(config(t, p.URL, 1)).ListTables(ctx, &dynamodb.ListTablesInput{})
			if kind == faults.Reset {
				require.Error(t, err)
				assert.True(t, awsconfig.Retryer(0).IsErrorRetryable(err), "%v", err)
				return
			}
			require.NoError(t, err)
		})
	}
}

// At 30 % faults of every kind, dynops's retry policy carries every call.
func TestRetryPolicyCarriesThirtyPercent(t *testing.T) {
	p := proxy(t, 0.3)
	db := dynamodb.NewFromConfig(config(t, p.URL, 0))
	for i := 0; i < 60; i++ {
		_, err := db.ListTables(context.Background(), &dynamodb.ListTablesInput{})
		require.NoError(t, err, "call %d", i)
	}
	counts, total := p.Counts()
	t.Logf("%d requests, faults: %v", total, counts)
	for _, k := range faults.All {
		assert.NotZero(t, counts[k], "%s was injected", k)
	}
}

// A HEAD response keeps the Content-Length the emulator sent (the object's
// size), whatever the fault: S3 HeadObject reads sizes from it.
func TestHeadKeepsContentLength(t *testing.T) {
	for _, kind := range []faults.Kind{faults.SlowBody, faults.Latency, faults.Reset} {
		t.Run(string(kind), func(t *testing.T) {
			p := proxy(t, 1, kind)
			req, err := http.NewRequest(http.MethodHead, p.URL+"/bucket/key", nil)
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			if kind == faults.Reset && err != nil {
				return // the connection was reset: nothing was read
			}
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.EqualValues(t, 2, resp.ContentLength, "the backend's Content-Length of the {} it would send")
		})
	}
}
