package awsconfig

import (
	"context"
	"io"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// readOnlyBody is the last middleware before the HTTP client: it hands
// net/http each request body without its WriteTo (Read and Seek only).
//
// Why: smithy-go closes a request body (its "safe read closer") as soon as
// http.Client.Do returns, that is when the response headers have arrived.
// net/http's write loop may not be done with the body by then: after the
// ContentLength bytes it drains the rest with io.Copy(io.Discard, body), and
// io.Copy uses the body's WriteTo when it has one; on a closed safe read
// closer WriteTo returns io.EOF, which io.Copy passes on as an error (a
// Read's io.EOF ends the copy, WriteTo's does not). The transport takes it
// for a failed request write and closes the connection under the response
// still being read: "deserialization failed, read tcp ...: use of closed
// network connection". A server that answers at once and sends its body
// slowly hits it (test/helpers/faults's slow bodies, TestForwardedFaults/slow). Read
// on a closed body returns io.EOF too, which is only the end of the drain.
// (The SDK's HTTP client itself cannot be wrapped: AWS_CA_BUNDLE needs it to
// be the SDK's *BuildableClient.)
func readOnlyBody(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	if req, ok := in.Request.(*smithyhttp.Request); ok {
		if stream, ok := req.GetStream().(io.WriterTo); ok {
			var plain io.Reader = struct{ io.Reader }{stream.(io.Reader)}
			if rs, ok := stream.(io.ReadSeeker); ok {
				plain = readSeeker{rs}
			}
			r, err := req.SetStream(plain)
			if err != nil {
				return middleware.DeserializeOutput{}, middleware.Metadata{}, err
			}
			in.Request = r
		}
	}
	return next.HandleDeserialize(ctx, in)
}

// readSeeker exposes only Read and Seek (so the SDK can still rewind and
// measure the body).
type readSeeker struct{ rs io.ReadSeeker }

func (r readSeeker) Read(p []byte) (int, error)                { return r.rs.Read(p) }
func (r readSeeker) Seek(off int64, whence int) (int64, error) { return r.rs.Seek(off, whence) }
