package faults_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/faults"
)

// TestTCPToxics: toxiproxy's toxics are installed and bite. At rate 0 a
// 200 KB answer comes through whole; at rate 1 every connection is reset
// within 300 ms and throttled to 64 KB/s, so no answer of that size can
// come through, and the client sees a transport error (not an HTTP one).
func TestTCPToxics(t *testing.T) {
	body := strings.Repeat("x", 200<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		rate float64
		ok   bool
	}{{0, true}, {1, false}} {
		p, err := faults.StartTCP(srv.URL, c.rate)
		require.NoError(t, err)
		client := &http.Client{Transport: &http.Transport{}}
		for range 3 {
			resp, err := client.Get(p.URL)
			var got []byte
			if err == nil {
				got, err = io.ReadAll(resp.Body)
				_ = resp.Body.Close()
			}
			if c.ok {
				require.NoError(t, err)
				assert.Equal(t, len(body), len(got))
			} else {
				assert.Error(t, err, "rate 1: every connection is reset and throttled")
			}
		}
		p.Close()
	}
}
