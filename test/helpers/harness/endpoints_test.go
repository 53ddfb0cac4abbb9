package harness

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/dynops/dynops/test/helpers/emulator"
)

// serviceOf maps the prefix of every aws resource and data source type the
// repository's Terraform uses to the service the provider calls for it ("" for
// types computed without a call). All of them reach the emulator through
// EndpointEnv: the services applied by the apply tests were seen to, the rest
// are only planned, and a plan of a new resource calls nothing. A type with no
// prefix here fails TestEveryTypeHasAService: apply it to the emulator with
// EndpointEnv set (no endpoints block) before adding its service.
var serviceOf = map[string]string{
	"aws_appautoscaling_":      "application-auto-scaling",
	"aws_backup_":              "backup",
	"aws_cloudtrail":           "cloudtrail",
	"aws_cloudwatch_log_":      "cloudwatch-logs",
	"aws_cloudwatch_dashboard": "cloudwatch",
	"aws_cloudwatch_metric_":   "cloudwatch",
	"aws_dynamodb_":            "dynamodb",
	"aws_batch_":               "batch",
	"aws_ecs_":                 "ecs",
	"aws_fis_":                 "fis",
	"aws_iam_policy_document":  "",
	"aws_iam_":                 "iam",
	"aws_kms_":                 "kms",
	"aws_lambda_":              "lambda",
	"aws_partition":            "",
	"aws_region":               "",
	"aws_route53_":             "route-53",
	"aws_route_table":          "ec2",
	"aws_vpc":                  "ec2",
	"aws_s3_":                  "s3",
	"aws_scheduler_":           "scheduler",
	"aws_sns_":                 "sns",
	"aws_sqs_":                 "sqs",
	"aws_ssm_":                 "ssm",
}

// serviceFor returns the service of a type by its longest matching prefix.
func serviceFor(typ string) (string, bool) {
	best, svc, ok := "", "", false
	for p, s := range serviceOf {
		if strings.HasPrefix(typ, p) && len(p) > len(best) {
			best, svc, ok = p, s, true
		}
	}
	return svc, ok
}

var awsType = regexp.MustCompile(`(?m)^\s*(?:resource|data)\s+"(aws_[a-z0-9_]+)"`)

// terraformFiles walks the repository's Terraform (modules, envs, the policy
// and test roots), leaving out terraform's and the build's caches.
func terraformFiles(t *testing.T, visit func(path string, src []byte)) {
	t.Helper()
	root := RepoRoot()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".terraform", ".cache", "node_modules", "bin", "dist":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".tf") {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			visit(path, src)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
}

// TestEveryTypeHasAService: every aws type the Terraform uses has its service
// in serviceOf, so a module that starts using a new service is a decision
// (apply it to the emulator through EndpointEnv first), not an accident.
func TestEveryTypeHasAService(t *testing.T) {
	seen := map[string]bool{}
	terraformFiles(t, func(path string, src []byte) {
		for _, m := range awsType.FindAllSubmatch(src, -1) {
			seen[string(m[1])] = true
		}
	})
	if len(seen) < 20 {
		t.Fatalf("found only %d aws types under %s: the walk is broken", len(seen), RepoRoot())
	}
	var missing []string
	for typ := range seen {
		if _, ok := serviceFor(typ); !ok {
			missing = append(missing, typ)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("aws types with no service in serviceOf (test/helpers/harness/endpoints_test.go): %s; apply one to the emulator with %s set and no endpoints block, then add its prefix", strings.Join(missing, ", "), EndpointEnv)
	}
}

// TestNoEndpointsBlock: the emulator's endpoint reaches the provider through
// the environment only. An endpoints {} block costs about 4.5 CPU-s at every
// validate, plan and apply (docs/testing.md), and an override file cannot
// remove one, so none may come back into a root.
func TestNoEndpointsBlock(t *testing.T) {
	block := regexp.MustCompile(`(?m)^\s*endpoints\s*\{`)
	files := 0
	terraformFiles(t, func(path string, src []byte) {
		files++
		if block.Match(src) {
			rel, _ := filepath.Rel(RepoRoot(), path)
			t.Errorf("%s has an endpoints {} block: give the provider its endpoint through %s (the harness and `make plan ENV=local` set it)", rel, EndpointEnv)
		}
	})
	if files < 50 {
		t.Fatalf("walked only %d .tf files: the walk is broken", files)
	}
}

// TestOverrideLeavesTheEndpointToTheEnvironment: the provider settings the
// harness writes carry no endpoints, and both the emulator's options and an
// offline plan's environment name the endpoint in EndpointEnv.
func TestOverrideLeavesTheEndpointToTheEnvironment(t *testing.T) {
	if _, err := os.Stat(filepath.Join(ToolsDir(), "terraform.rc")); err != nil {
		t.Skipf("needs `make setup` (the terraform CLI config %s)", filepath.Join(ToolsDir(), "terraform.rc"))
	}
	const url = "http://127.0.0.1:9"
	tg := &Target{Kind: KindEmulator, Region: DefaultRegion, Emulator: &emulator.Emulator{URL: url}}
	opts := tg.Options(t, "envs/local", nil)
	if got := opts.EnvVars[EndpointEnv]; got != url {
		t.Errorf("emulator options: %s=%q, want the emulator's %q", EndpointEnv, got, url)
	}
	override, err := os.ReadFile(filepath.Join(opts.TerraformDir, "zz_harness_override.tf"))
	if err != nil {
		t.Fatalf("envs/local has provider blocks, so the harness writes an override: %v", err)
	}
	if strings.Contains(string(override), "endpoints") || !strings.Contains(string(override), `alias                       = "secondary"`) {
		t.Errorf("the override must set every provider (the secondary alias too) and name no endpoints:\n%s", override)
	}
	if got := offlineEnv(t)[EndpointEnv]; got != offlineEndpoint {
		t.Errorf("offline plans: %s=%q, want %q (nothing listens there)", EndpointEnv, got, offlineEndpoint)
	}
}

// TestServiceEndpointVariablesRefused: a service's own endpoint variable in
// the environment (AWS_ENDPOINT_URL_DYNAMODB, ...) outranks EndpointEnv and
// would send that service away from the emulator.
func TestServiceEndpointVariablesRefused(t *testing.T) {
	if err := checkServiceEndpointVars([]string{"HOME=/root", EndpointEnv + "=http://127.0.0.1:1"}); err != nil {
		t.Errorf("only %s set: %v", EndpointEnv, err)
	}
	err := checkServiceEndpointVars([]string{"AWS_ENDPOINT_URL_DYNAMODB=https://dynamodb.eu-west-1.amazonaws.com"})
	if err == nil || !strings.Contains(err.Error(), "AWS_ENDPOINT_URL_DYNAMODB") || !strings.Contains(err.Error(), "unset") {
		t.Errorf("a service's endpoint variable: got %v, want an error naming it and the fix", err)
	}
}
