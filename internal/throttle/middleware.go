package throttle

import (
	"context"

	"github.com/aws/smithy-go/middleware"
)

// Middleware adds r to a client's stack (an APIOptions entry): it sees the
// outcome of every attempt, before the retryer decides to retry it, so the
// throttles the SDK absorbs are counted too. A nil r adds nothing.
func (r *Recorder) Middleware(stack *middleware.Stack) error {
	if r == nil {
		return nil
	}
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("dynopsThrottleReasons",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleDeserialize(ctx, in)
			r.Observe(err)
			return out, md, err
		}), middleware.Before)
}
