// Package awsconfig is the one place dynops loads AWS configuration: profile,
// region, endpoint (the local emulator or a VPC endpoint) and retries.
package awsconfig

import (
	"context"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwschemas "github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"
)

// Options select the configuration; empty fields fall back to the SDK's
// defaults (environment, shared config files).
type Options struct {
	Region      string
	Profile     string
	EndpointURL string // e.g. http://127.0.0.1:5000 for the emulator; AWS_ENDPOINT_URL works too
	MaxAttempts int    // 0: the SDK default
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
	if o.MaxAttempts > 0 {
		opts = append(opts, config.WithRetryer(func() aws.Retryer {
			return retry.AddWithMaxAttempts(retry.NewStandard(), o.MaxAttempts)
		}))
	}
	if o.EndpointURL != "" {
		u, err := url.Parse(o.EndpointURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return aws.Config{}, fmt.Errorf("--endpoint-url %q is not a URL; pass e.g. http://127.0.0.1:5000", o.EndpointURL)
		}
		opts = append(opts, config.WithBaseEndpoint(o.EndpointURL))
		if isLoopback(u.Hostname()) {
			// A local emulator accepts any signature; spare the user fake credentials
			// unless they set some.
			opts = append(opts, config.WithCredentialsProvider(fallbackCredentials{}))
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading AWS configuration (profile %q): %w", o.Profile, err)
	}
	if cfg.Region == "" {
		return aws.Config{}, fmt.Errorf("no AWS region: pass --region or set AWS_REGION")
	}
	return cfg, nil
}

// ForRegion returns a copy of cfg that talks to region.
func ForRegion(cfg aws.Config, region string) aws.Config {
	c := cfg.Copy()
	c.Region = region
	return c
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "::1" || (len(host) > 4 && host[:4] == "127.")
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

// CloudWatchQueryProtocol makes a CloudWatch client speak awsQuery instead of
// the SDK's default (Smithy RPC v2 CBOR): AWS accepts both, the local emulator
// (moto 5.2.1) only awsQuery, so one code path serves both. Use it as
// cloudwatch.NewFromConfig(cfg, awsconfig.CloudWatchQueryProtocol).
func CloudWatchQueryProtocol(o *cloudwatch.Options) {
	o.Protocol = awsquery.New(cwschemas.GraniteServiceVersion20100801)
}
