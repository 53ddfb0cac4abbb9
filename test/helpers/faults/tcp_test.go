package faults_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/faults"
)

func get(t *testing.T, url string) ([]byte, error) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}} // one connection per request
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// TestTCPToxics: the toxics are installed and bite. At rate 0 a 200 KB
// answer comes through whole, on a connection with no toxic; at rate 1
// with one toxic every connection gets it: reset_peer and timeout cut
// every answer (a transport error, not an HTTP one); latency, bandwidth
// and slicer let it through whole, slowed.
func TestTCPToxics(t *testing.T) {
	body := strings.Repeat("x", 200<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)

	p, err := faults.StartTCP(srv.URL, faults.TCPConfig{Rate: 0, Seed: 1})
	require.NoError(t, err)
	for range 3 {
		got, err := get(t, p.URL)
		require.NoError(t, err)
		assert.Equal(t, len(body), len(got))
	}
	counts, total := p.Counts()
	assert.Empty(t, counts)
	assert.Equal(t, 3, total)
	p.Close()

	cut := map[string]bool{"reset_peer_upstream": true, "reset_peer_downstream": true, "timeout_downstream": true}
	for _, name := range faults.TCPToxicNames {
		if name == "slicer_downstream" || name == "bandwidth_downstream" {
			continue // seconds per 200 KB answer; their passing through is shown by the chaos cells
		}
		t.Run(name, func(t *testing.T) {
			p, err := faults.StartTCP(srv.URL, faults.TCPConfig{Rate: 1, Seed: 1, Toxics: []string{name}})
			require.NoError(t, err)
			defer p.Close()
			got, err := get(t, p.URL)
			if cut[name] {
				assert.True(t, err != nil || len(got) < len(body), "%s cuts the answer", name)
			} else {
				require.NoError(t, err)
				assert.Equal(t, len(body), len(got))
			}
			counts, total := p.Counts()
			assert.Equal(t, map[string]int{name: 1}, counts)
			assert.Equal(t, 1, total)
		})
	}
	_, err = faults.StartTCP(srv.URL, faults.TCPConfig{Rate: 1, Toxics: []string{"melt_downstream"}})
	assert.ErrorContains(t, err, `unknown toxic "melt_downstream"`)
}

// TestTCPDecisionsAreSeeded: the toxic each connection gets is drawn from
// the seed, in arrival order: the same seed gives the same sequence, in
// another run; another seed another; the share faulted is near the rate.
func TestTCPDecisionsAreSeeded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	t.Cleanup(srv.Close)
	// Latency only: every connection answers, so the sequence is all
	// that differs.
	run := func(seed uint64) []string {
		p, err := faults.StartTCP(srv.URL, faults.TCPConfig{Rate: 0.3, Seed: seed, Toxics: []string{"latency_upstream", "latency_downstream"}})
		require.NoError(t, err)
		defer p.Close()
		for range 40 {
			_, err := get(t, p.URL)
			require.NoError(t, err)
		}
		return p.Decisions()
	}
	a, b, c := run(5), run(5), run(6)
	require.Len(t, a, 40)
	assert.Equal(t, a, b, "the same seed: the same toxic for each connection")
	assert.NotEqual(t, a, c, "another seed: another sequence")
	faulted := 0
	for _, d := range a {
		if d != "" {
			faulted++
		}
	}
	assert.InDelta(t, 12, faulted, 8, "about 30 %% of 40 connections: %v", a)
}
