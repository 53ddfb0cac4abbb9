// Package faults is the test harness's fault-injection layer: an HTTP
// reverse proxy on loopback between dynops and the emulator that, with a
// seeded random source, answers a share of the requests with the error
// shapes AWS services send under load (throttling, 500, 503, each in the
// service's own protocol: JSON 1.0 for DynamoDB and SQS, REST-XML for S3,
// REST-JSON for Lambda, query XML for STS and CloudWatch), resets
// connections mid-response (after the emulator acted: the response is lost,
// not the request), and adds latency and slow bodies.
//
// Sources for the shapes: the DynamoDB API reference "Error handling"
// (JSON body {"__type": "...#ProvisionedThroughputExceededException",
// "message": ...}, HTTP 400; ThrottlingException, RequestLimitExceeded;
// InternalServerError 500, ServiceUnavailable 503), the S3 API reference
// "Error responses" (<Error><Code>SlowDown</Code>..., HTTP 503), SQS
// (RequestThrottled, with the x-amzn-query-error header of the JSON
// protocol), Lambda (TooManyRequestsException, HTTP 429), and the query
// protocol's <ErrorResponse> (Throttling, HTTP 400).
package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Kind is one fault.
type Kind string

// Fault kinds.
const (
	Throttle Kind = "throttle" // the service's throttling error, not forwarded
	Error500 Kind = "500"      // InternalServerError, not forwarded
	Error503 Kind = "503"      // ServiceUnavailable / SlowDown, not forwarded
	Reset    Kind = "reset"    // forwarded; the connection is reset half-way through the response
	Latency  Kind = "latency"  // forwarded after up to 150 ms
	SlowBody Kind = "slow"     // forwarded; the body trickles out in small chunks
)

// All is every kind.
var All = []Kind{Throttle, Error500, Error503, Reset, Latency, SlowBody}

// Config of a Proxy.
type Config struct {
	Rate  float64 // share of requests that get a fault (0..1)
	Kinds []Kind  // the faults to choose from (default All)
	Seed  uint64
	// Observe, when set, sees every request before the proxy acts on it:
	// its number (from 1) and its operation (Operation). A kill test stops
	// the client there; the proxy then forwards the request as usual, so a
	// killed client's last request may or may not take effect.
	Observe func(n int, op string)
	// Reasons, when set, are the ThrottlingReasons every DynamoDB throttle
	// carries (ThrottlingReasons [{reason, resource}] on
	// ProvisionedThroughputExceededException and RequestLimitExceeded,
	// throttlingReasons on ThrottlingException: the API reference's
	// shapes). The emulator never throttles, let alone by reason.
	Reasons []ThrottlingReason
	// Operations, when set, are the only operations (Operation) that get
	// faults; the others are forwarded.
	Operations []string
	// Limit, when above 0, is how many faults the proxy injects in all;
	// it forwards every request after that.
	Limit int
}

// ThrottlingReason is one reason of a DynamoDB throttle (API_ThrottlingReason).
type ThrottlingReason struct {
	Reason   string `json:"reason"`
	Resource string `json:"resource"`
}

// Proxy is a running fault-injecting reverse proxy.
type Proxy struct {
	URL string

	cfg     Config
	backend *url.URL
	rp      *httputil.ReverseProxy
	srv     *http.Server
	ln      net.Listener

	mu     sync.Mutex
	rnd    *rand.Rand
	counts map[Kind]int
	total  int
	seen   int
}

