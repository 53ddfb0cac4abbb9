package runbook

import (
	"bytes"
	"github.com/dynops/dynops/test/helpers/harness"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/faults"
)

// killPoint says where a journey's SIGKILL lands: at the first request
// At says is the one (it sees each request's operation, faults.Operation,
// in order). That request is held until the process is dead, then
// forwarded, or with Drop never sent: killed before the service got it.
type killPoint struct {
	What   string // the moment, for the failure message
	At     func(op string) bool
	Drop   bool
	Faults *faults.Config // faults injected behind the kill point (nil: none)
	Env    []string       // added to the process's environment
}

// killAtRequest runs the built binary with args through a proxy in front
// of the emulator and SIGKILLs it at k.
func killAtRequest(t *testing.T, log string, k killPoint, args ...string) {
	t.Helper()
	if !target.OnEmulator() {
		t.Skip("emulator only: the kill point is a request held in a proxy in front of the emulator")
	}
	backend := target.Emulator.URL
	if k.Faults != nil {
		p, err := faults.Start(backend, *k.Faults)
		require.NoError(t, err)
		defer func() { _ = p.Close() }()
		backend = p.URL
	}
	u, err := url.Parse(backend)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	hit, dead := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	matched := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		first := !matched && k.At(faults.Operation(r, body))
		matched = matched || first
		mu.Unlock()
		if first {
			close(hit)
			<-dead
			if k.Drop {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cmd := commandWith(t, log, args, harness.Via(srv.URL), harness.Env(k.Env...))
	defer close(dead)
	killWhen(t, cmd, k.What, func() bool {
		select {
		case <-hit:
			return true
		default:
			return false
		}
	})
}
