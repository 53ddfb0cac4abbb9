package faults

import (
	"fmt"
	"math"
	"net/url"
	"strings"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// TCP is the fault layer below HTTP: toxiproxy's server
// (github.com/Shopify/toxiproxy/v2, embedded, no separate process) with
// one proxy on a free loopback port in front of the emulator. Each new
// connection is faulted with probability rate: each of the seven toxics
// (five types, two of them in both directions) has the toxicity
// 1-(1-rate)^(1/7), drawn by toxiproxy per connection. A faulted connection is
// reset (reset_peer, after up to 300 ms), goes silent and is closed
// (timeout, 500 ms: a request that took effect and whose answer never
// came), is slowed (latency 40 ms ± 40), throttled to 64 KB/s
// (bandwidth), or has its bytes cut into small delayed pieces (slicer).
// The HTTP layer (Proxy) stays for the AWS error shapes, which a TCP proxy
// cannot speak.
//
// toxiproxy draws toxicity from math/rand's global source: the TCP cells
// are repetitions, not reproducible by seed.
type TCP struct {
	URL   string
	proxy *toxiproxy.Proxy
}

// TCPToxics are the toxics a TCP proxy installs, by toxiproxy type.
var TCPToxics = []string{"reset_peer", "timeout", "latency", "bandwidth", "slicer"}

// StartTCP starts toxiproxy in front of backend (the emulator's URL) with
// every toxic of TCPToxics at rate.
func StartTCP(backend string, rate float64) (*TCP, error) {
	u, err := url.Parse(backend)
	if err != nil {
		return nil, fmt.Errorf("the emulator's URL %q: %w", backend, err)
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "emulator", "127.0.0.1:0", u.Host)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("starting toxiproxy in front of %s: %w", u.Host, err)
	}
	attrs := map[string]string{
		"reset_peer": `{"timeout": 300}`,
		"timeout":    `{"timeout": 500}`,
		"latency":    `{"latency": 40, "jitter": 40}`,
		"bandwidth":  `{"rate": 64}`,
		"slicer":     `{"average_size": 256, "size_variation": 128, "delay": 2000}`,
	}
	const toxicsPerConn = 7
	toxicity := 1 - math.Pow(1-rate, 1.0/toxicsPerConn)
	for _, typ := range TCPToxics {
		for _, dir := range []string{"upstream", "downstream"} {
			if dir == "upstream" && typ != "reset_peer" && typ != "latency" {
				continue // the responses are where a slow or silent link shows
			}
			spec := fmt.Sprintf(`{"name": %q, "type": %q, "stream": %q, "toxicity": %g, "attributes": %s}`, typ+"_"+dir, typ, dir, toxicity, attrs[typ])
			if _, err := p.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
				p.Stop()
				return nil, fmt.Errorf("adding the toxic %s: %w", spec, err)
			}
		}
	}
	return &TCP{URL: "http://" + p.Listen, proxy: p}, nil
}

// Close stops the proxy and closes its connections.
func (t *TCP) Close() { t.proxy.Stop() }
