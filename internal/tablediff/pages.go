package tablediff

import (
	"context"
	"fmt"
	"runtime"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// pageSlots bounds how many Scan pages a diff holds decoded at once, across
// all segments of both tables. A 1 MB page becomes about 5 MB of attribute
// values when the SDK decodes it, so with every segment's page decoded at
// the same moment the peak heap (and the garbage collector's goal, twice
// the live heap) grew with the run's length: the longer the run, the more
// likely all pages coincide (docs/performance.md, "Memory").
//
// A slot is taken when a page's response has arrived, before the SDK reads
// and decodes its body, and given back once the diff has reduced the page's
// items to keys and checksums. The requests themselves are not bounded: on
// AWS every segment's Scan still waits on the service at the same time;
// only the CPU work of a page (read, decode, reduce) is. The default is half
// the cores (at least one): the other half is left to the garbage collector
// and the segments' HTTP reads. On 2 cores one slot was as fast as two and
// as fast as no bound (`make bench`, ONE MACHINE), with a flat peak.
type pageSlots chan struct{}

func newPageSlots(n int) pageSlots {
	if n <= 0 {
		n = max(1, runtime.GOMAXPROCS(0)/2)
	}
	return make(pageSlots, n)
}

// pageSlot is one segment's hold on a slot for the page it is reading.
type pageSlot struct {
	slots pageSlots
	held  bool
}

// acquire takes a slot (once: a retried attempt of the same page keeps it).
func (s *pageSlot) acquire(ctx context.Context) error {
	if s.slots == nil || s.held {
		return nil
	}
	select {
	case s.slots <- struct{}{}:
		s.held = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives the slot back (nothing when none is held).
func (s *pageSlot) release() {
	if s.held {
		<-s.slots
		s.held = false
	}
}

// option makes a Scan call take s's slot when its response arrives, before
// the response is decoded: a middleware innermost in the Deserialize step,
// so it runs after the HTTP round trip and before the operation's
// deserializer reads the body. An attempt that fails (a throttled page the
// SDK retries after a backoff) gives the slot back at once, from a second
// middleware outermost in the step. Clients that are not the SDK's (fakes
// in tests) ignore it.
func (s *pageSlot) option() func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			err := st.Deserialize.Add(middleware.DeserializeMiddlewareFunc("dynopsDiffPageSlotRelease",
				func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
					out, md, err := next.HandleDeserialize(ctx, in)
					if err != nil {
						s.release()
					}
					return out, md, err
				}), middleware.Before)
			if err != nil {
				return err
			}
			return st.Deserialize.Add(middleware.DeserializeMiddlewareFunc("dynopsDiffPageSlot",
				func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
					out, md, err := next.HandleDeserialize(ctx, in)
					if err != nil {
						return out, md, err
					}
					if err := s.acquire(ctx); err != nil {
						if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && resp.Body != nil {
							resp.Body.Close()
						}
						return out, md, fmt.Errorf("waiting to decode a Scan page: %w", err)
					}
					return out, md, nil
				}), middleware.After)
		})
	}
}
