package awsconfig

import (
	"context"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	ctx := context.Background()

	if _, err := Load(ctx, Options{}); err == nil || !strings.Contains(err.Error(), "pass --region or set AWS_REGION") {
		t.Errorf("no region: err = %v", err)
	}
	if _, err := Load(ctx, Options{Region: "eu-west-1", EndpointURL: "127.0.0.1:5000"}); err == nil || !strings.Contains(err.Error(), "--endpoint-url") {
		t.Errorf("endpoint without scheme: err = %v", err)
	}

	cfg, err := Load(ctx, Options{Region: "eu-west-1", EndpointURL: "http://127.0.0.1:5000", MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != "http://127.0.0.1:5000" || cfg.Retryer().MaxAttempts() != 2 {
		t.Errorf("endpoint %v, attempts %d", cfg.BaseEndpoint, cfg.Retryer().MaxAttempts())
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "testing" {
		t.Errorf("loopback endpoint without credentials gets test credentials: %v, %v", creds.AccessKeyID, err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	cfg, _ = Load(ctx, Options{Region: "eu-west-1", EndpointURL: "http://localhost:5000"})
	if creds, _ := cfg.Credentials.Retrieve(ctx); creds.AccessKeyID != "AKIAEXAMPLE" {
		t.Errorf("environment credentials win: got %s", creds.AccessKeyID)
	}
}
