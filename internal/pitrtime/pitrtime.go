// Package pitrtime prints and compares points in time of a PITR restorable
// window the one way dynops does it: UTC at millisecond precision, so a bound
// copied from `dynops pitr status` (EARLIEST or LATEST) is accepted as is.
package pitrtime

import "time"

// Layout is RFC 3339 with milliseconds, e.g. 2026-11-21T09:30:00.123Z.
const Layout = "2006-01-02T15:04:05.000Z07:00"

// Format prints t in UTC with milliseconds.
func Format(t time.Time) string { return t.UTC().Format(Layout) }

// Resolve places t in the window [earliest, latest] at the precision dynops
// prints: a t that lies outside by less than a millisecond (a bound copied
// from the printed window, whose sub-millisecond digits were cut) becomes
// that bound. ok is false when t lies outside the window.
func Resolve(t, earliest, latest time.Time) (resolved time.Time, ok bool) {
	switch {
	case t.Before(earliest):
		if earliest.Sub(t) < time.Millisecond && t.Truncate(time.Millisecond).Equal(earliest.Truncate(time.Millisecond)) {
			return earliest, true
		}
		return t, false
	case t.After(latest):
		if t.Sub(latest) < time.Millisecond && t.Truncate(time.Millisecond).Equal(latest.Truncate(time.Millisecond)) {
			return latest, true
		}
		return t, false
	}
	return t, true
}
