package protect

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	dev := map[string]string{"env": "dev"}
	cases := []struct {
		name      string
		target    Target
		protected bool
		reason    string // a part of the reason that must appear
	}{
		// Names alone (tags read, none of them env).
		{"DDB-NAME-01 dev name", Target{Kind: Table, Name: "dev-hoge-user", Tags: map[string]string{}}, false, `env "dev"`},
		{"DDB-NAME-01 stg name", Target{Kind: Table, Name: "stg-hoge-user"}, false, `env "stg"`},
		{"DDB-NAME-01 local name", Target{Kind: Table, Name: "local-hoge-user-restored-20261121t094500z"}, false, `env "local"`},
		{"prod name", Target{Kind: Table, Name: "prod-hoge-user"}, true, `"prod", a protected env`},
		{"PROD upper case", Target{Kind: Table, Name: "PROD-hoge-legacy"}, true, `"prod"`},
		{"Prod mixed case", Target{Kind: Table, Name: "Prod-hoge-user"}, true, `"prod"`},
		{"pRoD odd case", Target{Kind: Table, Name: "pRoD-hoge-user"}, true, `"prod"`},
		{"production", Target{Kind: Table, Name: "production-hoge-user"}, true, `"production"`},
		{"PRODUCTION", Target{Kind: Table, Name: "PRODUCTION-hoge-user"}, true, `"production"`},
		{"prd", Target{Kind: Table, Name: "prd-hoge-user"}, true, `"prd"`},
		{"live", Target{Kind: Table, Name: "live-hoge-user"}, true, `"live"`},
		{"prod with underscores", Target{Kind: Table, Name: "prod_hoge_user"}, true, `"prod"`},
		{"prod with dots", Target{Kind: Bucket, Name: "prod.hoge.exports"}, true, `"prod"`},
		{"prod, two words", Target{Kind: Table, Name: "prod-hoge"}, true, `"prod"`},
		{"prod alone", Target{Kind: Table, Name: "prod"}, true, `"prod"`},
		{"legacy name, no env word", Target{Kind: Table, Name: "UsersTable"}, true, "does not follow DDB-NAME-01"},
		{"legacy name, dev word but upper case", Target{Kind: Table, Name: "Dev-hoge-user"}, true, "does not follow DDB-NAME-01"},
		{"dev name with two words only", Target{Kind: Table, Name: "dev-hoge"}, true, "does not follow DDB-NAME-01"},
		{"dev name with a trailing dash", Target{Kind: Table, Name: "dev-hoge-"}, true, "does not follow DDB-NAME-01"},
		{"dev name with an underscore", Target{Kind: Table, Name: "dev-hoge_user-x"}, true, "does not follow DDB-NAME-01"},
		{"unknown env in a well-formed name", Target{Kind: Table, Name: "qa-hoge-user"}, true, `env "qa" of its name is not a known unprotected env`},
		{"prodlike word that is not prod", Target{Kind: Table, Name: "prodx-hoge-user"}, true, "not a known unprotected env"},
		{"empty name", Target{Kind: Table, Name: ""}, true, "no name"},
		{"blank name", Target{Kind: Table, Name: "  "}, true, "no name"},
		{"SSM parameter path", Target{Kind: Parameter, Name: "/dynops/dr/dev-hoge-user/active-region"}, true, "does not follow DDB-NAME-01"},
		{"queue with a dev name", Target{Kind: Queue, Name: "dev-hoge-order-dlq"}, false, `env "dev"`},
		{"function with a legacy name", Target{Kind: Function, Name: "order-consumer"}, true, "does not follow DDB-NAME-01"},

		// Tags.
		{"env tag prod on an innocuous name", Target{Kind: Table, Name: "dev-hoge-user", Tags: map[string]string{"env": "prod"}}, true, "tag env=prod"},
		{"env tag PROD upper case", Target{Kind: Table, Name: "dev-hoge-user", Tags: map[string]string{"env": "PROD"}}, true, "tag env=PROD"},
		{"Env key upper case", Target{Kind: Table, Name: "dev-hoge-user", Tags: map[string]string{"Env": "production"}}, true, "tag Env=production"},
		{"environment tag prd", Target{Kind: Table, Name: "sessions", Tags: map[string]string{"environment": "prd"}}, true, "tag environment=prd"},
		{"env tag dev on a legacy name", Target{Kind: Table, Name: "UsersTable", Tags: dev}, false, "tag env=dev"},
		{"env tag dev on a prod name", Target{Kind: Table, Name: "prod-hoge-user", Tags: dev}, true, `starts with "prod"`},
		{"env tag dev on a PROD legacy name", Target{Kind: Table, Name: "PROD-hoge-legacy", Tags: dev}, true, `starts with "prod"`},
		{"env tag stg, dev name", Target{Kind: Table, Name: "dev-hoge-user", Tags: map[string]string{"env": "stg"}}, false, "tag env=stg"},
		{"env tag unknown", Target{Kind: Table, Name: "dev-hoge-user", Tags: map[string]string{"env": "qa"}}, true, "tag env=qa"},
		{"env tag empty", Target{Kind: Table, Name: "dev-hoge-user", Tags: map[string]string{"env": ""}}, true, "env tag is empty"},
		{"env and environment disagree", Target{Kind: Table, Name: "dev-hoge-user", Tags: map[string]string{"env": "dev", "environment": "prod"}}, true, "environment=prod"},
		{"other tags only", Target{Kind: Table, Name: "legacy", Tags: map[string]string{"product": "hoge", "usage": "user"}}, true, "no env tag"},
		{"planned tags of a new table", Target{Kind: Table, Name: "dev-hoge-user", Tags: map[string]string{"env": "prod"}, TagsFrom: "--tag, to be written"}, true, "--tag, to be written"},

		// Tags that could not be read.
		{"tag read failure on a dev name", Target{Kind: Table, Name: "dev-hoge-user", TagsErr: errors.New("AccessDeniedException")}, true, "tags could not be read"},
		{"tag read failure on a prod name", Target{Kind: Table, Name: "prod-hoge-user", TagsErr: errors.New("timeout")}, true, "tags could not be read"},
		{"tag read failure with planned dev tags", Target{Kind: Queue, Name: "dev-hoge-q", Tags: dev, TagsErr: errors.New("x")}, true, "could not be read"},
	}
	p := NewPolicy()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := p.Decide(tc.target)
			if d.Protected != tc.protected {
				t.Fatalf("Decide(%+v).Protected = %v, want %v (reason: %s)", tc.target, d.Protected, tc.protected, d.Reason)
			}
			if !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("reason %q does not say %q", d.Reason, tc.reason)
			}
			if d.Name != tc.target.Name || d.Kind != tc.target.Kind {
				t.Errorf("decision names %s %s, want %s %s", d.Kind, d.Name, tc.target.Kind, tc.target.Name)
			}
		})
	}
}

