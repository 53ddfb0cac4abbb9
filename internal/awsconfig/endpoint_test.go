package awsconfig

import (
	"strings"
	"testing"
)

func TestServiceEndpoint(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", "")
	if got, err := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", ""); got != nil || err != nil {
		t.Errorf("no flag, no variable: got %v, %v; want nil (the configuration's endpoint)", got, err)
	}
	if got, err := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", "http://127.0.0.1:9001"); err != nil || *got != "http://127.0.0.1:9001" {
		t.Errorf("flag: got %v, %v", got, err)
	}
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", "http://127.0.0.1:9002")
	if got, err := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", ""); err != nil || *got != "http://127.0.0.1:9002" {
		t.Errorf("variable: got %v, %v", got, err)
	}
	if got, _ := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", "http://127.0.0.1:9001"); *got != "http://127.0.0.1:9001" {
		t.Errorf("the flag wins over the variable: got %s", *got)
	}
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", "not a url")
	if _, err := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", ""); err == nil || !strings.Contains(err.Error(), `AWS_ENDPOINT_URL_LAMBDA "not a url" is not a URL`) {
		t.Errorf("a bad variable is named in the error: %v", err)
	}
}
