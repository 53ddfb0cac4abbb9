package pitrtime

import (
	"testing"
	"time"
)

func TestResolve(t *testing.T) {
	earliest := time.Date(2026, 11, 1, 10, 0, 0, 123_456_789, time.UTC) // sub-millisecond digits, as a service may keep
	latest := time.Date(2026, 11, 21, 21, 40, 5, 987_654_321, time.UTC)
	parse := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		in     string
		want   time.Time
		wantOK bool
	}{
		{Format(earliest), earliest, true},                        // EARLIEST copied from pitr status
		{Format(latest), latest.Truncate(time.Millisecond), true}, // LATEST copied: .987 < .987654321, inside
		{"2026-11-01T10:00:00.124Z", parse("2026-11-01T10:00:00.124Z"), true},
		{"2026-11-01T10:00:00.122Z", parse("2026-11-01T10:00:00.122Z"), false}, // a millisecond early
		{"2026-11-01T10:00:00Z", parse("2026-11-01T10:00:00Z"), false},         // printed to the second: outside
		{"2026-11-21T21:40:05.988Z", parse("2026-11-21T21:40:05.988Z"), false},
		{"2026-11-21T21:40:05.987999Z", latest, true}, // sub-ms past latest, same millisecond
		{"2026-11-10T00:00:00Z", parse("2026-11-10T00:00:00Z"), true},
		{"2026-10-01T00:00:00Z", parse("2026-10-01T00:00:00Z"), false},
		{"2026-12-01T00:00:00+09:00", parse("2026-12-01T00:00:00+09:00"), false},
		{"2026-11-02T09:00:00+09:00", parse("2026-11-02T09:00:00+09:00"), true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := Resolve(parse(tc.in), earliest, latest)
			if ok != tc.wantOK || !got.Equal(tc.want) {
				t.Errorf("Resolve(%s) = %s, %v; want %s, %v", tc.in, Format(got), ok, Format(tc.want), tc.wantOK)
			}
		})
	}
	if got := Format(time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("JST", 9*3600))); got != "2026-01-01T18:04:05.006Z" {
		t.Errorf("Format = %s", got)
	}
}