func TestZeroPolicyProtectsEverything(t *testing.T) {
	var p Policy
	for _, n := range []string{"dev-hoge-user", "stg-a-b", "local-a-b"} {
		if d := p.Decide(Target{Kind: Table, Name: n}); !d.Protected {
			t.Errorf("the zero policy left %s unprotected: %s", n, d.Reason)
		}
	}
}

func TestLoadPolicy(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("protected_envs: [STG]\nunprotected_envs: [qa, prod]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("protected_envs: {not: a list\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name    string
		s       Settings
		table   string
		want    bool   // protected
		reason  string // part of the reason
		wantErr string
	}{
		{name: "defaults: dev free", s: Settings{Getenv: env(nil)}, table: "dev-a-b", want: false, reason: "built-in"},
		{name: "defaults: stg free", s: Settings{Getenv: env(nil)}, table: "stg-a-b", want: false},
		{name: "flag protects stg", s: Settings{Flag: []string{"stg"}, Getenv: env(nil)}, table: "stg-a-b", want: true, reason: "--protected-envs"},
		{name: "flag upper case protects dev", s: Settings{Flag: []string{"DEV"}, Getenv: env(nil)}, table: "dev-a-b", want: true, reason: "--protected-envs"},
		{name: "env var protects dev", s: Settings{Getenv: env(map[string]string{EnvProtected: "perf, dev"})}, table: "dev-a-b", want: true, reason: EnvProtected},
		{name: "env var unprotects qa", s: Settings{Getenv: env(map[string]string{EnvUnprotected: "qa"})}, table: "qa-a-b", want: false, reason: EnvUnprotected},
		{name: "env var cannot unprotect prod", s: Settings{Getenv: env(map[string]string{EnvUnprotected: "prod"})}, table: "prod-a-b", want: true, reason: "built-in"},
		{name: "protected wins over unprotected", s: Settings{Flag: []string{"qa"}, Getenv: env(map[string]string{EnvUnprotected: "qa"})}, table: "qa-a-b", want: true, reason: "--protected-envs"},
		{name: "config protects stg", s: Settings{Getenv: env(map[string]string{EnvConfig: cfg})}, table: "stg-a-b", want: true, reason: "config " + cfg},
		{name: "config unprotects qa", s: Settings{Getenv: env(map[string]string{EnvConfig: cfg})}, table: "qa-a-b", want: false, reason: "config"},
		{name: "config cannot unprotect prod", s: Settings{Getenv: env(map[string]string{EnvConfig: cfg})}, table: "prod-a-b", want: true},
		{name: "config from XDG_CONFIG_HOME", s: Settings{Getenv: env(map[string]string{"XDG_CONFIG_HOME": writeXDG(t)})}, table: "stg-a-b", want: true, reason: "config"},
		{name: "missing default config is fine", s: Settings{Getenv: env(map[string]string{"HOME": dir})}, table: "dev-a-b", want: false},
		{name: "missing explicit config is an error", s: Settings{Getenv: env(map[string]string{EnvConfig: filepath.Join(dir, "nope.yaml")})}, wantErr: "nope.yaml"},
		{name: "unparsable config is an error", s: Settings{Getenv: env(map[string]string{EnvConfig: bad})}, wantErr: "parsing the dynops config"},
		{name: "bad env name in the flag", s: Settings{Flag: []string{"prod-eu"}, Getenv: env(nil)}, wantErr: "--protected-envs"},
		{name: "bad env name in the env var", s: Settings{Getenv: env(map[string]string{EnvUnprotected: "a b"})}, wantErr: EnvUnprotected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := LoadPolicy(tc.s)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := p.Decide(Target{Kind: Table, Name: tc.table, Tags: map[string]string{}})
			if d.Protected != tc.want || !strings.Contains(d.Reason, tc.reason) {
				t.Fatalf("%s: protected=%v (%s); want %v and a reason naming %q", tc.table, d.Protected, d.Reason, tc.want, tc.reason)
			}
		})
	}
}

