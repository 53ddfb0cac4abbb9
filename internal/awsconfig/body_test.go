package awsconfig

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What net/http does with a request body once smithy-go closed it (the
// response headers arrived): drain the rest with io.Copy(io.Discard, body).
// Without readOnlyBody the drain fails with io.EOF (the closed body's
// WriteTo), which makes the transport close the connection under the
// response; with it, the drain ends cleanly. Every kind of stream the SDK
// sends: seekable with WriteTo (bytes.Reader, strings.Reader), not
// seekable with WriteTo (bytes.Buffer).
func TestReadOnlyBodyDrainAfterClose(t *testing.T) {
	streams := map[string]func() io.Reader{
		"bytes.Reader":   func() io.Reader { return bytes.NewReader([]byte(`{"TableName":"dev-hoge-user"}`)) },
		"strings.Reader": func() io.Reader { return strings.NewReader(`{"TableName":"dev-hoge-user"}`) },
		"bytes.Buffer":   func() io.Reader { return bytes.NewBufferString(`{"TableName":"dev-hoge-user"}`) },
	}
	for name, stream := range streams {
		for _, guarded := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "/without", true: "/with"}[guarded], func(t *testing.T) {
				req := smithyhttp.NewStackRequest().(*smithyhttp.Request)
				req.Method = http.MethodPost
				req, err := req.SetStream(stream())
				require.NoError(t, err)
				wantLen := req.ContentLength
				var built *http.Request
				next := middleware.DeserializeHandlerFunc(func(ctx context.Context, in middleware.DeserializeInput) (middleware.DeserializeOutput, middleware.Metadata, error) {
					r := in.Request.(*smithyhttp.Request)
					assert.Equal(t, wantLen, r.ContentLength, "the length is kept")
					if r.IsStreamSeekable() {
						require.NoError(t, r.RewindStream(), "a seekable body stays rewindable (retries)")
					}
					built = r.Build(ctx)
					return middleware.DeserializeOutput{}, middleware.Metadata{}, nil
				})
				in := middleware.DeserializeInput{Request: req}
				if guarded {
					_, _, err = readOnlyBody(context.Background(), in, next)
				} else {
					_, _, err = next.HandleDeserialize(context.Background(), in)
				}
				require.NoError(t, err)
				require.NotNil(t, built.Body)
				sent, err := io.ReadAll(io.LimitReader(built.Body, built.ContentLength))
				require.NoError(t, err)
				assert.Equal(t, `{"TableName":"dev-hoge-user"}`, string(sent))
				require.NoError(t, built.Body.Close()) // smithy-go, when Do returned
				_, err = io.Copy(io.Discard, built.Body)
				_, hasWriteTo := stream().(io.WriterTo)
				if guarded || !hasWriteTo {
					assert.NoError(t, err, "the drain after close ends cleanly")
				} else {
					assert.ErrorIs(t, err, io.EOF, "the SDK's closed body fails the drain (the defect readOnlyBody avoids)")
				}
			})
		}
	}
}
