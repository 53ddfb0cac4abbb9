// Package awsclients is the one place dynops builds AWS API clients. A Set
// wraps the run's aws.Config (loaded once by internal/awsconfig) and hands
// out each service's client with the settings dynops needs everywhere:
// CloudWatch over awsQuery (AWS and the emulator both accept it), S3 with
// path-style addressing behind an endpoint, and per-region copies that never
// change the run's own config. Commands get a Set from their factory
// (factory.AWS); the Lambda programs build one from their own config.
package awsclients

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	aas "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwschemas "github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/fis"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/securityhub"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssmincidents"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/dynops/dynops/internal/throttle"
)

// Set builds the clients of one configuration (one region).
type Set struct {
	cfg aws.Config
	// throttles, when set, counts the DynamoDB throttles of the run per reason.
	throttles *throttle.Recorder
}

// New returns the clients of cfg. cfg is copied: nothing a Set does changes it.
func New(cfg aws.Config) Set { return Set{cfg: cfg.Copy()} }

// Config returns a copy of the Set's configuration.
func (s Set) Config() aws.Config { return s.cfg.Copy() }

// Region is the region the Set's clients call.
func (s Set) Region() string { return s.cfg.Region }

// In returns the same clients in another region ("" or the same region: s).
func (s Set) In(region string) Set {
	if region == "" || region == s.cfg.Region {
		return s
	}
	return Set{cfg: ForRegion(s.cfg, region), throttles: s.throttles}
}

// CountingThrottles returns the same clients with every DynamoDB attempt
// seen by r (throttle.Recorder.Middleware): the reasons of the throttles
// the SDK retries, for the run's report and audit record.
func (s Set) CountingThrottles(r *throttle.Recorder) Set {
	s.throttles = r
	return s
}

// ForRegion returns a copy of cfg for another region.
func ForRegion(cfg aws.Config, region string) aws.Config {
	c := cfg.Copy()
	c.Region = region
	return c
}

// DynamoDB is the DynamoDB client.
func (s Set) DynamoDB() *dynamodb.Client {
	return dynamodb.NewFromConfig(s.cfg, func(o *dynamodb.Options) {
		if s.throttles != nil {
			o.APIOptions = append(o.APIOptions, s.throttles.Middleware)
		}
	})
}

// Streams is the DynamoDB Streams client.
func (s Set) Streams() *dynamodbstreams.Client { return dynamodbstreams.NewFromConfig(s.cfg) }

// AutoScaling is the Application Auto Scaling client (a table's scaling policies).
func (s Set) AutoScaling() *aas.Client { return aas.NewFromConfig(s.cfg) }

// S3 is the S3 client: path-style addressing when an endpoint is set (a
// local emulator has no per-bucket host names). Checksums are validated
// when S3 sends them; their absence is not logged (verify computes its own
// MD5s).
func (s Set) S3() *s3.Client {
	return s3.NewFromConfig(s.cfg, func(o *s3.Options) {
		o.UsePathStyle = s.cfg.BaseEndpoint != nil
		o.DisableLogOutputChecksumValidationSkipped = true
	})
}

// ECS is the ECS client (`runbook run --in-aws` starts and follows its task).
func (s Set) ECS() *ecs.Client { return ecs.NewFromConfig(s.cfg) }

// Batch is the AWS Batch client (the batch engine of sharded runs,
// internal/engine/batch).
func (s Set) Batch() *batch.Client { return batch.NewFromConfig(s.cfg) }

// SQS is the SQS client.
func (s Set) SQS() *sqs.Client { return sqs.NewFromConfig(s.cfg) }

// SSM is the SSM client (the active-region pointer, migration routes).
func (s Set) SSM() *ssm.Client { return ssm.NewFromConfig(s.cfg) }

// SNS is the SNS client (runbook notifications).
func (s Set) SNS() *sns.Client { return sns.NewFromConfig(s.cfg) }

// SecretsManager is the Secrets Manager client (a notification webhook's URL).
func (s Set) SecretsManager() *secretsmanager.Client { return secretsmanager.NewFromConfig(s.cfg) }

// Incidents is the Incident Manager client (runbook events on an incident
// record's timeline); endpoint, when not nil, overrides the config's
// (moto 5.2.1 has no ssm-incidents).
func (s Set) Incidents(endpoint *string) *ssmincidents.Client {
	return ssmincidents.NewFromConfig(s.cfg, func(o *ssmincidents.Options) {
		if endpoint != nil {
			o.BaseEndpoint = endpoint
		}
	})
}

// CloudWatch is the CloudWatch client, speaking awsQuery instead of the
// SDK's default (Smithy RPC v2 CBOR): AWS accepts both, the local emulator
// (moto 5.2.1) only awsQuery, so one code path serves both.
func (s Set) CloudWatch() *cloudwatch.Client {
	return cloudwatch.NewFromConfig(s.cfg, CloudWatchQueryProtocol)
}

// CloudWatchQueryProtocol is the option CloudWatch clients are built with
// (exported for tests that build their own).
func CloudWatchQueryProtocol(o *cloudwatch.Options) {
	o.Protocol = awsquery.New(cwschemas.GraniteServiceVersion20100801)
}

// CloudWatchLogs is the CloudWatch Logs client (the central audit copy).
func (s Set) CloudWatchLogs() *cloudwatchlogs.Client { return cloudwatchlogs.NewFromConfig(s.cfg) }

// Route53 is the Route 53 client (failover health checks).
func (s Set) Route53() *route53.Client { return route53.NewFromConfig(s.cfg) }

// FIS is the Fault Injection Service client (the pause-replication drill).
func (s Set) FIS() *fis.Client { return fis.NewFromConfig(s.cfg) }

// STS is the STS client; maxAttempts > 0 bounds its retries (a best-effort
// identity read), 0 keeps the run's retry policy.
func (s Set) STS(maxAttempts int) *sts.Client {
	return sts.NewFromConfig(s.cfg, func(o *sts.Options) {
		if maxAttempts > 0 {
			o.RetryMaxAttempts = maxAttempts
		}
	})
}

// Lambda is the Lambda client; endpoint, when not nil, overrides the
// config's (awsconfig.ServiceEndpoint: --lambda-endpoint-url).
func (s Set) Lambda(endpoint *string) *lambda.Client {
	return lambda.NewFromConfig(s.cfg, func(o *lambda.Options) {
		if endpoint != nil {
			o.BaseEndpoint = endpoint
		}
	})
}

// SecurityHub is the Security Hub client; endpoint, when not nil, overrides
// the config's (awsconfig.ServiceEndpoint).
func (s Set) SecurityHub(endpoint *string) *securityhub.Client {
	return securityhub.NewFromConfig(s.cfg, func(o *securityhub.Options) {
		if endpoint != nil {
			o.BaseEndpoint = endpoint
		}
	})
}
