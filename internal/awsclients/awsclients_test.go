package awsclients

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestInCopiesTheConfig(t *testing.T) {
	cfg := aws.Config{Region: "eu-west-1"}
	s := New(cfg)
	w := s.In("us-west-2")
	if w.Region() != "us-west-2" || s.Region() != "eu-west-1" || cfg.Region != "eu-west-1" {
		t.Errorf("In must copy, not modify: %s, %s, %s", w.Region(), s.Region(), cfg.Region)
	}
	if s.In("").Region() != "eu-west-1" {
		t.Error(`In("") keeps the region`)
	}
	if got := s.In("us-west-2").DynamoDB().Options().Region; got != "us-west-2" {
		t.Errorf("a client of In(us-west-2) calls %s", got)
	}
}

func TestS3IsPathStyleBehindAnEndpoint(t *testing.T) {
	if New(aws.Config{Region: "eu-west-1"}).S3().Options().UsePathStyle {
		t.Error("AWS's own endpoint: virtual-hosted buckets")
	}
	if !New(aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String("http://127.0.0.1:5000")}).S3().Options().UsePathStyle {
		t.Error("an endpoint (the emulator, a VPC endpoint): path-style buckets")
	}
}

func TestEndpointOverrides(t *testing.T) {
	s := New(aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String("http://127.0.0.1:5000")})
	if got := aws.ToString(s.Lambda(aws.String("http://127.0.0.1:9001")).Options().BaseEndpoint); got != "http://127.0.0.1:9001" {
		t.Errorf("--lambda-endpoint-url: %s", got)
	}
	if got := aws.ToString(s.Lambda(nil).Options().BaseEndpoint); got != "http://127.0.0.1:5000" {
		t.Errorf("no override keeps the config's endpoint: %s", got)
	}
	if got := s.STS(2).Options().RetryMaxAttempts; got != 2 {
		t.Errorf("STS(2): %d attempts", got)
	}
}
