package awsconfig

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/logging"
)

const (
	testKeyID   = "ASIAREDACTTESTKEY123"
	testSecret  = "sEcReT/redact+test0123456789abcdefghijkl"
	testSession = "SeSsIoNtOkEn//redact+test+FwoGZXIvYXdzEJr"
)

// TestDebugLogRedactsCredentials: --debug dumps every request and response;
// no credential value, signing header or presigned parameter may appear,
// including credentials a response body carries.
func TestDebugLogRedactsCredentials(t *testing.T) {
	isolate(t)
	t.Setenv("AWS_ACCESS_KEY_ID", testKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", testSecret)
	t.Setenv("AWS_SESSION_TOKEN", testSession)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		// a body echoing the credentials, as an STS/SSO answer would
		_, _ = w.Write([]byte(`{"TableNames":[],"SessionToken":"` + testSession + `","SecretAccessKey":"other-secret-value-xyz","url":"https://x/?X-Amz-Signature=abcdef0123&X-Amz-Credential=AKIA/20260101"}`))
	}))
	t.Cleanup(srv.Close)
	var log bytes.Buffer
	cfg, err := Load(context.Background(), Options{Region: "eu-west-1", EndpointURL: srv.URL, Debug: true, LogOutput: &log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynamodb.NewFromConfig(cfg).ListTables(context.Background(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	got := log.String()
	if !strings.Contains(got, "ListTables") || !strings.Contains(got, "Authorization: "+redacted) {
		t.Fatalf("the request was not logged with its Authorization redacted:\n%s", got)
	}
	for _, secret := range []string{testKeyID, testSecret, testSession, "other-secret-value-xyz", "abcdef0123", "AKIA/20260101", "Signature="} {
		if strings.Contains(got, secret) {
			t.Errorf("the --debug log shows %q:\n%s", secret, got)
		}
	}
}

func TestSDKLogOnlyWithDebug(t *testing.T) {
	isolate(t)
	cfg, err := Load(context.Background(), Options{Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Logger.(logging.Nop); !ok {
		t.Errorf("without --debug the SDK logs to %T; want logging.Nop (its warnings are --debug output)", cfg.Logger)
	}
}
