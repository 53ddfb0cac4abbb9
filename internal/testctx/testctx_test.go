package testctx

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBoundedHasADeadline(t *testing.T) {
	ctx := Bounded(t)
	dl, ok := ctx.Deadline()
	if !ok {
		t.Fatal("Bounded: no deadline")
	}
	if left := time.Until(dl); left <= 0 || left > Limit {
		t.Errorf("Bounded: deadline in %s, want within (0, %s]", left, Limit)
	}
}

func TestBoundedEndsWithItsTest(t *testing.T) {
	var ctx context.Context
	t.Run("inner", func(t *testing.T) { ctx = Bounded(t) })
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("after its test ended the context's error is %v, want context.Canceled", ctx.Err())
	}
}
