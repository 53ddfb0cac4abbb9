package faults

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// TCP is the fault layer below HTTP: toxiproxy's server
// (github.com/Shopify/toxiproxy/v2, embedded, no separate process) with
// one proxy per toxic in front of the emulator, each with that toxic on
// every connection, and a front listener on a free loopback port that
// decides, for each new connection in the order they arrive, from a
// seeded RNG (TCPConfig.Seed), whether it is faulted (probability Rate)
// and with which toxic (uniformly), and sends it to that toxic's proxy or
// straight to the emulator. The same seed gives the same sequence of
// decisions: the i-th connection gets the same toxic in every run (which
// request opens the i-th connection still depends on the client's
// connection reuse and concurrency). A faulted connection is reset
// (reset_peer, after up to 300 ms), goes silent and is closed (timeout,
// 500 ms: a request that took effect and whose answer never came), is
// slowed (latency 40 ms ± 40), throttled to 64 KB/s (bandwidth), or has
// its bytes cut into small delayed pieces (slicer). toxiproxy's own
// per-toxic toxicity is not used: it draws from math/rand's global
// source, which cannot be seeded per proxy. The HTTP layer (Proxy) stays
// for the AWS error shapes, which a TCP proxy cannot speak.
type TCP struct {
	URL string

	backend string
	ln      net.Listener
	proxies map[string]*toxiproxy.Proxy
	names   []string // the toxics to choose from, in a fixed order

	mu        sync.Mutex
	rnd       *rand.Rand
	rate      float64
	decisions []string // per connection: the toxic, or "" for none
	conns     map[net.Conn]bool
	closed    bool
	wg        sync.WaitGroup
}

// TCPConfig is a TCP fault layer's setting.
type TCPConfig struct {
	Rate float64 // share of connections that get a toxic (0..1)
	Seed uint64
	// Toxics are the toxics to choose from, by name (TCPToxicNames);
	// default all of them.
	Toxics []string
}

// TCPToxics are the toxics a TCP proxy installs, by toxiproxy type.
var TCPToxics = []string{"reset_peer", "timeout", "latency", "bandwidth", "slicer"}

// TCPToxicNames are the toxic/direction pairs: every toxic on the
// responses (where a slow or silent link shows), reset and latency on the
// requests too.
var TCPToxicNames = []string{"reset_peer_upstream", "reset_peer_downstream", "timeout_downstream", "latency_upstream", "latency_downstream", "bandwidth_downstream", "slicer_downstream"}

var toxicAttrs = map[string]string{
	"reset_peer": `{"timeout": 300}`,
	"timeout":    `{"timeout": 500}`,
	"latency":    `{"latency": 40, "jitter": 40}`,
	"bandwidth":  `{"rate": 64}`,
	"slicer":     `{"average_size": 256, "size_variation": 128, "delay": 2000}`,
}

// StartTCP starts the TCP fault layer in front of backend (the emulator's URL).
func StartTCP(backend string, cfg TCPConfig) (*TCP, error) {
	u, err := url.Parse(backend)
	if err != nil {
		return nil, fmt.Errorf("the emulator's URL %q: %w", backend, err)
	}
	names := cfg.Toxics
	if len(names) == 0 {
		names = TCPToxicNames
	}
	t := &TCP{backend: u.Host, proxies: map[string]*toxiproxy.Proxy{}, names: names, rate: cfg.Rate,
		rnd: rand.New(rand.NewPCG(cfg.Seed, 0x7c9)), conns: map[net.Conn]bool{}}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	for _, name := range names {
		i := strings.LastIndex(name, "_")
		if i < 0 || toxicAttrs[name[:i]] == "" {
			t.Close()
			return nil, fmt.Errorf("unknown toxic %q: one of %v", name, TCPToxicNames)
		}
		typ, dir := name[:i], name[i+1:]
		p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", u.Host)
		if err := p.Start(); err != nil {
			t.Close()
			return nil, fmt.Errorf("starting toxiproxy in front of %s: %w", u.Host, err)
		}
		t.proxies[name] = p
		spec := fmt.Sprintf(`{"name": %q, "type": %q, "stream": %q, "toxicity": 1, "attributes": %s}`, name, typ, dir, toxicAttrs[typ])
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
			t.Close()
			return nil, fmt.Errorf("adding the toxic %s: %w", spec, err)
		}
	}
	if t.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Close()
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	t.URL = "http://" + t.ln.Addr().String()
	t.wg.Add(1)
	go t.serve()
	return t, nil
}

func (t *TCP) serve() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			return
		}
		upstream := t.backend
		t.mu.Lock()
		toxic := ""
		if t.rnd.Float64() < t.rate {
			toxic = t.names[t.rnd.IntN(len(t.names))]
			upstream = t.proxies[toxic].Listen
		}
		t.decisions = append(t.decisions, toxic)
		if t.closed {
			t.mu.Unlock()
			_ = c.Close()
			return
		}
		t.conns[c] = true
		t.wg.Add(1)
		t.mu.Unlock()
		go t.pipe(c, upstream)
	}
}

// pipe joins the client's connection to upstream until either side ends.
func (t *TCP) pipe(c net.Conn, upstream string) {
	defer t.wg.Done()
	defer func() {
		t.mu.Lock()
		delete(t.conns, c)
		t.mu.Unlock()
		_ = c.Close()
	}()
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(up, c)
	go cp(c, up)
	<-done // one side ended: close both (the deferred closes end the other copy)
}

// Decisions are the toxic each connection got so far, in the order the
// connections arrived ("" for none).
func (t *TCP) Decisions() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string{}, t.decisions...)
}

// Counts are the connections per toxic so far, and all connections.
func (t *TCP) Counts() (map[string]int, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := map[string]int{}
	for _, d := range t.decisions {
		if d != "" {
			m[d]++
		}
	}
	return m, len(t.decisions)
}

// Close stops the proxies and closes every connection.
func (t *TCP) Close() {
	t.mu.Lock()
	t.closed = true
	for c := range t.conns {
		_ = c.Close()
	}
	t.mu.Unlock()
	if t.ln != nil {
		_ = t.ln.Close()
	}
	for _, p := range t.proxies {
		p.Stop()
	}
	t.wg.Wait()
}
