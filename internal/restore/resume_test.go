package restore

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/dynops/dynops/internal/tablesettings"
)

// TestTakeOverDecision: which existing target a run may take over, with
// and without --resume. Only a restore of the plan's source, to the asked
// time (any time for --latest), is taken; finished only when --resume (read
// back, nothing changed). Everything else is refused naming the target,
// what was found and the fix.
func TestTakeOverDecision(t *testing.T) {
	src := "arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user"
	asked := time.Date(2026, 11, 21, 9, 29, 0, 250e6, time.UTC)
	other := asked.Add(time.Millisecond)
	at := func(t time.Time) *time.Time { return &t }
	plan := func(latest bool) *Plan {
		return &Plan{Source: "prod-hoge-user", SourceArn: src, Target: "prod-hoge-user-r", Latest: latest, RestoreTime: asked}
	}
	half := Existing{Table: "prod-hoge-user-r", RestoredFrom: src, RestoreTime: at(asked)}
	done := half
	done.Marker = "prod-hoge-user"
	cases := []struct {
		name   string
		p      *Plan
		e      Existing
		resume bool
		ok     bool
		msg    []string
	}{
		{"half-done, --resume", plan(false), half, true, true, nil},
		{"half-done, --latest --resume, another time", plan(true), Existing{RestoredFrom: src, RestoreTime: at(other)}, true, true, nil},
		{"half-done, --latest --resume, no time", plan(true), Existing{RestoredFrom: src}, true, true, nil},
		{"finished, --resume: read back", plan(false), done, true, true, nil},
		{"half-done without --resume", plan(false), half, false, false, []string{"prod-hoge-user-r", "unfinished", "re-run with --resume"}},
		{"finished without --resume", plan(false), done, false, false, []string{"already done", "finished"}},
		{"not a restore", plan(false), Existing{Table: "prod-hoge-user-r"}, true, false, []string{"not a point-in-time restore", "only a restore of prod-hoge-user can be resumed", "pass another --target or delete it first"}},
		{"a restore of another table", plan(false), Existing{RestoredFrom: src + "-old", RestoreTime: at(asked)}, true, false, []string{"restored from " + src + "-old", "not from prod-hoge-user"}},
		{"a restore of another table, --latest", plan(true), Existing{RestoredFrom: "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-x"}, true, false, []string{"not from prod-hoge-user"}},
		{"another time by a millisecond", plan(false), Existing{RestoredFrom: src, RestoreTime: at(other)}, true, false, []string{"restored to 2026-11-21T09:29:00.251Z", "asks for 2026-11-21T09:29:00.250Z", "--time 2026-11-21T09:29:00.251Z"}},
		{"no restore time, a specific time asked", plan(false), Existing{RestoredFrom: src}, true, false, []string{"no restore time"}},
		{"finished, its tag names another source", plan(false), Existing{RestoredFrom: src, RestoreTime: at(asked), Marker: "prod-other"}, true, false, []string{"tag says prod-other"}},
		{"plan without the source ARN", &Plan{Source: "x", Target: "y", Latest: true}, half, true, false, []string{"not from x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.p.takeOver(c.e, c.resume)
			if c.ok {
				assert.NoError(t, err)
				return
			}
			assert.True(t, errors.Is(err, ErrTargetExists), "%v", err)
			assert.ErrorContains(t, err, c.p.Target)
			for _, m := range c.msg {
				assert.ErrorContains(t, err, m)
			}
		})
	}
}

// TestOwnRestoreDecision: the in-run takeover after a lost answer needs
// the plan's source, a creation since the run began and no marker.
func TestOwnRestoreDecision(t *testing.T) {
	src := "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-a"
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	at := func(t time.Time) *time.Time { return &t }
	p := &Plan{Source: "dev-a", SourceArn: src, Target: "dev-a-r"}
	cases := map[string]struct {
		e   Existing
		why string
	}{
		"ours":                      {Existing{RestoredFrom: src, Created: at(start.Add(time.Second))}, ""},
		"ours, clock skew":          {Existing{RestoredFrom: src, Created: at(start.Add(-30 * time.Second))}, ""},
		"created before the run":    {Existing{RestoredFrom: src, Created: at(start.Add(-2 * time.Minute))}, "created before this run began"},
		"no creation time":          {Existing{RestoredFrom: src}, "created before this run began"},
		"another source":            {Existing{RestoredFrom: src + "x", Created: at(start)}, "not from dev-a"},
		"not a restore":             {Existing{Created: at(start)}, "not a point-in-time restore"},
		"finished (tagged) already": {Existing{RestoredFrom: src, Created: at(start), Marker: "dev-a"}, "finished"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := ownRestore(p, c.e, start)
			if c.why == "" {
				assert.Empty(t, got)
			} else {
				assert.Contains(t, got, c.why)
			}
		})
	}
}

// The marker is the last step, after deletion protection, and only when missing.
func TestStepsWriteTheMarkerLast(t *testing.T) {
	want := settingsWith(map[string]string{"owner": "a", TagRestoredFrom: "src", TagRestoredToTime: "t"})
	cs := steps(settingsWith(nil), want)
	whats := []string{}
	for _, c := range cs {
		whats = append(whats, c.What)
	}
	assert.Equal(t, []string{"pitr", "tags", "deletion-protection", TagRestoredFrom}, whats)
	assert.NotContains(t, cs[1].Detail, TagRestoredFrom+"=")
	have := want
	assert.Empty(t, steps(have, want), "a finished restore needs nothing")
	have.Tags = copyTags(want.Tags)
	delete(have.Tags, TagRestoredFrom)
	assert.Len(t, steps(have, want), 1, "only the marker")
}

func settingsWith(tags map[string]string) tablesettings.Settings {
	if tags == nil {
		return tablesettings.Settings{Tags: map[string]string{}}
	}
	return tablesettings.Settings{PITR: true, DeletionProtection: true, Tags: tags}
}

// TestExistingSaysWhatItIs: a refusal names what was found at the target:
// not a restore; a restore of which table, to which time when known, and
// whether it is finished (the marker) or not.
func TestExistingSaysWhatItIs(t *testing.T) {
	src := "arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user"
	at := time.Date(2026, 11, 21, 9, 29, 0, 250e6, time.UTC)
	cases := []struct {
		e    Existing
		want string
	}{
		{Existing{Table: "x"}, "a table that is not a point-in-time restore (no RestoreSummary with a source table)"},
		{Existing{RestoredFrom: src}, "a restore of " + src + ", unfinished (no restored-from tag: its settings were not all re-applied)"},
		{Existing{RestoredFrom: src, RestoreTime: &at}, "a restore of " + src + " to 2026-11-21T09:29:00.250Z, unfinished (no restored-from tag: its settings were not all re-applied)"},
		{Existing{RestoredFrom: src, RestoreTime: &at, Marker: "prod-hoge-user"}, "a restore of " + src + " to 2026-11-21T09:29:00.250Z, finished (restored-from tag prod-hoge-user)"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.e.String())
	}
}
