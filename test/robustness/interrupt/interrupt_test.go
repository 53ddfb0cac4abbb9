// Package interrupt sends Ctrl-C (SIGINT) to the built dynops binary in the
// middle of an operation: it must exit 130 with one line saying what state
// things are in and how to continue, and leave no temporary files behind.
//
// A proxy in front of the emulator holds one kind of request (e.g. Scan)
// until the client gives up, so the command is reliably mid-operation when
// the signal arrives.
package interrupt

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }

// holdingProxy forwards to the emulator, except requests whose X-Amz-Target
// ends with hold: those wait until the client goes away. held receives one
// value per held request.
// holds reports whether the proxy holds request r: hold names a JSON
// protocol operation (X-Amz-Target, e.g. DescribeTable), or, for S3's REST
// requests, "METHOD /path-part" (e.g. "GET /dynops/runbooks/": an object
// read under that prefix).
func holds(r *http.Request, hold string) bool {
	if method, part, ok := strings.Cut(hold, " "); ok {
		return r.Method == method && strings.Contains(r.URL.Path, part)
	}
	return strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+hold)
}

func holdingProxy(t *testing.T, emulatorURL, hold string) (string, <-chan struct{}) {
	t.Helper()
	u, err := url.Parse(emulatorURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	held := make(chan struct{}, 100)
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if holds(r, hold) {
			// Read the body, so the server notices when the client hangs up.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case held <- struct{}{}:
			default:
			}
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		close(stop)
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL, held
}

// ctrlC runs dynops with args (in work, TMPDIR tmp) against a proxy that
// holds the first request of kind hold, sends SIGINT once it is held, and
// checks the exit code 130 and the one "interrupted: " line, which must hold
// every want. It returns that line.
func ctrlC(t *testing.T, hold, tmp, work string, args []string, wants ...string) string {
	t.Helper()
	proxy, held := holdingProxy(t, target.Emulator.URL, hold)
	p := target.Command(t, append(append([]string{}, args...), "--timeout", "60s"), harness.Via(proxy),
		harness.AuditLog(filepath.Join(work, "audit.jsonl")), harness.Dir(work), harness.TempDir(tmp))
	p.Start()
	select {
	case <-held:
	case <-p.Done():
		t.Fatalf("dynops ended before the held %s: %v\n%s%s", hold, p.Cmd.ProcessState, p.Stdout(), p.Stderr())
	case <-time.After(60 * time.Second):
		t.Fatalf("no %s request within a minute\n%s", hold, p.Stderr())
	}
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := p.WaitWithin(30 * time.Second)
	stderr := p.Stderr()
	if code != 130 {
		t.Errorf("exit %d, want 130", code)
	}
	// One line for the command (a runbook's step prints its own before it).
	var lines []string
	words := 0 // the command's path: up to two words before the first flag
	for words < 2 && words < len(args) && !strings.HasPrefix(args[words], "-") {
		words++
	}
	prefix := "interrupted: dynops " + strings.Join(args[:words], " ") + " "
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, prefix) {
			lines = append(lines, l)
		}
		if strings.Contains(l, "context canceled") {
			t.Errorf("raw context error shown: %q", l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("want one line %q..., got %q", prefix, lines)
	}
	for _, w := range wants {
		if !strings.Contains(lines[0], w) {
			t.Errorf("the interrupt line lacks %q: %q", w, lines[0])
		}
	}
	return lines[0]
}

func TestCtrlCExits130WithStateAndCleansUp(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("the holding proxy sits in front of the emulator")
	}
	db := dynamodb.NewFromConfig(target.AWSConfig(t))
	id := harness.UniqueID()
	src, dst := "dev-"+id+"-user-restored", "dev-"+id+"-user"
	for _, name := range []string{src, dst} {
		fixture.Create(t, db, fixture.Table{Name: name, HashKey: "user_id"})
		fixture.Put(t, db, name, fixture.Users(5))
	}
	exportArn := "arn:aws:dynamodb:eu-west-1:123456789012:table/" + src + "/export/01700000000000-abcd1234"

	cases := []struct {
		name      string
		hold      string
		args      []string
		wantState string
	}{
		{"table diff mid-scan", "Scan", []string{"table", "diff", "--source", src, "--target", dst, "--keys-out", "keys.jsonl"},
			"nothing was changed and its temporary files were removed"},
		{"pitr repair mid-scan", "Scan", []string{"pitr", "repair", "--from", src, "--to", dst, "--all-differences", "--allow-unrelated-source", "test: a copy, not a restore"},
			"run the same repair again"},
		{"export wait", "DescribeExport", []string{"export", "wait", exportArn}, "run `dynops export wait ARN` again"},
		{"pitr status", "DescribeContinuousBackups", []string{"pitr", "status", "--table", dst}, "nothing was changed"},
		{"dr status", "DescribeTable", []string{"dr", "status", "--table", dst}, "nothing was changed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmp, work := t.TempDir(), t.TempDir()
			ctrlC(t, tc.hold, tmp, work, tc.args, tc.wantState)
			left, _ := filepath.Glob(filepath.Join(tmp, "*"))
			if len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
			if _, err := os.Stat(filepath.Join(work, "keys.jsonl")); err == nil {
				t.Errorf("a partial --keys-out file was left behind")
			}
		})
	}
}
