// Package harness builds what the Terratest suites need for a test target:
// terraform.Options for the local emulator, for real AWS, or for an offline
// plan; AWS configuration for reading back; unique names; and the skip rule
// for features the emulator lacks.
//
// The target is chosen by DYNOPS_TEST_TARGET: "emulator" (default; the
// package's TestMain starts moto_server) or "aws" (real AWS with the ambient
// credentials, AWS_REGION or DYNOPS_TEST_REGION; nothing is faked).
package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	cwltypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/gruntwork-io/terratest/modules/files"
	"github.com/gruntwork-io/terratest/modules/terraform"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/root"
	"github.com/dynops/dynops/internal/lambdazip"
	"github.com/dynops/dynops/test/helpers/emulator"
)

// Target kinds.
const (
	KindEmulator = "emulator"
	KindAWS      = "aws"
)

// DefaultRegion is the emulator's region and the fallback on AWS.
const DefaultRegion = "eu-west-1"

// offlineEndpoint is where offline plans point: nothing listens there, and a
// plan of new resources needs no API call.
const offlineEndpoint = "http://127.0.0.1:1"

// EndpointEnv is the variable that gives terraform's aws provider (and every
// AWS SDK) one endpoint for all services. The harness points the provider at
// the emulator (or the offline endpoint) through it instead of an endpoints {}
// block: the provider validates an endpoints block of 19 services for about
// 4.5 CPU-s at every validate, plan and apply, and for each aliased provider
// again (0.8 CPU-s without one; docs/testing.md).
const EndpointEnv = "AWS_ENDPOINT_URL"

// checkServiceEndpointVars refuses a service's own endpoint variable
// (AWS_ENDPOINT_URL_<SERVICE>) in the environment: it outranks EndpointEnv,
// so terraform would send that service somewhere other than the emulator.
func checkServiceEndpointVars(environ []string) error {
	var set []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EndpointEnv+"_") {
			set = append(set, name)
		}
	}
	if len(set) > 0 {
		return fmt.Errorf("%s is set in the environment: it outranks %s, so terraform would send that service past the test target; unset it", strings.Join(set, ", "), EndpointEnv)
	}
	return nil
}

// Target is where apply tests run.
type Target struct {
	Kind     string
	Region   string
	Emulator *emulator.Emulator // nil on AWS
}

// Kind returns the target kind asked for by DYNOPS_TEST_TARGET.
func Kind() string {
	if strings.EqualFold(os.Getenv("DYNOPS_TEST_TARGET"), KindAWS) {
		return KindAWS
	}
	return KindEmulator
}

// Main runs a test package's tests against the target from DYNOPS_TEST_TARGET,
// starting (and stopping) the emulator when that is the target. Use it as
// `func TestMain(m *testing.M) { harness.Main(m, &target) }`.
func Main(m *testing.M, tg **Target) {
	os.Exit(runMain(m, tg))
}

// Run is Main without the exit: it returns the exit code, for a TestMain
// that has more to clean up (e.g. a binary it built).
func Run(m *testing.M, tg **Target) int { return runMain(m, tg) }

