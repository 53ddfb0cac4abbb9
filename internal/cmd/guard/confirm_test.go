package guard

import (
	"strings"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
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
		c         confirmation
		tty       bool
		typed     string
		want      bool
		wantErr   string
		wantUsage bool
	}{
		{name: "no --yes is a dry run", c: confirmation{targets: one(dev)}, want: false},
		{name: "no --yes on a protected target is a dry run too", c: confirmation{targets: one(prod)}, want: false},
		{name: "--yes on an unprotected target proceeds", c: confirmation{yes: true, targets: one(dev)}, want: true},
		{name: "--yes with the right --confirm on an unprotected target proceeds", c: confirmation{yes: true, targets: one(dev), typed: []string{"dev-a-b"}}, want: true},
		{name: "protected without a terminal is refused", c: confirmation{yes: true, targets: one(prod)}, wantErr: "--confirm prod-a-b", wantUsage: true},
		{name: "the refusal says why", c: confirmation{yes: true, targets: one(legacy)}, wantErr: `starts with "prod"`, wantUsage: true},
		{name: "protected with --confirm NAME proceeds", c: confirmation{yes: true, targets: one(prod), typed: []string{"prod-a-b"}}, want: true},
		{name: "protected with a wrong --confirm is a usage error", c: confirmation{yes: true, targets: one(prod), typed: []string{"prod-a-c"}}, wantErr: "does not match", wantUsage: true},
		{name: "unprotected with a wrong --confirm is a usage error", c: confirmation{yes: true, targets: one(dev), typed: []string{"dev-a-c"}}, wantErr: "does not match", wantUsage: true},
		{name: "a wrong --confirm in a dry run is a usage error", c: confirmation{targets: one(dev), typed: []string{"prod-a-b"}}, wantErr: "does not match", wantUsage: true},
		{name: "a wrong --confirm with a terminal is a usage error", c: confirmation{yes: true, targets: one(prod), typed: []string{"x"}}, tty: true, typed: "prod-a-b\n", wantErr: "does not match", wantUsage: true},
		{name: "--confirm differing in case is a mismatch", c: confirmation{yes: true, targets: one(legacy), typed: []string{"prod-hoge-legacy"}}, wantErr: "does not match", wantUsage: true},
		{name: "protected typed at the prompt proceeds", c: confirmation{yes: true, targets: one(prod)}, tty: true, typed: "prod-a-b\n", want: true},
		{name: "protected mistyped at the prompt is refused", c: confirmation{yes: true, targets: one(prod)}, tty: true, typed: "prod-a\n", wantErr: `"prod-a" was typed, not its name; type prod-a-b, or pass --confirm prod-a-b: not confirmed: nothing was changed`, wantUsage: true},
		{name: "protected typed at a prompt closed without a newline proceeds", c: confirmation{yes: true, targets: one(prod)}, tty: true, typed: "prod-a-b", want: true},
		{name: "a wrong --confirm names the one target", c: confirmation{yes: true, targets: one(dev), typed: []string{"dev-a-c"}}, wantErr: `"dev-a-c" does not match the target "dev-a-b"`, wantUsage: true},
		{name: "a wrong --confirm names every target", c: confirmation{yes: true, targets: one(dev, prodFn), typed: []string{"dev-a-c"}}, wantErr: `does not match any of the targets "dev-a-b", "prod-a-fn"`, wantUsage: true},
		{name: "protected with the prompt closed is refused", c: confirmation{yes: true, targets: one(prod)}, tty: true, typed: "", wantErr: "no name was typed (the prompt closed)", wantUsage: true},
		{name: "queue unprotected, function protected: refused", c: confirmation{yes: true, targets: one(dev, prodFn)}, wantErr: "--confirm prod-a-fn", wantUsage: true},
		{name: "queue unprotected, function protected and confirmed", c: confirmation{yes: true, targets: one(dev, prodFn), typed: []string{"prod-a-fn"}}, want: true},
		{name: "two protected, one confirmed: refused", c: confirmation{yes: true, targets: one(prod, prodFn), typed: []string{"prod-a-b"}}, wantErr: "--confirm prod-a-fn", wantUsage: true},
		{name: "two protected, both confirmed", c: confirmation{yes: true, targets: one(prod, prodFn), typed: []string{"prod-a-fn", "prod-a-b"}}, want: true},
		{name: "two protected, both typed at prompts", c: confirmation{yes: true, targets: one(prod, prodFn)}, tty: true, typed: "prod-a-b\nprod-a-fn\n", want: true},
		{name: "two protected, second mistyped", c: confirmation{yes: true, targets: one(prod, prodFn)}, tty: true, typed: "prod-a-b\nprod-a\n", wantErr: `prod-a-fn is protected: "prod-a" was typed`, wantUsage: true},
		{name: "all unprotected proceeds", c: confirmation{yes: true, targets: one(dev, devFn)}, want: true},
		{name: "no target is refused", c: confirmation{yes: true}, wantErr: "no target"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ios, in, _, errOut := iostreams.Test()
			ios.SetTTY(tc.tty, tc.tty, tc.tty)
			in.WriteString(tc.typed)
			f := factory.New(ios)
			got, err := confirm(f, tc.c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if factory.IsUsageError(err) != tc.wantUsage {
					t.Errorf("IsUsageError = %v, want %v (exit 2 for bad input)", factory.IsUsageError(err), tc.wantUsage)
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
	f := factory.New(ios)
	f.Getenv = func(k string) string {
		return map[string]string{protect.EnvProtected: "perf", "HOME": t.TempDir()}[k]
	}
	f.Flags.ProtectedEnvs = []string{"stg"}
	ds, err := protection(f,
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
