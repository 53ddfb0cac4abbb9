package redrive

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

// fakeFunctions answers the protection reads of a function (decision logic
// only: the emulator runs of this guard are in test/robustness/badinput).
type fakeFunctions struct {
	tags  map[string]map[string]string // by name
	calls int
}

func (c *fakeFunctions) GetFunctionConfiguration(_ context.Context, in *lambda.GetFunctionConfigurationInput, _ ...func(*lambda.Options)) (*lambda.GetFunctionConfigurationOutput, error) {
	c.calls++
	name := aws.ToString(in.FunctionName)
	if _, ok := c.tags[name]; !ok {
		return nil, errors.New("ResourceNotFoundException: " + name)
	}
	return &lambda.GetFunctionConfigurationOutput{FunctionArn: aws.String("arn:aws:lambda:eu-west-1:123456789012:function:" + name)}, nil
}

func (c *fakeFunctions) ListTags(_ context.Context, in *lambda.ListTagsInput, _ ...func(*lambda.Options)) (*lambda.ListTagsOutput, error) {
	c.calls++
	arn := aws.ToString(in.Resource)
	// only this account's functions in eu-west-1 exist; another account's
	// is refused like AWS refuses a ListTags without a grant
	const home = "arn:aws:lambda:eu-west-1:123456789012:function:"
	if !strings.HasPrefix(arn, home) {
		return nil, errors.New("AccessDeniedException: " + arn)
	}
	return &lambda.ListTagsOutput{Tags: c.tags[strings.TrimPrefix(arn, home)]}, nil
}

// TestFunctionGuard: a function a message names that was not decided before
// the run (e.g. in a message that arrived since) is decided when it comes
// up: a protected one is not invoked (its message is kept), an unprotected
// one is, and one decided before is not read again.
func TestFunctionGuard(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := factory.New(ios)
	f.Getenv = func(string) string { return "" }
	fns := &fakeFunctions{tags: map[string]map[string]string{
		"prod-hoge-consumer": {},
		"dev-hoge-consumer":  {"env": "dev"},
		"dev-hoge-tagged":    {"env": "prod"},
	}}
	g := &functionGuard{f: f, client: fns, allowed: map[string]bool{"arn:aws:lambda:eu-west-1:123456789012:function:dev-hoge-decided": true}, arns: map[string]string{}}
	ctx := context.Background()
	for _, tc := range []struct {
		fn, wantErr string
	}{
		{"prod-hoge-consumer", "not invoked: function prod-hoge-consumer (protected: its name starts with \"prod\""},
		{"arn:aws:lambda:eu-west-1:123456789012:function:prod-hoge-consumer", "--confirm prod-hoge-consumer"},
		{"dev-hoge-tagged", "not invoked: function dev-hoge-tagged (protected: tag env=prod"},
		{"dev-hoge-missing", "not invoked"}, // tags that cannot be read: protected
		{"dev-hoge-consumer", ""},
		{"arn:aws:lambda:eu-west-1:123456789012:function:dev-hoge-decided", ""},
		{"arn:aws:lambda:eu-west-1:123456789012:function:dev-hoge-decided:live", ""},
		// same names, another account or region: decided on their own ARN
		{"arn:aws:lambda:eu-west-1:999999999999:function:dev-hoge-decided", "not invoked: function dev-hoge-decided (protected: its tags could not be read"},
		{"arn:aws:lambda:us-east-1:123456789012:function:dev-hoge-consumer", "not invoked"},
		{"arn:aws:lambda:eu-west-1:999999999999:function:dev-hoge-consumer:1", "AccessDenied"},
	} {
		err := g.allow(ctx, tc.fn)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("allow(%s) = %v, want %q", tc.fn, err, tc.wantErr)
		}
	}
	calls := fns.calls
	if err := g.allow(ctx, "dev-hoge-consumer"); err != nil || fns.calls != calls {
		t.Errorf("an allowed function is read again (%d reads) or refused (%v)", fns.calls-calls, err)
	}
	if err := g.allow(ctx, "prod-hoge-consumer"); err == nil {
		t.Error("a refused function is allowed the second time")
	}
}