func runMain(m *testing.M, tg **Target) int {
	defer removeBuilt()
	if err := checkServiceEndpointVars(os.Environ()); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	if Kind() == KindAWS {
		region := firstNonEmpty(os.Getenv("DYNOPS_TEST_REGION"), os.Getenv("AWS_REGION"), DefaultRegion)
		*tg = &Target{Kind: KindAWS, Region: region}
		return m.Run()
	}
	emu, err := emulator.Start(context.Background(), emulator.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	code := 1 // a failed run keeps the emulator's log
	defer func() { _ = emu.Close(code != 0) }()
	v, err := emu.CheckVersion(context.Background(), os.Getenv("DYNOPS_EMULATOR_ANY_VERSION") == "1")
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	if v != emulator.MeasuredVersion {
		// Allowed by DYNOPS_EMULATOR_ANY_VERSION=1, never silently: the
		// skip reasons and the support table name another release.
		fmt.Fprintf(os.Stderr, "harness: WARNING: running on moto %s; the skip reasons and the README support table were measured on moto %s (DYNOPS_EMULATOR_ANY_VERSION=1)\n", v, emulator.MeasuredVersion)
	}
	if err := centralAuditCopy(emu.URL); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	*tg = &Target{Kind: KindEmulator, Region: DefaultRegion, Emulator: emu}
	code = m.Run()
	return code
}

// AuditLogGroup is the central audit copy every run of dynops on the
// emulator writes (DYNOPS_AUDIT_LOG_GROUP, set by the harness): a protected
// target is written only with one (guard: the central copy is required). On
// AWS the CI sets DYNOPS_AUDIT_LOG_GROUP to the group of modules/dynamodb-access.
const AuditLogGroup = "dynops-test-audit"

// auditRegions are the regions the suites run dynops in.
var auditRegions = []string{DefaultRegion, "eu-central-1", "us-east-1", "us-west-2", "eu-north-1"}

// centralAuditCopy creates AuditLogGroup in every region of auditRegions
// on the emulator at url and names it in DYNOPS_AUDIT_LOG_GROUP, for the
// in-process runs and the binaries (Target.Command) alike.
func centralAuditCopy(url string) error {
	ctx := context.Background()
	for _, region := range auditRegions {
		cfg, err := awsconfig.Load(ctx, awsconfig.Options{Region: region, EndpointURL: url, MaxAttempts: 2})
		if err != nil {
			return err
		}
		_, err = awsclients.New(cfg).CloudWatchLogs().CreateLogGroup(ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: aws.String(AuditLogGroup)})
		var exists *cwltypes.ResourceAlreadyExistsException
		if err != nil && !errors.As(err, &exists) {
			return fmt.Errorf("creating the central audit log group %s in %s: %w", AuditLogGroup, region, err)
		}
	}
	return os.Setenv("DYNOPS_AUDIT_LOG_GROUP", AuditLogGroup)
}

// OnEmulator reports whether tests run against the local emulator.
func (tg *Target) OnEmulator() bool { return tg.Kind == KindEmulator }

// RequireAWS skips t on the emulator, saying what the emulator lacks; the
// test runs with DYNOPS_TEST_TARGET=aws.
func (tg *Target) RequireAWS(t *testing.T, emulatorLacks string) {
	t.Helper()
	if tg.OnEmulator() {
		t.Skipf("needs real AWS: the emulator (moto "+emulator.MeasuredVersion+") %s. Run with DYNOPS_TEST_TARGET=aws (see docs/testing.md, 'Tests against real AWS')", emulatorLacks)
	}
}

// AWSConfig returns the configuration the tests read back with: the same
// loader dynops uses, pointed at the target.
func (tg *Target) AWSConfig(t testing.TB) aws.Config {
	t.Helper()
	o := awsconfig.Options{Region: tg.Region}
	if tg.Emulator != nil {
		o.EndpointURL = tg.Emulator.URL
		o.MaxAttempts = 2
	}
	cfg, err := awsconfig.Load(context.Background(), o)
	if err != nil {
		t.Fatalf("loading AWS config for %s: %v", tg.Kind, err)
	}
	return cfg
}

// Endpoint is the emulator URL, or "" on AWS (for dynops's --endpoint-url).
func (tg *Target) Endpoint() string {
	if tg.Emulator == nil {
		return ""
	}
	return tg.Emulator.URL
}

// BoundaryEnv names the permissions boundary (modules/ci-test-role's
// permissions_boundary_arn output) the roles applied on AWS must carry.
const BoundaryEnv = "DYNOPS_TEST_PERMISSIONS_BOUNDARY_ARN"

