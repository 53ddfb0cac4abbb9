// Package lambdaendpoint serves the Lambda Invoke API on a loopback port and
// runs Go handlers in-process through aws-lambda-go's handler adapter, so that
// dynops invokes real consumer code over HTTP through its production path.
// moto cannot run Lambda code (no Docker) and the Lambda Runtime Interface
// Emulator is not available here.
//
// It implements POST /2015-03-31/functions/{name}/invocations for
// RequestResponse invocations: the payload goes to the handler; its response
// comes back with status 200; a handler error comes back with status 200, the
// X-Amz-Function-Error: Unhandled header and the AWS error JSON
// ({"errorMessage", "errorType"}); an unknown function is a 404
// ResourceNotFoundException. Every invocation is recorded, payload included.
//
// As on Lambda, each execution environment serves one invocation at a time
// (aws-lambda-go's handler adapter is not safe for concurrent use):
// concurrent invocations get environments of their own, created on demand.
package lambdaendpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
)

// Invocation is one call the endpoint served.
type Invocation struct {
	Time     time.Time       `json:"time"`
	Function string          `json:"function"`
	Payload  json.RawMessage `json:"payload"`
	Response json.RawMessage `json:"response,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// Server is a running endpoint.
type Server struct {
	// URL is the endpoint, e.g. http://127.0.0.1:41234 (for --lambda-endpoint-url).
	URL string

	mu          sync.Mutex
	delay       time.Duration
	onInvoke    func(Invocation)
	functions   map[string]*function
	invocations []Invocation
	tagsErr     int
	srv         *http.Server
	ln          net.Listener
}

// Start listens on addr ("127.0.0.1:0" for a free port) and serves.
func Start(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("lambda endpoint: listening on %s: %w", addr, err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), functions: map[string]*function{}, ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", s.invoke)
	mux.HandleFunc("GET /2015-03-31/functions/{name}/configuration", s.configuration)
	mux.HandleFunc("GET /2017-03-31/tags/{arn}", s.listTags)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Register serves the function name (invoked by name or by any ARN ending
// in :function:name); newEnv starts one execution environment, e.g.
// func() lambda.Handler { return lambda.NewHandler(h.Handle) }.
func (s *Server) Register(name string, newEnv func() lambda.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.functions[name] = &function{newEnv: newEnv}
}

// SetTags sets the tags a registered function answers ListTags with (what
// dynops reads to decide whether it is protected). A function without
// SetTags has no tags.
func (s *Server) SetTags(name string, tags map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fn, ok := s.functions[name]; ok {
		fn.tags = tags
	}
}

// SetTagsError makes ListTags of every function fail with HTTP status
// (e.g. 403 AccessDeniedException), to test what dynops does when it cannot
// read them; 0 restores normal answers.
func (s *Server) SetTagsError(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tagsErr = status
}

// Region is the region the endpoint's function ARNs name.
const Region = "eu-west-1"

// ARN is the ARN the endpoint gives function name.
func ARN(name string) string {
	return "arn:aws:lambda:" + Region + ":123456789012:function:" + name
}

func (s *Server) lookup(nameOrArn string) (*function, string, bool) {
	name := FunctionName(nameOrArn)
	s.mu.Lock()
	defer s.mu.Unlock()
	fn, ok := s.functions[name]
	return fn, name, ok
}

// configuration answers GetFunctionConfiguration with the name and ARN.
func (s *Server) configuration(w http.ResponseWriter, r *http.Request) {
	_, name, ok := s.lookup(r.PathValue("name"))
	if !ok {
		writeError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"FunctionName": name, "FunctionArn": ARN(name), "Runtime": "provided.al2023"})
}

// listTags answers ListTags with the tags SetTags gave.
func (s *Server) listTags(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	status := s.tagsErr
	s.mu.Unlock()
	if status != 0 {
		writeError(w, status, "AccessDeniedException", "not authorized to perform lambda:ListTags (test endpoint)")
		return
	}
	fn, name, ok := s.lookup(r.PathValue("arn"))
	if !ok {
		writeError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	s.mu.Lock()
	tags := fn.tags
	s.mu.Unlock()
	if tags == nil {
		tags = map[string]string{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"Tags": tags})
}

// function is a registered function and its idle execution environments.
type function struct {
	tags   map[string]string
	newEnv func() lambda.Handler
	mu     sync.Mutex
	idle   []lambda.Handler
}

func (f *function) acquire() lambda.Handler {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.idle); n > 0 {
		h := f.idle[n-1]
		f.idle = f.idle[:n-1]
		return h
	}
	return f.newEnv()
}

func (f *function) release(h lambda.Handler) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.idle = append(f.idle, h)
}

// SetDelay adds d to every invocation (a function's own duration), for
// interrupt tests and benchmarks.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// OnInvoke has f called with each invocation as it is recorded (nil: none).
func (s *Server) OnInvoke(f func(Invocation)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onInvoke = f
}

// Invocations returns what was served so far.
func (s *Server) Invocations() []Invocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Invocation(nil), s.invocations...)
}

// Close stops the server.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// FunctionName is the name part of a function name, ARN or partial ARN.
func FunctionName(nameOrArn string) string {
	p := strings.Split(nameOrArn, ":")
	for i := range p {
		if p[i] == "function" && i+1 < len(p) {
			return p[i+1]
		}
	}
	return p[0]
}

func (s *Server) invoke(w http.ResponseWriter, r *http.Request) {
	name := FunctionName(r.PathValue("name"))
	if t := r.Header.Get("X-Amz-Invocation-Type"); t != "" && t != "RequestResponse" {
		writeError(w, http.StatusBadRequest, "InvalidParameterValueException", "this endpoint serves RequestResponse invocations only, not "+t)
		return
	}
	s.mu.Lock()
	fn, ok := s.functions[name]
	delay := s.delay
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	payload, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error())
		return
	}
	time.Sleep(delay)
	env := fn.acquire()
	resp, herr := env.Invoke(r.Context(), payload)
	resp = bytes.Clone(resp) // the adapter reuses its buffer on the environment's next invocation
	fn.release(env)
	inv := Invocation{Time: time.Now().UTC(), Function: name, Payload: json.RawMessage(payload)}
	status, body := http.StatusOK, resp
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	if herr != nil {
		inv.Error = herr.Error()
		body, _ = json.Marshal(map[string]string{"errorMessage": herr.Error(), "errorType": errorType(herr)})
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
	} else {
		inv.Response = json.RawMessage(resp)
	}
	// Recorded once the handler ran, before the caller hears of it: a caller
	// killed meanwhile still counts as an invocation (its side effects happened).
	s.mu.Lock()
	s.invocations = append(s.invocations, inv)
	on := s.onInvoke
	s.mu.Unlock()
	if on != nil {
		on(inv)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// errorType names an error's type as the Lambda Go runtime does.
func errorType(err error) string {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"Type": "User", "message": msg})
}
