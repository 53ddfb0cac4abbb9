package factory

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/protect"
)

func TestConfirm(t *testing.T) {
	p := protect.NewPolicy()
	prod := p.Decide(protect.Target{Kind: protect.Table, Name: "prod-a-b"})
	legacy := p.Decide(protect.Target{Kind: protect.Table, Name: "PROD-hoge-legacy"})
	dev := p.Decide(protect.Target{Kind: protect.Table, Name: "dev-a-b", Tags: map[string]string{}})
	devFn := p.Decide(protect.Target{Kind: protect.Function, Name: "dev-a-fn", Tags: map[string]string{}})
	prodFn := p.Decide(protect.Target{Kind: protect.Function, Name: "prod-a-fn", Tags: map[string]string{}})
	one := func(d ...protect.Decision) []protect.Decision { return d }
	cases := []struct {
		name      string
		c         Confirmation
		tty       bool
		typed     string
		want      bool
		wantErr   string
		wantUsage bool
	}{
		{name: "no --yes is a dry run", c: Confirmation{Targets: one(dev)}, want: false},
		{name: "no --yes on a protected target is a dry run too", c: Confirmation{Targets: one(prod)}, want: false},
		{name: "--yes on an unprotected target proceeds", c: Confirmation{Yes: true, Targets: one(dev)}, want: true},
		{name: "--yes with the right --confirm on an unprotected target proceeds", c: Confirmation{Yes: true, Targets: one(dev), Typed: []string{"dev-a-b"}}, want: true},
		{name: "protected without a terminal is refused", c: Confirmation{Yes: true, Targets: one(prod)}, wantErr: "--confirm prod-a-b", wantUsage: true},
		{name: "the refusal says why", c: Confirmation{Yes: true, Targets: one(legacy)}, wantErr: `starts with "prod"`, wantUsage: true},
		{name: "protected with --confirm NAME proceeds", c: Confirmation{Yes: true, Targets: one(prod), Typed: []string{"prod-a-b"}}, want: true},
		{name: "protected with a wrong --confirm is a usage error", c: Confirmation{Yes: true, Targets: one(prod), Typed: []string{"prod-a-c"}}, wantErr: "does not match", wantUsage: true},
		{name: "unprotected with a wrong --confirm is a usage error", c: Confirmation{Yes: true, Targets: one(dev), Typed: []string{"dev-a-c"}}, wantErr: "does not match", wantUsage: true},
		{name: "a wrong --confirm in a dry run is a usage error", c: Confirmation{Targets: one(dev), Typed: []string{"prod-a-b"}}, wantErr: "does not match", wantUsage: true},
		{name: "a wrong --confirm with a terminal is a usage error", c: Confirmation{Yes: true, Targets: one(prod), Typed: []string{"x"}}, tty: true, typed: "prod-a-b\n", wantErr: "does not match", wantUsage: true},
		{name: "--confirm differing in case is a mismatch", c: Confirmation{Yes: true, Targets: one(legacy), Typed: []string{"prod-hoge-legacy"}}, wantErr: "does not match", wantUsage: true},
		{name: "protected typed at the prompt proceeds", c: Confirmation{Yes: true, Targets: one(prod)}, tty: true, typed: "prod-a-b\n", want: true},
		{name: "protected mistyped at the prompt is refused", c: Confirmation{Yes: true, Targets: one(prod)}, tty: true, typed: "prod-a\n", wantErr: `"prod-a" was typed, not its name; type prod-a-b, or pass --confirm prod-a-b: not confirmed: nothing was changed`, wantUsage: true},
		{name: "protected typed at a prompt closed without a newline proceeds", c: Confirmation{Yes: true, Targets: one(prod)}, tty: true, typed: "prod-a-b", want: true},
		{name: "a wrong --confirm names the one target", c: Confirmation{Yes: true, Targets: one(dev), Typed: []string{"dev-a-c"}}, wantErr: `"dev-a-c" does not match the target "dev-a-b"`, wantUsage: true},
		{name: "a wrong --confirm names every target", c: Confirmation{Yes: true, Targets: one(dev, prodFn), Typed: []string{"dev-a-c"}}, wantErr: `does not match any of the targets "dev-a-b", "prod-a-fn"`, wantUsage: true},
		{name: "protected with the prompt closed is refused", c: Confirmation{Yes: true, Targets: one(prod)}, tty: true, typed: "", wantErr: "no name was typed (the prompt closed)", wantUsage: true},
		{name: "queue unprotected, function protected: refused", c: Confirmation{Yes: true, Targets: one(dev, prodFn)}, wantErr: "--confirm prod-a-fn", wantUsage: true},
		{name: "queue unprotected, function protected and confirmed", c: Confirmation{Yes: true, Targets: one(dev, prodFn), Typed: []string{"prod-a-fn"}}, want: true},
		{name: "two protected, one confirmed: refused", c: Confirmation{Yes: true, Targets: one(prod, prodFn), Typed: []string{"prod-a-b"}}, wantErr: "--confirm prod-a-fn", wantUsage: true},
		{name: "two protected, both confirmed", c: Confirmation{Yes: true, Targets: one(prod, prodFn), Typed: []string{"prod-a-fn", "prod-a-b"}}, want: true},
		{name: "two protected, both typed at prompts", c: Confirmation{Yes: true, Targets: one(prod, prodFn)}, tty: true, typed: "prod-a-b\nprod-a-fn\n", want: true},
		{name: "two protected, second mistyped", c: Confirmation{Yes: true, Targets: one(prod, prodFn)}, tty: true, typed: "prod-a-b\nprod-a\n", wantErr: `prod-a-fn is protected: "prod-a" was typed`, wantUsage: true},
		{name: "all unprotected proceeds", c: Confirmation{Yes: true, Targets: one(dev, devFn)}, want: true},
		{name: "no target is refused", c: Confirmation{Yes: true}, wantErr: "no target"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ios, in, _, errOut := iostreams.Test()
			ios.SetTTY(tc.tty, tc.tty, tc.tty)
			in.WriteString(tc.typed)
			f := New(ios)
			got, err := f.Confirm(tc.c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if IsUsageError(err) != tc.wantUsage {
					t.Errorf("IsUsageError = %v, want %v (exit 2 for bad input)", IsUsageError(err), tc.wantUsage)
				}
				if got {
					t.Fatal("a refused confirmation must not proceed")
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Confirm = %v, %v; want %v, nil", got, err, tc.want)
			}
			if tc.tty && !strings.Contains(errOut.String(), "Type its name") {
				t.Errorf("prompt not shown: %q", errOut.String())
			}
			if tc.tty && !strings.Contains(errOut.String(), "PROTECTED (") {
				t.Errorf("prompt does not say why: %q", errOut.String())
			}
		})
	}
}