// Options returns terraform.Options for applying the root at dir (relative to
// the repository root) on the target. The root is copied to a temp folder,
// so tests can run in parallel; on the emulator a provider override file
// points every service at it.
func (tg *Target) Options(t *testing.T, dir string, vars map[string]any) *terraform.Options {
	t.Helper()
	tmp := copyRoot(t, dir)
	env := map[string]string{"TF_CLI_CONFIG_FILE": CLIConfig(t), "TF_IN_AUTOMATION": "1"}
	if tg.OnEmulator() {
		writeOverride(t, tmp, tg.Region, tg.Emulator.URL, false)
		env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = "testing", "testing"
		env[EndpointEnv] = tg.Emulator.URL
	} else {
		env["AWS_REGION"] = tg.Region
		// Under modules/ci-test-role every role the suite creates must carry
		// its boundary: roots that create roles declare the variable.
		if b := os.Getenv(BoundaryEnv); b != "" {
			env["TF_VAR_permissions_boundary_arn"] = b
		}
	}
	return &terraform.Options{TerraformDir: tmp, Vars: vars, EnvVars: env, NoColor: true,
		RetryableTerraformErrors: transientErrors, MaxRetries: 2, TimeBetweenRetries: 3 * time.Second}
}

// PlanOptions returns terraform.Options for an offline plan of the root at dir:
// fake credentials and endpoints, no network needed.
func PlanOptions(t *testing.T, dir string, vars map[string]any) *terraform.Options {
	t.Helper()
	tmp := copyRoot(t, dir)
	writeOverride(t, tmp, DefaultRegion, offlineEndpoint, true)
	writeLocalBackend(t, tmp)
	return &terraform.Options{
		TerraformDir: tmp,
		Vars:         vars,
		EnvVars:      offlineEnv(t),
		NoColor:      true,
		PlanFilePath: filepath.Join(t.TempDir(), "plan.out"),
	}
}

// offlineEnv is the environment of an offline plan: the plugin mirror's CLI
// config, fake credentials and an endpoint where nothing listens.
func offlineEnv(t *testing.T) map[string]string {
	return map[string]string{
		"TF_CLI_CONFIG_FILE": CLIConfig(t), "TF_IN_AUTOMATION": "1",
		"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
		EndpointEnv: offlineEndpoint,
	}
}

// RepoRoot is the repository's top folder.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// CLIConfig returns the terraform CLI config written by scripts/setup.sh
// (provider mirror when the machine has one); it fails t when setup has not run.
func CLIConfig(t *testing.T) string {
	t.Helper()
	rc := filepath.Join(ToolsDir(), "terraform.rc")
	if _, err := os.Stat(rc); err != nil {
		t.Fatalf("terraform CLI config %s is missing: run `make setup` (scripts/setup.sh) first", rc)
	}
	return rc
}

// ToolsDir is where scripts/setup.sh installs the tools: DYNOPS_TOOLS_DIR,
// default ~/.cache/dynops/tools.
func ToolsDir() string {
	if dir := os.Getenv("DYNOPS_TOOLS_DIR"); dir != "" {
		return dir
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "dynops", "tools")
}

// UniqueID returns a short random lower-case id for names that must not
// collide between tests (e.g. a product name "t3f9a1c").
func UniqueID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "t" + hex.EncodeToString(b)
}

func copyRoot(t *testing.T, dir string) string {
	t.Helper()
	// Copy the repository's Terraform (modules/, envs/ and the policy test
	// roots under policies/) so that relative
	// module sources resolve; leave out state, caches and everything else.
	root := RepoRoot()
	dest, err := files.CopyFolderToDest(root, t.TempDir(), "tf", func(path string) bool {
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return false
		}
		top := strings.SplitN(filepath.ToSlash(rel), "/", 2)[0]
		if top != "modules" && top != "envs" && top != "policies" && rel != "." {
			return false
		}
		base := filepath.Base(path)
		return base != ".terraform" && !strings.HasPrefix(base, "terraform.tfstate") && base != ".terraform.lock.hcl"
	})
	if err != nil {
		t.Fatalf("copying terraform roots: %v", err)
	}
	return filepath.Join(dest, dir)
}

