package awsconfig

import (
	"context"
	"strings"
	"testing"
)

func TestServiceEndpoint(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", "")
	if got, err := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", "", false); got != nil || err != nil {
		t.Errorf("no flag, no variable: got %v, %v; want nil (the configuration's endpoint)", got, err)
	}
	if got, err := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", "http://127.0.0.1:9001", false); err != nil || *got != "http://127.0.0.1:9001" {
		t.Errorf("flag: got %v, %v", got, err)
	}
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", "http://127.0.0.1:9002")
	if got, err := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", "", false); err != nil || *got != "http://127.0.0.1:9002" {
		t.Errorf("variable: got %v, %v", got, err)
	}
	if got, _ := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", "http://127.0.0.1:9001", false); *got != "http://127.0.0.1:9001" {
		t.Errorf("the flag wins over the variable: got %s", *got)
	}
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", "not a url")
	if _, err := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", "", false); err == nil || !strings.Contains(err.Error(), `AWS_ENDPOINT_URL_LAMBDA "not a url" is not a URL`) {
		t.Errorf("a bad variable is named in the error: %v", err)
	}
}

func TestIsLoopbackParsesTheHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "localhost.": true,
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "0:0:0:0:0:0:0:1": true, "::ffff:127.0.0.1": true,
		"127.evil.example": false, "127.0.0.1.nip.io": false, "localhost.evil.example": false, "evil-localhost": false,
		"10.0.0.1": false, "::": false, "0.0.0.0": false, "dynamodb.eu-west-1.amazonaws.com": false, "": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestPlainHTTPToAnotherHostRefused(t *testing.T) {
	isolate(t)
	t.Setenv("AWS_ENDPOINT_URL", "")
	ctx := context.Background()
	for _, endpoint := range []string{"http://127.evil.example:8000", "http://10.0.0.5:8000", "HTTP://dynamodb.internal", "http://[fe80::1]:8000"} {
		_, err := Load(ctx, Options{Region: "eu-west-1", EndpointURL: endpoint})
		if err == nil {
			t.Errorf("%s: loaded; want a refusal", endpoint)
			continue
		}
		u, _ := parseEndpoint("", endpoint)
		for _, w := range []string{"--endpoint-url", u.Hostname(), "--allow-insecure-endpoint", "https://"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", endpoint, err, w)
			}
		}
		if _, err := Load(ctx, Options{Region: "eu-west-1", EndpointURL: endpoint, AllowInsecureEndpoint: true}); err != nil {
			t.Errorf("%s with AllowInsecureEndpoint: %v", endpoint, err)
		}
		if _, err := ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", endpoint, false); err == nil || !strings.Contains(err.Error(), "--lambda-endpoint-url") {
			t.Errorf("%s as the Lambda endpoint: err = %v, want a refusal naming --lambda-endpoint-url", endpoint, err)
		}
	}
	for _, endpoint := range []string{"http://127.0.0.1:5000", "http://localhost:5000", "http://[::1]:5000", "https://10.0.0.5", "https://dynamodb.eu-west-1.amazonaws.com"} {
		if _, err := Load(ctx, Options{Region: "eu-west-1", EndpointURL: endpoint}); err != nil {
			t.Errorf("%s: %v; want it accepted", endpoint, err)
		}
	}
	t.Run("AWS_ENDPOINT_URL is checked too", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL", "http://db.example.net")
		_, err := Load(ctx, Options{Region: "eu-west-1"})
		if err == nil || !strings.Contains(err.Error(), "AWS_ENDPOINT_URL") || !strings.Contains(err.Error(), "db.example.net") {
			t.Errorf("err = %v, want a refusal naming AWS_ENDPOINT_URL and the host", err)
		}
	})
}
