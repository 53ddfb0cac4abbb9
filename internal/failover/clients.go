// Package failover moves the writes of a DynamoDB global table from one region
// to another and back (DDB-DR-01, pattern 4): it inspects every region
// (replica status, replication latency, the active-region pointer, the write
// fence), decides whether a switch is safe (preflight), and runs the switch as
// a sequence of named steps: fence the old region with a table resource
// policy, flip the pointer in every region (and Route 53 where configured),
// then verify with a canary item. A step that fails stops the run and the
// result says how to roll back.
package failover

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/fis"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/dynops/dynops/internal/awsclients"
)

// DynamoDB is the part of the DynamoDB API failover uses in one region.
type DynamoDB interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	GetResourcePolicy(context.Context, *dynamodb.GetResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.GetResourcePolicyOutput, error)
	PutResourcePolicy(context.Context, *dynamodb.PutResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.PutResourcePolicyOutput, error)
	DeleteResourcePolicy(context.Context, *dynamodb.DeleteResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteResourcePolicyOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// SSM reads and writes the active-region pointer.
type SSM interface {
	GetParameter(context.Context, *ssm.GetParameterInput, ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
	PutParameter(context.Context, *ssm.PutParameterInput, ...func(*ssm.Options)) (*ssm.PutParameterOutput, error)
}

// CloudWatch reads ReplicationLatency.
type CloudWatch interface {
	GetMetricData(context.Context, *cloudwatch.GetMetricDataInput, ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error)
}

// Route53 inverts and restores failover health checks.
type Route53 interface {
	GetHealthCheck(context.Context, *route53.GetHealthCheckInput, ...func(*route53.Options)) (*route53.GetHealthCheckOutput, error)
	UpdateHealthCheck(context.Context, *route53.UpdateHealthCheckInput, ...func(*route53.Options)) (*route53.UpdateHealthCheckOutput, error)
}

// Experiments lists AWS FIS experiments (a failover asks whether the
// env's pause experiment runs).
type Experiments interface {
	ListExperiments(context.Context, *fis.ListExperimentsInput, ...func(*fis.Options)) (*fis.ListExperimentsOutput, error)
}

// Clients are the API clients of one region.
type Clients struct {
	DynamoDB   DynamoDB
	SSM        SSM
	CloudWatch CloudWatch
	FIS        Experiments
}

// Regional returns the clients of a region.
type Regional func(region string) Clients

// RegionalFrom returns the clients of each region from one set (its config
// in that region).
func RegionalFrom(s awsclients.Set) Regional {
	return func(region string) Clients {
		r := s.In(region)
		return Clients{DynamoDB: r.DynamoDB(), SSM: r.SSM(), CloudWatch: r.CloudWatch(), FIS: r.FIS()}
	}
}
