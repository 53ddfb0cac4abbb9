// Package awsconfig is the one place dynops loads AWS configuration: profile,
// region, endpoint (the local emulator or a VPC endpoint) and retries.
package awsconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"

	"github.com/dynops/dynops/internal/awsclients"
)

// Options select the configuration; empty fields fall back to the SDK's
// defaults (environment, shared config files).
type Options struct {
	Region      string
	Profile     string
	EndpointURL string // e.g. http://127.0.0.1:5000 for the emulator; AWS_ENDPOINT_URL works too
	// AllowInsecureEndpoint lets a plain-http endpoint on another host than
	// this machine carry signed requests (--allow-insecure-endpoint).
	AllowInsecureEndpoint bool
	MaxAttempts           int // 0: the SDK default
	// Timeout bounds every AWS operation, retries included (0: DefaultTimeout);
	// the connect and TLS handshake of each attempt get at most 10 s of it.
	Timeout time.Duration
	// Debug logs each request and response (the SDK's client log mode) to
	// LogOutput, with credentials redacted, and keeps the raw SDK error chain
	// in translated errors. Without it the SDK's own log is discarded.
	Debug     bool
	LogOutput io.Writer
	// Unanswered, when set, is shared by every configuration of one run: an
	// endpoint that timed out is not waited on again (see Unanswered).
	Unanswered *Unanswered
}

// Load returns an aws.Config for o, or an error naming what is missing.
func Load(ctx context.Context, o Options) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	if o.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(o.Profile))
	}
	opts = append(opts, config.WithRetryer(func() aws.Retryer { return Retryer(o.MaxAttempts) }))
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	connect := connectTimeout(timeout)
	opts = append(opts, config.WithHTTPClient(awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = connect }).
		WithTransportOptions(func(tr *http.Transport) { tr.TLSHandshakeTimeout = connect })))
	g := &guard{timeout: timeout, slow: operationTimeouts(), endpoint: o.EndpointURL, debug: o.Debug, unanswered: o.Unanswered}
	opts = append(opts, config.WithAPIOptions([]func(*middleware.Stack) error{g.addTo}))
	secrets := newRedactor()
	if o.Debug {
		w := o.LogOutput
		if w == nil {
			w = os.Stderr
		}
		opts = append(opts, config.WithClientLogMode(aws.LogRequest|aws.LogResponse|aws.LogRetries),
			config.WithLogger(redactingLogger{out: logging.NewStandardLogger(w), secrets: secrets}))
	} else {
		// The SDK's own warnings (e.g. "failed to close HTTP response body")
		// are for --debug, not for a person reading the command's output.
		opts = append(opts, config.WithLogger(logging.Nop{}))
	}
	if raw, flag := o.EndpointURL, "--endpoint-url"; raw != "" || os.Getenv("AWS_ENDPOINT_URL") != "" {
		if raw == "" {
			raw, flag = os.Getenv("AWS_ENDPOINT_URL"), "AWS_ENDPOINT_URL"
		}
		u, err := parseEndpoint(flag, raw)
		if err != nil {
			return aws.Config{}, err
		}
		if err := checkEndpoint(flag, u, o.AllowInsecureEndpoint); err != nil {
			return aws.Config{}, err
		}
	}
	if o.EndpointURL != "" {
		u, _ := parseEndpoint("--endpoint-url", o.EndpointURL)
		opts = append(opts, config.WithBaseEndpoint(o.EndpointURL))
		if isLoopback(u.Hostname()) {
			// A local emulator accepts any signature; spare the user fake credentials
			// unless they set some.
			opts = append(opts, config.WithCredentialsProvider(fallbackCredentials{}))
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading AWS configuration (%s): %w; check the profile's name in ~/.aws/config (aws configure list-profiles)", profileName(o.Profile), err)
	}
	if cfg.Region == "" {
		return aws.Config{}, fmt.Errorf("no AWS region (%s): pass --region or set AWS_REGION", profileName(o.Profile))
	}
	if err := CheckRegion(cfg.Region, regionSource(o.Region, o.Profile)); err != nil {
		return aws.Config{}, err
	}
	if o.Debug && cfg.Credentials != nil {
		// Every credential value the run uses is redacted from the log, as
		// well as the headers and query parameters that carry them.
		cfg.Credentials = aws.NewCredentialsCache(recordingProvider{inner: cfg.Credentials, secrets: secrets})
	}
	g.account = accountLookup(cfg, timeout)
	return cfg, nil
}

