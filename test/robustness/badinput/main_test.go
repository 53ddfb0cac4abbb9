// Package badinput runs the real dynops binary against the emulator with
// stdin not a terminal, feeding it bad input: protected targets without the
// typed name, --confirm values that do not match, repair sources that are not
// restores of the target, redrives into protected functions, missing and
// malformed flags, targets that do not exist. Every case must exit non-zero
// with a message naming what is wrong, and change nothing: the emulator's
// state (tables, their settings and items, queue depths, S3 objects, SSM
// parameters, function invocations) is snapshotted after every case and
// compared with the state seeded before the first.
//
// On the emulator only: the cases lean on a fresh account they can snapshot
// whole. The same commands run against real AWS in the other suites.
package badinput

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/lambdaendpoint"
)

var (
	target *harness.Target
	// denyTags is a proxy in front of the emulator that denies every tag
	// read (ListTagsOfResource, ListQueueTags) with AccessDeniedException:
	// what an operator role without those permissions sees.
	denyTags *httptest.Server
	// fns answers Lambda for the functions the redrive cases name;
	// fnsDenied is the same with ListTags denied.
	fns, fnsDenied *lambdaendpoint.Server
	// workDir holds the audit log, keys files and config files of the cases.
	workDir string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if harness.Kind() != harness.KindEmulator {
		fmt.Fprintln(os.Stderr, "badinput: runs on the emulator only (it snapshots the whole account); skipped with DYNOPS_TEST_TARGET=aws")
		return 0
	}
	dir, err := os.MkdirTemp("", "dynops-badinput-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "badinput:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	workDir = dir
	if err = harness.BuildDynops(); err != nil {
		fmt.Fprintln(os.Stderr, "badinput:", err)
		return 1
	}
	for _, s := range []**lambdaendpoint.Server{&fns, &fnsDenied} {
		if *s, err = lambdaendpoint.Start("127.0.0.1:0"); err != nil {
			fmt.Fprintln(os.Stderr, "badinput:", err)
			return 1
		}
		defer (*s).Close()
	}
	fnsDenied.SetTagsError(http.StatusForbidden)
	return harness.Run(m, &target)
}

// startDenyTags starts the tag-denying proxy in front of the emulator.
func startDenyTags(emulatorURL string) (*httptest.Server, error) {
	u, err := url.Parse(emulatorURL)
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := r.Header.Get("X-Amz-Target")
		if strings.HasSuffix(op, ".ListTagsOfResource") || strings.HasSuffix(op, ".ListQueueTags") || r.URL.Query().Get("Action") == "ListQueueTags" {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.Header().Set("x-amzn-query-error", "AccessDenied;Sender")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"com.amazonaws.dynamodb.v20120810#AccessDeniedException","message":"User is not authorized to read tags (badinput proxy)"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	})), nil
}

// registerFunctions serves the functions the cases name on both Lambda endpoints.
func registerFunctions(names map[string]map[string]string) {
	h := func() lambda.Handler {
		return lambda.NewHandler(func(context.Context, map[string]any) (map[string]any, error) { return map[string]any{}, nil })
	}
	for _, s := range []*lambdaendpoint.Server{fns, fnsDenied} {
		for name, tags := range names {
			s.Register(name, h)
			s.SetTags(name, tags)
		}
	}
}

// result is what one run of the binary gave.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

// invocation is one run: the arguments, and what differs from the default
// environment.
type invocation struct {
	args     []string
	endpoint string   // --endpoint-url (default: the emulator)
	env      []string // extra KEY=VALUE
}

// dynops runs the binary with stdin not a terminal (an empty pipe), a fresh
// HOME (no config file) and the emulator's endpoint and region.
func dynops(t *testing.T, inv invocation) result {
	t.Helper()
	endpoint := inv.endpoint
	if endpoint == "" {
		endpoint = target.Endpoint()
	}
	home := filepath.Join(workDir, "home")
	p := target.Command(t, inv.args, harness.Via(endpoint), harness.AuditLog(filepath.Join(workDir, "audit.jsonl")),
		harness.Stdin(bytes.NewReader(nil)), harness.TempDir(os.TempDir()), harness.Env(inv.env...),
		harness.CleanEnv("PATH="+os.Getenv("PATH"), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
			"XDG_STATE_HOME="+filepath.Join(home, ".state"), "AWS_REGION="+target.Region,
			"AWS_EC2_METADATA_DISABLED=true", "AWS_MAX_ATTEMPTS=2"))
	out, errOut, code := p.Run()
	return result{args: inv.args, stdout: out, stderr: errOut, code: code}
}