// transientErrors are network failures worth another terraform run (the
// emulator is one Python process; on a loaded machine it drops a connection).
var transientErrors = map[string]string{
	"use of closed network connection": "emulator dropped a connection",
	"connection reset by peer":         "emulator reset a connection",
}

// writeOverride gives the root's aws providers the emulator's settings (fake
// credentials, path-style S3, few retries); the endpoint itself comes from
// EndpointEnv in the environment. A root with its own provider block gets an
// override file (merged over it); a module used as a root gets a plain
// provider file.
func writeOverride(t *testing.T, dir, region, endpoint string, offline bool) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by test/helpers/harness: the provider's settings for %s (%s in the environment).\n", endpoint, EndpointEnv)
	fmt.Fprintf(&b, "provider \"aws\" {\n  region                      = %q\n", region)
	writeProviderSettings(&b, offline)
	name := "zz_harness_provider.tf"
	if hasProviderBlock(t, dir) {
		name = "zz_harness_override.tf"
		// Aliased providers (e.g. a second region) keep their region and get the same settings.
		for _, alias := range providerAliases(t, dir) {
			fmt.Fprintf(&b, "\nprovider \"aws\" {\n  alias                       = %q\n", alias)
			writeProviderSettings(&b, offline)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
		t.Fatalf("writing provider override: %v", err)
	}
}

func writeProviderSettings(b *strings.Builder, offline bool) {
	b.WriteString("  access_key                  = \"testing\"\n  secret_key                  = \"testing\"\n")
	b.WriteString("  skip_credentials_validation = true\n  skip_metadata_api_check     = true\n  skip_region_validation      = true\n")
	b.WriteString("  s3_use_path_style           = true\n")
	// Few retries: unsupported calls fail in seconds instead of minutes of
	// retried 500s, while a dropped connection on a loaded machine is retried.
	b.WriteString("  max_retries                 = 3\n")
	if offline {
		b.WriteString("  skip_requesting_account_id  = true\n")
	}
	b.WriteString("}\n")
}

// writeLocalBackend overrides a remote backend (the env roots' S3 state) with
// local state, so an offline plan needs neither the bucket nor credentials.
func writeLocalBackend(t *testing.T, dir string) {
	t.Helper()
	tfs, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		t.Fatalf("listing %s: %v", dir, err)
	}
	for _, f := range tfs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		if regexp.MustCompile(`(?m)^\s*backend\s+"`).Match(b) {
			override := "# Written by test/helpers/harness: local state for an offline plan.\nterraform {\n  backend \"local\" {}\n}\n"
			if err := os.WriteFile(filepath.Join(dir, "zz_harness_backend_override.tf"), []byte(override), 0o644); err != nil {
				t.Fatalf("writing backend override: %v", err)
			}
			return
		}
	}
}

// providerBlock matches a top-level provider "aws" block up to its closing brace.
var providerBlock = regexp.MustCompile(`(?ms)^provider\s+"aws"\s*\{.*?^\}`)

// aliasLine matches the alias of a provider block.
var aliasLine = regexp.MustCompile(`(?m)^\s*alias\s*=\s*"([^"]+)"`)

func hasProviderBlock(t *testing.T, dir string) bool {
	t.Helper()
	for _, block := range providerBlocks(t, dir) {
		if !aliasLine.MatchString(block) {
			return true
		}
	}
	return false
}

// providerAliases returns the aliases of the root's aws provider blocks.
func providerAliases(t *testing.T, dir string) []string {
	t.Helper()
	var aliases []string
	for _, block := range providerBlocks(t, dir) {
		if m := aliasLine.FindStringSubmatch(block); m != nil {
			aliases = append(aliases, m[1])
		}
	}
	return aliases
}

