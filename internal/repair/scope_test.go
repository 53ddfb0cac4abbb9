package repair

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestScopeWindowBoundsAtTheSecond: stream times are rounded down to the
// second, so a write in the window's last second counts as after it too (a
// conflict, left alone: never overwritten on a guess); a write in the
// second the window starts counts in it; earlier writes are in the restored
// table already; a key never written in the window is out of scope.
func TestScopeWindowBoundsAtTheSecond(t *testing.T) {
	since := time.Date(2026, 11, 21, 9, 29, 0, 500e6, time.UTC)
	until := time.Date(2026, 11, 21, 9, 41, 10, 300e6, time.UTC)
	s, err := NewScope(since, until, "test", true)
	assert.NoError(t, err)
	at := func(key string, sec int) {
		s.Add([]byte(key), time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC).Add(time.Duration(sec)*time.Second))
	}
	at("before", 29*60-1)       // 09:28:59
	at("first-second", 29*60)   // 09:29:00, the window's first second
	at("inside", 35*60)         // 09:35:00
	at("last-second", 41*60+10) // 09:41:10, the window's last second
	at("inside-then-later", 30*60)
	at("inside-then-later", 50*60)
	at("later-only", 50*60)
	for key, want := range map[string]Verdict{
		"before": OutOfScope, "first-second": InScope, "inside": InScope, "last-second": AfterWindow,
		"inside-then-later": AfterWindow, "later-only": OutOfScope, "never": OutOfScope,
	} {
		assert.Equal(t, want, s.Of([]byte(key)), key)
	}
	assert.Equal(t, 4, s.Damaged)

	_, err = NewScope(until, since, "test", true)
	assert.ErrorIs(t, err, ErrScope, "a window that ends before it starts")
	_, err = NewScope(since, time.Time{}, "test", true)
	assert.ErrorIs(t, err, ErrScope, "a window without an end")
}

// TestPlanCheckScoped: a plan that copies back keys without a scope is
// refused unless --unscoped decides it; a scoped plan, or one with nothing
// to copy, is not.
func TestPlanCheckScoped(t *testing.T) {
	p := &Plan{Missing: 3, Changed: 5, Copy: 8, MayBeGoodWrites: 8}
	err := p.CheckScoped()
	assert.ErrorIs(t, err, ErrUnscoped)
	assert.ErrorContains(t, err, "5 changed and 3 missing item(s)")
	p.Unscoped = "INC-1: all damage"
	assert.NoError(t, p.CheckScoped())
	assert.NoError(t, (&Plan{Copy: 8, Scope: &Scope{}}).CheckScoped())
	assert.NoError(t, (&Plan{Extra: 4}).CheckScoped())
}
