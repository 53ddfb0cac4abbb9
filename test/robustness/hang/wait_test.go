package hang

import (
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dynops/dynops/internal/cmd/cmdtest"
	"github.com/dynops/dynops/internal/cmd/root"
	"github.com/dynops/dynops/internal/iostreams"
)

// forever answers every DynamoDB job description with IN_PROGRESS: an
// export or import that never ends.
func forever(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		var body any
		status := 200
		switch op := r.Header.Get("X-Amz-Target"); {
		case strings.HasSuffix(op, ".DescribeExport"):
			body = map[string]any{"ExportDescription": map[string]any{"ExportArn": "arn:aws:dynamodb:eu-west-1:123456789012:table/t/export/1", "ExportStatus": "IN_PROGRESS"}}
		default:
			status = 400
			body = map[string]any{"__type": "com.amazonaws.dynamodb.v20120810#ValidationException", "message": "not in this stub: " + op}
		}
		b, _ := json.Marshal(body)
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10))
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if status != 200 {
			w.WriteHeader(status)
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestWaitsStopAtWaitTimeout: a job that stays IN_PROGRESS ends the wait at
// --wait-timeout with exit 124, the elapsed time and how to continue.
func TestWaitsStopAtWaitTimeout(t *testing.T) {
	endpoint := forever(t)
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_ACCESS_KEY_ID", "testing")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
	const wait = 2 * time.Second
	arn := "arn:aws:dynamodb:eu-west-1:123456789012:table/t/export/1"
	start := time.Now()
	r := cmdtest.Run(t, root.Execute, cmdtest.Env{Endpoint: endpoint, Region: "eu-west-1",
		Streams: func(s *iostreams.IOStreams) { s.SetProgressEvery(0) }}, "export", "wait", arn, "--wait-timeout", wait.String())
	took := time.Since(start)
	t.Logf("exit after %s", took)
	code, errOut := r.Code, r.Stderr
	if code != 124 {
		t.Errorf("exit %d, want 124", code)
	}
	if took > 2*wait {
		t.Errorf("took %s with --wait-timeout %s", took, wait)
	}
	for _, want := range []string{"not done after 2s (--wait-timeout), last state IN_PROGRESS", "goes on in AWS", "dynops export wait " + arn, "elapsed"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}