// Start starts a proxy in front of backend (e.g. the emulator's URL).
func Start(backend string, cfg Config) (*Proxy, error) {
	u, err := url.Parse(backend)
	if err != nil {
		return nil, err
	}
	if len(cfg.Kinds) == 0 {
		cfg.Kinds = All
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{URL: "http://" + ln.Addr().String(), cfg: cfg, backend: u, ln: ln,
		rnd: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), counts: map[Kind]int{}}
	p.rp = httputil.NewSingleHostReverseProxy(u)
	p.srv = &http.Server{Handler: p}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() error { return p.srv.Close() }

// Counts returns how many requests got each fault, and the total seen.
func (p *Proxy) Counts() (map[Kind]int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := make(map[Kind]int, len(p.counts))
	for k, v := range p.counts {
		c[k] = v
	}
	return c, p.total
}

// SetRate changes the fault rate (e.g. 0 for a fault-free check).
func (p *Proxy) SetRate(r float64) {
	p.mu.Lock()
	p.cfg.Rate = r
	p.mu.Unlock()
}

func sumCounts(c map[Kind]int) int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

func (p *Proxy) pick() (Kind, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total++
	if p.rnd.Float64() >= p.cfg.Rate || (p.cfg.Limit > 0 && sumCounts(p.counts) >= p.cfg.Limit) {
		return "", 0
	}
	k := p.cfg.Kinds[p.rnd.IntN(len(p.cfg.Kinds))]
	p.counts[k]++
	return k, time.Duration(p.rnd.IntN(150)) * time.Millisecond
}

// service says which AWS protocol a request speaks.
type service int

const (
	dynamoDB  service = iota // JSON 1.0, X-Amz-Target DynamoDB_20120810.* / DynamoDBStreams_*
	sqsJSON                  // JSON 1.0, X-Amz-Target AmazonSQS.*
	otherJSON                // another JSON target
	lambda                   // REST-JSON under /2015-03-31/
	query                    // Action=... form (STS, CloudWatch, SQS query)
	s3                       // REST-XML
)

func classify(r *http.Request, body []byte) service {
	target := r.Header.Get("X-Amz-Target")
	switch {
	case strings.HasPrefix(target, "DynamoDB"):
		return dynamoDB
	case strings.HasPrefix(target, "AmazonSQS"):
		return sqsJSON
	case target != "":
		return otherJSON
	case strings.HasPrefix(r.URL.Path, "/2015-03-31/") || strings.HasPrefix(r.URL.Path, "/2017-03-31/"):
		return lambda
	case bytes.HasPrefix(body, []byte("Action=")) || strings.Contains(string(body), "&Action="):
		return query
	}
	return s3
}

// ServeHTTP injects a fault or forwards.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if p.cfg.Observe != nil {
		p.mu.Lock()
		p.seen++
		n := p.seen
		p.mu.Unlock()
		p.cfg.Observe(n, Operation(r, body))
	}
	kind, delay := Kind(""), time.Duration(0)
	if len(p.cfg.Operations) == 0 || slices.Contains(p.cfg.Operations, Operation(r, body)) {
		kind, delay = p.pick()
	}
	svc := classify(r, body)
	switch kind {
	case Throttle, Error500, Error503:
		writeError(w, shape(svc, kind, p.cfg.Reasons))
	case Latency:
		time.Sleep(delay)
		p.rp.ServeHTTP(w, r)
	case Reset:
		rec := &recorder{header: http.Header{}, code: 200}
		p.rp.ServeHTTP(rec, r)
		resetHalfway(w, rec, r.Method == http.MethodHead)
	case SlowBody:
		rec := &recorder{header: http.Header{}, code: 200}
		p.rp.ServeHTTP(rec, r)
		trickle(w, rec, r.Method == http.MethodHead)
	default:
		p.rp.ServeHTTP(w, r)
	}
}

// Operation names a request's API operation: the X-Amz-Target's operation
// (DynamoDB, SQS, SSM: "PutResourcePolicy"), the query protocol's Action,
// or the method and path (S3, Lambda).
func Operation(r *http.Request, body []byte) string {
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		return t[strings.LastIndex(t, ".")+1:]
	}
	if v, err := url.ParseQuery(string(body)); err == nil && v.Get("Action") != "" {
		return v.Get("Action")
	}
	return r.Method + " " + r.URL.Path
}

// ErrorShape is what one fault looks like on the wire.
type ErrorShape struct {
	Status  int
	Headers map[string]string
	Body    string
}