// profileName says which profile was used and where it came from.
func profileName(flag string) string {
	switch {
	case flag != "":
		return fmt.Sprintf("profile %q from --profile", flag)
	case os.Getenv("AWS_PROFILE") != "":
		return fmt.Sprintf("profile %q from AWS_PROFILE", os.Getenv("AWS_PROFILE"))
	}
	return "the default profile"
}

// accountLookup returns a function that reads the caller's account once
// (sts:GetCallerIdentity), best effort: "" when it cannot be read.
func accountLookup(cfg aws.Config, timeout time.Duration) func(context.Context) string {
	var once sync.Once
	var account string
	return func(ctx context.Context) string {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(timeout, 5*time.Second))
			defer cancel()
			out, err := awsclients.New(cfg).STS(0).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
			if err == nil {
				account = aws.ToString(out.Account)
			}
		})
		return account
	}
}

// DefaultMaxAttempts is how many times one call is tried (the SDK's default
// is 3): at a 30 % fault rate, 10 attempts leave about 6 failures in a
// million calls, and every command stops cleanly on those (see the README's
// guarantees).
const DefaultMaxAttempts = 10

// Retryer is dynops's one retry policy, for every client: the SDK's standard
// retryer
// on throttling (ThrottlingException, ProvisionedThroughputExceededException,
// RequestLimitExceeded, ...), 5xx and dropped, reset or cut-short
// connections, full-jitter backoff from 100 ms doubling to 5 s, with
// maxAttempts attempts (0: DefaultMaxAttempts) and no client-side retry
// quota: the standard quota (500 tokens, 5 per retry) runs dry in a long
// scan under sustained throttling and then fails calls that a retry would
// have carried. The SDK's adaptive mode was not chosen: its client-side
// token bucket also throttles the calls that are not being refused.
func Retryer(maxAttempts int) aws.Retryer {
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	return retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = maxAttempts
		so.MaxBackoff = 5 * time.Second
		so.Backoff = jitterBackoff{base: 100 * time.Millisecond, max: 5 * time.Second}
		so.RateLimiter = ratelimit.None
		so.Retryables = append(append([]retry.IsErrorRetryable{}, so.Retryables...), retry.IsErrorRetryableFunc(cutShort))
	})
}

// jitterBackoff is full-jitter exponential backoff from base (the SDK's
// starts at 1 s, which makes a 30 % fault rate cost seconds per call; AWS's
// own DynamoDB guidance and the SDK for Java v1 start at tens of ms).
type jitterBackoff struct{ base, max time.Duration }

func (b jitterBackoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	d := b.max
	if attempt < 30 {
		d = min(b.base<<attempt, b.max)
	}
	return time.Duration(rand.Int64N(int64(d)) + 1), nil
}

// cutShort: a response whose connection closed before its body ended (the
// SDK reads it whole before deciding) is a dropped connection, retried like
// a reset.
func cutShort(err error) aws.Ternary {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return aws.TrueTernary
	}
	return aws.UnknownTernary
}

// ServiceEndpoint returns the endpoint of one service, for that client's
// BaseEndpoint option, so that one service can go elsewhere than the rest (a
// local Lambda Invoke endpoint beside the emulator): raw, the value of flag
// (e.g. --lambda-endpoint-url), else AWS_ENDPOINT_URL_<SERVICE> (e.g.
// AWS_ENDPOINT_URL_LAMBDA for service "LAMBDA"). Either wins over
// --endpoint-url (the SDK alone lets --endpoint-url win over the variable).
// nil: the client keeps the configuration's endpoint.
func ServiceEndpoint(service, flag, raw string, allowInsecure bool) (*string, error) {
	if raw == "" {
		env := "AWS_ENDPOINT_URL_" + service
		if raw = os.Getenv(env); raw == "" {
			return nil, nil
		}
		flag = env
	}
	u, err := parseEndpoint(flag, raw)
	if err != nil {
		return nil, err
	}
	if err := checkEndpoint(flag, u, allowInsecure); err != nil {
		return nil, err
	}
	return &raw, nil
}

// fallbackCredentials uses the environment's credentials when present and
// static test credentials otherwise (only ever used for loopback endpoints).
type fallbackCredentials struct{}

func (fallbackCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	env, err := config.NewEnvConfig()
	if err == nil && env.Credentials.HasKeys() {
		return env.Credentials, nil
	}
	return aws.Credentials{AccessKeyID: "testing", SecretAccessKey: "testing", Source: "dynops-emulator"}, nil
}