func providerBlocks(t *testing.T, dir string) []string {
	t.Helper()
	tfs, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		t.Fatalf("listing %s: %v", dir, err)
	}
	var blocks []string
	for _, f := range tfs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		blocks = append(blocks, providerBlock.FindAllString(string(b), -1)...)
	}
	return blocks
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Dynops runs the dynops CLI in-process, exactly as the binary would, against
// the target: --endpoint-url and --region are added, and the audit log goes to
// auditLog. It returns stdout, stderr and the exit code.
func (tg *Target) Dynops(t testing.TB, auditLog string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return tg.DynopsInRegion(t, tg.Region, auditLog, args...)
}

// DynopsInRegion is Dynops with --region region instead of the target's
// (e.g. a cross-region import into a DR region).
func (tg *Target) DynopsInRegion(t testing.TB, region, auditLog string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	endpoint := ""
	if tg.Emulator != nil {
		endpoint = tg.Emulator.URL
	}
	return tg.dynops(t, region, endpoint, auditLog, args...)
}

// DynopsVia is Dynops through endpoint instead of the emulator (a fault
// proxy in front of it, test/helpers/faults).
func (tg *Target) DynopsVia(t testing.TB, endpoint, auditLog string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return tg.dynops(t, tg.Region, endpoint, auditLog, args...)
}

func (tg *Target) dynops(t testing.TB, region, endpoint, auditLog string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	r := cmdtest.Run(t, root.Execute, cmdtest.Env{Endpoint: endpoint, Region: region, AuditLog: auditLog}, args...)
	return r.Stdout, r.Stderr, r.Code
}

// AccountID is the account the target runs in (the emulator's is 123456789012).
func (tg *Target) AccountID(t testing.TB) string {
	t.Helper()
	out, err := sts.NewFromConfig(tg.AWSConfig(t)).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatalf("reading the account ID of the %s target: %v", tg.Kind, err)
	}
	return aws.ToString(out.Account)
}

// ApplyProtected applies the root at dir on the target and registers its
// teardown (Teardown with protected set). The root must take
// deletion_protection_enabled and deletion_protection_disabled_reason.
func (tg *Target) ApplyProtected(t *testing.T, dir string, vars map[string]any) *terraform.Options {
	t.Helper()
	opts := tg.Options(t, dir, vars)
	tg.Teardown(t, opts, true)
	terraform.InitAndApply(t, opts)
	return opts
}

// Teardown registers the destroy of an applied root on AWS: when protected,
// deletion protection is first turned off with a reason (the guideline's
// two-step delete, DDB-PROT-01). On the emulator nothing is registered: the
// package's emulator is discarded with everything in it, and a destroy
// would cost two terraform runs per test without checking anything. The
// two-step delete itself is a test of its own (test/modules/table
// TestApplyBasicExample "DDB-PROT-01 two-step delete").
func (tg *Target) Teardown(t *testing.T, opts *terraform.Options, protected bool) {
	t.Helper()
	if tg.OnEmulator() {
		return
	}
	t.Cleanup(func() { Destroy(t, opts, protected) })
}

// Destroy destroys an applied root now; when protected, deletion
// protection is first turned off with a reason (DDB-PROT-01's two-step
// delete).
func Destroy(t *testing.T, opts *terraform.Options, protected bool) {
	t.Helper()
	if protected {
		opts.Vars["deletion_protection_enabled"] = false
		opts.Vars["deletion_protection_disabled_reason"] = "test teardown"
		terraform.Apply(t, opts)
	}
	terraform.Destroy(t, opts)
}

// PlanZip writes a small deployment zip for plans of Lambda roots: a plan
// hashes the file (filebase64sha256) but never runs it.
func PlanZip(t testing.TB) string {
	t.Helper()
	var b bytes.Buffer
	if err := lambdazip.Write(&b, []byte("not a real binary: plans only hash the zip")); err != nil {
		t.Fatalf("writing plan zip: %v", err)
	}
	p := filepath.Join(t.TempDir(), "function.zip")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatalf("writing plan zip: %v", err)
	}
	return p
}