// Shape returns the error response for a service and kind.
func shape(svc service, kind Kind, reasons []ThrottlingReason) ErrorShape {
	code, status := "", 500
	switch svc {
	case dynamoDB:
		const ns = "com.amazonaws.dynamodb.v20120810#"
		switch kind {
		case Throttle:
			code, status = pickOne(ns+"ProvisionedThroughputExceededException", "com.amazon.coral.availability#ThrottlingException", ns+"RequestLimitExceeded"), 400
		case Error500:
			code = ns + "InternalServerError"
		default:
			code, status = "com.amazon.coral.availability#ServiceUnavailableException", 503
		}
		body := map[string]any{"__type": code, "message": "injected by test/helpers/faults"}
		if kind == Throttle && len(reasons) > 0 {
			field := "ThrottlingReasons"
			if strings.HasSuffix(code, "#ThrottlingException") {
				field = "throttlingReasons"
			}
			body[field] = reasons
		}
		raw, _ := json.Marshal(body)
		return ErrorShape{Status: status, Headers: map[string]string{"Content-Type": "application/x-amz-json-1.0"}, Body: string(raw)}
	case sqsJSON, otherJSON:
		q := ""
		switch kind {
		case Throttle:
			code, q, status = "ThrottlingException", "RequestThrottled;Sender", 400
		case Error500:
			code, q = "InternalFailure", "InternalError;Receiver"
		default:
			code, q, status = "ServiceUnavailable", "ServiceUnavailable;Receiver", 503
		}
		return ErrorShape{Status: status, Headers: map[string]string{"Content-Type": "application/x-amz-json-1.0", "x-amzn-query-error": q},
			Body: fmt.Sprintf(`{"__type":"com.amazonaws.sqs#%s","message":"injected by test/helpers/faults"}`, code)}
	case lambda:
		switch kind {
		case Throttle:
			code, status = "TooManyRequestsException", 429
		case Error500:
			code = "ServiceException"
		default:
			code, status = "ServiceException", 503
		}
		return ErrorShape{Status: status, Headers: map[string]string{"Content-Type": "application/json", "X-Amzn-ErrorType": code},
			Body: `{"Type":"Service","message":"injected by test/helpers/faults"}`}
	case query:
		switch kind {
		case Throttle:
			code, status = "Throttling", 400
		case Error500:
			code = "InternalFailure"
		default:
			code, status = "ServiceUnavailable", 503
		}
		return ErrorShape{Status: status, Headers: map[string]string{"Content-Type": "text/xml"},
			Body: `<ErrorResponse><Error><Type>Sender</Type><Code>` + code + `</Code><Message>injected by test/helpers/faults</Message></Error><RequestId>fault</RequestId></ErrorResponse>`}
	}
	switch kind {
	case Throttle, Error503:
		code, status = "SlowDown", 503
	default:
		code = "InternalError"
	}
	return ErrorShape{Status: status, Headers: map[string]string{"Content-Type": "application/xml"},
		Body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + code + `</Code><Message>injected by test/helpers/faults</Message><RequestId>fault</RequestId></Error>`}
}

var pickMu sync.Mutex
var pickN int

// pickOne rotates through the throttling codes (deterministic: the seed
// decides which requests fail, the rotation which code they get).
func pickOne(codes ...string) string {
	pickMu.Lock()
	defer pickMu.Unlock()
	pickN++
	return codes[pickN%len(codes)]
}

func writeError(w http.ResponseWriter, s ErrorShape) {
	for k, v := range s.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("X-Amz-Crc32", fmt.Sprint(crc32.ChecksumIEEE([]byte(s.Body))))
	w.Header().Set("x-amzn-RequestId", "fault")
	w.WriteHeader(s.Status)
	_, _ = io.WriteString(w, s.Body)
}

// recorder buffers the emulator's response.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// copyHeader copies the emulator's headers. The Content-Length of a HEAD
// response is the object's size, not the (empty) body's: kept as it came
// (HeadObject read 0 bytes for every object it slowed down).
func copyHeader(w http.ResponseWriter, rec *recorder, head bool) {
	for k, vs := range rec.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if !head {
		w.Header().Set("Content-Length", fmt.Sprint(rec.body.Len()))
	}
}

// resetHalfway sends the status, headers and half the body, then resets the
// connection (RST): the request took effect, its response is lost.
func resetHalfway(w http.ResponseWriter, rec *recorder, head bool) {
	copyHeader(w, rec, head)
	w.WriteHeader(rec.code)
	_, _ = w.Write(rec.body.Bytes()[:rec.body.Len()/2])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// trickle sends the body in 512-byte chunks, 2 ms apart (at most ~200 ms).
func trickle(w http.ResponseWriter, rec *recorder, head bool) {
	copyHeader(w, rec, head)
	w.WriteHeader(rec.code)
	b := rec.body.Bytes()
	step := max(512, len(b)/100)
	for len(b) > 0 {
		n := min(step, len(b))
		_, _ = w.Write(b[:n])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		b = b[n:]
		time.Sleep(2 * time.Millisecond)
	}
}
