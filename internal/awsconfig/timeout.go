package awsconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// DefaultTimeout bounds one AWS operation, retries included, when a command
// sets no other value and --timeout is not given.
const DefaultTimeout = 30 * time.Second

// maxConnectTimeout bounds the TCP connect and TLS handshake of one attempt.
const maxConnectTimeout = 10 * time.Second

// operationTimeouts are operations that legitimately take longer than any
// command's --timeout: a synchronous Lambda invoke runs as long as the
// function (15 minutes at most) before the first byte of the answer.
func operationTimeouts() map[string]time.Duration {
	return map[string]time.Duration{"Lambda.Invoke": 16 * time.Minute}
}

// connectTimeout is the connect and TLS handshake bound for an operation timeout.
func connectTimeout(op time.Duration) time.Duration { return min(op, maxConnectTimeout) }

// TimeoutError says that an AWS operation got no answer in time: which
// service and operation, the endpoint and region it waited on and how long.
type TimeoutError struct {
	Service   string
	Operation string
	Endpoint  string
	Region    string
	After     time.Duration
	Err       error
}

func (e *TimeoutError) Error() string {
	// The SDK's operation error around it names the service and operation.
	return fmt.Sprintf("no answer from %s (region %s) within %s: the endpoint (or the network to it) is not answering; check the region's health and --endpoint-url, or raise --timeout",
		e.Endpoint, e.Region, e.After)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout marks the error as a timeout for net.Error-style checks.
func (e *TimeoutError) Timeout() bool { return true }

// callInfo is what the middlewares learn about one operation call: the
// endpoint a request went to (resolved late, in the finalize step).
type callInfo struct {
	mu       sync.Mutex
	endpoint string
}

type callInfoKey struct{}

func (c *callInfo) setEndpoint(s string) {
	c.mu.Lock()
	c.endpoint = s
	c.mu.Unlock()
}

func (c *callInfo) getEndpoint() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endpoint
}

// guard is the middleware pair every client gets from Load: a deadline on
// each operation (retries included) and the translation of its errors into
// ones that name the service, endpoint, region and account (errors.go).
type guard struct {
	timeout  time.Duration
	slow     map[string]time.Duration
	endpoint string // the configured base endpoint, "" for the SDK's own resolution
	debug    bool
	account  func(context.Context) string
	// unanswered: endpoints that timed out earlier in this run (nil: none kept).
	unanswered *Unanswered
}

func (g *guard) addTo(stack *middleware.Stack) error {
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("DynopsGuard", g.handle), middleware.Before); err != nil {
		return err
	}
	if err := stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("DynopsReadOnlyBody", readOnlyBody), middleware.After); err != nil {
		return err
	}
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("DynopsEndpoint",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			if info, ok := ctx.Value(callInfoKey{}).(*callInfo); ok {
				if req, ok := in.Request.(*smithyhttp.Request); ok && req.URL != nil {
					ep := req.URL.Scheme + "://" + req.URL.Host
					info.setEndpoint(ep)
					if first := g.unanswered.first(ep, awsmiddleware.GetRegion(ctx)); first != nil {
						return middleware.DeserializeOutput{}, middleware.Metadata{}, &notTriedAgain{first: first}
					}
				}
			}
			return next.HandleDeserialize(ctx, in)
		}), middleware.Before)
}

func (g *guard) timeoutFor(service, op string) time.Duration {
	if d, ok := g.slow[service+"."+op]; ok && d > g.timeout {
		return d
	}
	return g.timeout
}

func (g *guard) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	service, op := awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)
	info := &callInfo{endpoint: g.endpoint}
	ctx = context.WithValue(ctx, callInfoKey{}, info)

	limit := g.timeoutFor(service, op)
	opCtx, cancel := context.WithCancelCause(ctx)
	var fired atomic.Bool
	timer := time.AfterFunc(limit, func() {
		fired.Store(true)
		cancel(context.DeadlineExceeded)
	})
	out, md, err := next.HandleInitialize(opCtx, in)
	stopped := timer.Stop()
	if err == nil {
		if body := streamingBody(out.Result); body != nil && stopped {
			// The caller reads the body after the call returns: keep the
			// context until it is closed, and cancel it when the stream
			// goes silent for the operation's timeout.
			*body = &idleBody{ReadCloser: *body, idle: limit, cancel: func() { cancel(context.DeadlineExceeded) }}
			return out, md, nil
		}
		cancel(nil)
		return out, md, nil
	}
	cancel(nil)
	if ctx.Err() != nil {
		// The caller's context ended (Ctrl-C, a wait timeout): not ours to explain.
		return out, md, err
	}
	endpoint := info.getEndpoint()
	if endpoint == "" {
		endpoint = "the " + service + " endpoint of " + awsmiddleware.GetRegion(ctx)
	}
	region := awsmiddleware.GetRegion(ctx)
	var nta *notTriedAgain
	if errors.As(err, &nta) {
		return out, md, &TimeoutError{Service: service, Operation: op, Endpoint: endpoint, Region: region, After: nta.first.After, Err: err}
	}
	if fired.Load() || isTimeout(err) {
		te := &TimeoutError{Service: service, Operation: op, Endpoint: endpoint, Region: region, After: limit, Err: err}
		g.unanswered.add(info.getEndpoint(), region, te)
		return out, md, te
	}
	return out, md, g.translate(ctx, service, op, endpoint, region, in.Parameters, err)
}

// isTimeout reports whether err is a network timeout (connect, TLS, read).
func isTimeout(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout awaiting response headers")
}

// streamingBody returns the address of the Body field of an output that
// streams it (S3 GetObject), or nil.
func streamingBody(result any) *io.ReadCloser {
	v := reflect.ValueOf(result)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("Body")
	if !f.IsValid() || f.Type() != reflect.TypeFor[io.ReadCloser]() || f.IsNil() || !f.CanAddr() {
		return nil
	}
	return f.Addr().Interface().(*io.ReadCloser)
}

// idleBody cancels its operation's context when no byte arrives for idle,
// and when it is closed.
type idleBody struct {
	io.ReadCloser
	idle   time.Duration
	cancel func()
}

func (b *idleBody) Read(p []byte) (int, error) {
	t := time.AfterFunc(b.idle, b.cancel)
	n, err := b.ReadCloser.Read(p)
	t.Stop()
	return n, err
}

func (b *idleBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