func writeXDG(t *testing.T) string {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "dynops"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dynops", "config.yaml"), []byte("protected_envs:\n  - stg\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"https://sqs.eu-west-1.amazonaws.com/123456789012/prod-hoge-dlq": "prod-hoge-dlq",
		"http://127.0.0.1:4566/000000000000/dev-a-b/":                    "dev-a-b",
		"dev-a-b": "dev-a-b",
	} {
		if got := QueueName(in); got != want {
			t.Errorf("QueueName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"arn:aws:lambda:eu-west-1:123456789012:function:prod-hoge-consumer":         "prod-hoge-consumer",
		"arn:aws:lambda:eu-west-1:123456789012:function:prod-hoge-consumer:$LATEST": "prod-hoge-consumer",
		"123456789012:function:dev-a-b":                                             "dev-a-b",
		"dev-a-b":                                                                   "dev-a-b",
	} {
		if got := FunctionName(in); got != want {
			t.Errorf("FunctionName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNamesOddInputs: a queue URL with a query string still names its queue
// (the URL's path, not the raw text), and a function ARN that stops at
// "function" has no name to take (no index past its end).
func TestNamesOddInputs(t *testing.T) {
	for in, want := range map[string]string{
		"https://sqs.eu-west-1.amazonaws.com/123456789012/prod-hoge-dlq?Action=ReceiveMessage": "prod-hoge-dlq",
		"http://127.0.0.1:4566/000000000000/dev-a-b#frag":                                      "dev-a-b",
	} {
		if got := QueueName(in); got != want {
			t.Errorf("QueueName(%q) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"arn:aws:lambda:eu-west-1:123456789012:function", "function"} {
		if got := FunctionName(in); got != in {
			t.Errorf("FunctionName(%q) = %q, want the input back", in, got)
		}
	}
}

// TestDefaultConfigPath: DYNOPS_CONFIG, then XDG_CONFIG_HOME, then HOME;
// with none of them set there is no config file to read.
func TestDefaultConfigPath(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EnvConfig: "/etc/dynops.yaml", "XDG_CONFIG_HOME": "/x", "HOME": "/home/op"}, "/etc/dynops.yaml"},
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/home/op"}, filepath.Join("/x", "dynops", "config.yaml")},
		{map[string]string{"HOME": "/home/op"}, filepath.Join("/home/op", ".config", "dynops", "config.yaml")},
		{map[string]string{}, ""},
	}
	for _, c := range cases {
		if got := DefaultConfigPath(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("DefaultConfigPath(%v) = %q, want %q", c.env, got, c.want)
		}
	}
}

// TestAddUnprotectedAccumulates: each call adds to the known unprotected
// envs, from the zero Policy too, and never forgets an earlier call's envs.
func TestAddUnprotectedAccumulates(t *testing.T) {
	var zero Policy
	zero.AddUnprotected("--unprotected-envs", "qa")
	zero.AddUnprotected("config", "sandbox", " QA ")
	if got := strings.Join(zero.UnprotectedEnvs(), ","); got != "qa,sandbox" {
		t.Errorf("UnprotectedEnvs() = %q, want qa,sandbox", got)
	}
	if d := zero.Decide(Target{Kind: Table, Name: "qa-hoge-user", Tags: map[string]string{}}); d.Protected {
		t.Errorf("qa-hoge-user: protected (%s), want unprotected: qa was added first", d.Reason)
	}
	p := NewPolicy()
	p.AddUnprotected("config", "sandbox")
	p.AddUnprotected("config", "qa")
	for _, env := range []string{"sandbox", "qa", "dev"} {
		if d := p.Decide(Target{Kind: Table, Name: env + "-hoge-user", Tags: map[string]string{}}); d.Protected {
			t.Errorf("%s-hoge-user: protected (%s), want unprotected", env, d.Reason)
		}
	}
}

// TestDecideTableARNsLikeNames (issue 29): a table given as an ARN goes
// through the same name rule as its bare name, in every partition, with an
// index suffix; an ARN that is not a table's is protected.
func TestDecideTableARNsLikeNames(t *testing.T) {
	p := NewPolicy()
	for _, c := range []struct {
		arn       string
		protected bool
		reason    string
	}{
		{"arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user", true, `"prod", a protected env`},
		{"arn:aws-cn:dynamodb:cn-north-1:123456789012:table/PROD-hoge-legacy", true, `"prod"`},
		{"arn:aws-us-gov:dynamodb:us-gov-west-1:123456789012:table/live-hoge-user/index/by-email", true, `"live"`},
		{"arn:aws:dynamodb:eu-west-1:123456789012:table/prd_hoge_user/stream/2026-01-01T00:00:00.000", true, `"prd"`},
		{"arn:aws:dynamodb:eu-west-1:123456789012:table/UsersTable", true, "does not follow DDB-NAME-01"},
		{"arn:aws:dynamodb:eu-west-1:123456789012:table/dev-hoge-user", false, `env "dev"`},
		{"arn:aws:s3:::dev-hoge-user", true, "not a DynamoDB table ARN"},
		{"arn:aws:dynamodb:eu-west-1:123456789012:backup/dev-hoge-user", true, "not a DynamoDB table ARN"},
		{"arn:aws:dynamodb:eu-west-1:123456789012:table/", true, "not a DynamoDB table ARN"},
		{"arn:dev-hoge-user", true, "not a DynamoDB table ARN"},
	} {
		d := p.Decide(Target{Kind: Table, Name: c.arn, Tags: map[string]string{}})
		if d.Protected != c.protected || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s: protected=%v reason %q; want protected=%v and %q", c.arn, d.Protected, d.Reason, c.protected, c.reason)
		}
	}
}

// TestEnvTagKeysAnyCase: env and environment tag keys count in any case.
func TestEnvTagKeysAnyCase(t *testing.T) {
	p := NewPolicy()
	for _, k := range []string{"env", "Env", "ENV", "environment", "Environment", "ENVIRONMENT", "eNvIrOnMeNt", " env "} {
		if d := p.Decide(Target{Kind: Table, Name: "dev-hoge-user", Tags: map[string]string{k: "prod"}}); !d.Protected || d.Env != "prod" {
			t.Errorf("tag %q=prod on dev-hoge-user: %v; want protected by the tag", k, d)
		}
	}
}

// TestConfigFileDiscipline (issue 29): an unknown key in the config file is
// an error naming the key, the file and the closest known key; the file must
// be the user's and not writable by group or others.
func TestConfigFileDiscipline(t *testing.T) {
	write := func(t *testing.T, body string, mode os.FileMode) string {
		p := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, body string
		mode       os.FileMode
		want       []string
	}{
		{"typo of protected_envs", "protect_envs: [qa]\n", 0o600, []string{`unknown key "protect_envs"`, "did you mean protected_envs?"}},
		{"typo of unprotected_envs", "unprotected_env: [sandbox]\n", 0o600, []string{`unknown key "unprotected_env"`, "did you mean unprotected_envs?"}},
		{"upper case", "Protected_Envs: [qa]\n", 0o600, []string{`unknown key "Protected_Envs"`, "did you mean protected_envs?"}},
		{"unrelated key beside a known one", "protected_envs: [qa]\nsomething: 1\n", 0o600, []string{`unknown key "something"`, "the keys are protected_envs, unprotected_envs and runbook"}},
		{"group-writable", "protected_envs: [qa]\n", 0o620, []string{"mode 0620", "chmod go-w"}},
		{"world-writable", "protected_envs: [qa]\n", 0o602, []string{"mode 0602", "chmod go-w"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, c.body, c.mode)
			_, err := LoadPolicy(Settings{ConfigPath: p})
			if err == nil {
				t.Fatalf("loaded; want an error with %q", c.want)
			}
			for _, w := range append(c.want, p) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	t.Run("another user's file", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to give the file to another user")
		}
		p := write(t, "unprotected_envs: [prod2]\n", 0o644)
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadPolicy(Settings{ConfigPath: p}); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("err = %v; want a refusal naming the owner", err)
		}
	})
	t.Run("a good file loads", func(t *testing.T) {
		p := write(t, "protected_envs: [qa]\nunprotected_envs: [sandbox]\n", 0o644)
		pol, err := LoadPolicy(Settings{ConfigPath: p})
		if err != nil || !pol.Decide(Target{Kind: Table, Name: "qa-hoge-user"}).Protected {
			t.Errorf("err = %v", err)
		}
	})
}

func TestIsBreakGlassOnlyForTheBreakGlassRolesSessions(t *testing.T) {
	for _, ok := range []string{
		"arn:aws:sts::111122223333:assumed-role/prod-hoge-dynamodb-dynops-break-glass/alice",
		"arn:aws:sts::111122223333:assumed-role/dynops-break-glass/alice",
	} {
		if !IsBreakGlass(ok) {
			t.Errorf("%s: not break-glass", ok)
		}
	}
	for _, bad := range []string{
		"arn:aws:sts::111122223333:assumed-role/prod-hoge-dynamodb-operator/alice",
		"arn:aws:sts::111122223333:assumed-role/dynops-break-glass-copy/alice",
		"arn:aws:iam::111122223333:role/dynops-break-glass",
		"arn:aws:iam::111122223333:user/dynops-break-glass",
		"arn:aws:sts::123456789012:user/moto",
		"",
	} {
		if IsBreakGlass(bad) {
			t.Errorf("%s: taken for break-glass", bad)
		}
	}
}