func TestProtectPolicyReadsFlagAndEnvironment(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := New(ios)
	f.Getenv = func(k string) string {
		return map[string]string{protect.EnvProtected: "perf", "HOME": t.TempDir()}[k]
	}
	f.Flags.ProtectedEnvs = []string{"stg"}
	ds, err := f.Protection(
		protect.Target{Kind: protect.Table, Name: "stg-a-b", Tags: map[string]string{}},
		protect.Target{Kind: protect.Table, Name: "perf-a-b", Tags: map[string]string{}},
		protect.Target{Kind: protect.Table, Name: "dev-a-b", Tags: map[string]string{}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if !ds[0].Protected || !strings.Contains(ds[0].Reason, "--protected-envs") {
		t.Errorf("stg: %s", ds[0])
	}
	if !ds[1].Protected || !strings.Contains(ds[1].Reason, protect.EnvProtected) {
		t.Errorf("perf: %s", ds[1])
	}
	if ds[2].Protected {
		t.Errorf("dev: %s", ds[2])
	}
}

func TestUsageError(t *testing.T) {
	err := UsageErrorf("bad --time %q", "x")
	if !IsUsageError(err) || IsUsageError(errors.New("other")) {
		t.Fatal("IsUsageError must recognise only usage errors")
	}
}

// TestAWSLoadedOncePerRun: every command of a run shares one loaded
// configuration (a backfill used to load it three times); a failed load is
// not kept, and a caller's change to its copy does not reach the next caller.
func TestAWSLoadedOncePerRun(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := New(ios)
	loads := 0
	fail := true
	f.LoadAWS = func(ctx context.Context, o awsconfig.Options) (aws.Config, error) {
		loads++
		if fail {
			return aws.Config{}, errors.New("no credentials")
		}
		return aws.Config{Region: "eu-west-1"}, nil
	}
	if _, err := f.AWS(context.Background()); err == nil {
		t.Fatal("a failed load must fail the call")
	}
	fail = false
	first, err := f.AWS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if other := first.In("us-east-1"); other.Region() != "us-east-1" {
		t.Fatalf("In(us-east-1): %s", other.Region())
	}
	queue, err := f.AWSForQueue(context.Background(), "https://sqs.us-east-1.amazonaws.com/123456789012/q")
	if err != nil || queue.Region() != "us-east-1" {
		t.Fatalf("the queue's region: %s, %v", queue.Region(), err)
	}
	second, err := f.AWS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if loads != 2 {
		t.Errorf("loads = %d, want 2 (one failed, then one kept for the run)", loads)
	}
	if second.Region() != "eu-west-1" {
		t.Errorf("second caller got Region %q: one caller's override leaked into the shared configuration", second.Region())
	}
}

// TestConfirmFlagRepeatableAndCommaSeparated: every command's --confirm
// keeps every value, repeated or comma-separated.
func TestConfirmFlagRepeatableAndCommaSeparated(t *testing.T) {
	for args, want := range map[string][]string{
		"--confirm a":                  {"a"},
		"--confirm a --confirm b":      {"a", "b"},
		"--confirm a,b":                {"a", "b"},
		"--confirm a,b --confirm c":    {"a", "b", "c"},
		"--confirm=prod-q-dlq,prod-fn": {"prod-q-dlq", "prod-fn"},
	} {
		var got []string
		fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
		AddConfirmFlag(fl, &got, "a name")
		if err := fl.Parse(strings.Fields(args)); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q, want %q", args, got, want)
		}
	}
}

// TestPrintResultAddsThrottles: a result printed after DynamoDB throttled
// the run carries the attempts per reason; without throttles, or for a
// result that is not an object, it is printed as it is.
func TestPrintResultAddsThrottles(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	f := New(ios)
	if err := f.PrintResult(map[string]int{"written": 3}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "throttles") {
		t.Fatalf("no throttle, no throttles field: %s", out)
	}
	f.Throttles().Observe(&types.ThrottlingException{ThrottlingReasons: []types.ThrottlingReason{
		{Reason: aws.String("TableWriteKeyRangeThroughputExceeded"), Resource: aws.String("arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user")}}})
	out.Reset()
	if err := f.PrintResult(map[string]int{"written": 3}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Written   int              `json:"written"`
		Throttles map[string]int64 `json:"throttles"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Written != 3 || got.Throttles["TableWriteKeyRangeThroughputExceeded"] != 1 {
		t.Fatalf("got %+v from %s", got, out)
	}
	out.Reset()
	if err := f.PrintResult([]int{1}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) != "[\n  1\n]" {
		t.Fatalf("a list is printed as it is: %q", out)
	}
}
