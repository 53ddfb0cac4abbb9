package failover

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHalfDone: which states `dr status` names HALF-DONE, and with which
// finishing command. Clean end states: nothing fenced and one pointer (a
// finished failback, or never switched), or one pointer and the other
// region carrying a failover's fence (a finished failover). Everything a
// switch passes through between its first change and its last is named.
func TestHalfDone(t *testing.T) {
	const a, b = "eu-west-1", "eu-central-1"
	region := func(name, pointer, sid string) RegionState {
		return RegionState{Region: name, Answers: true, TableExists: true, Pointer: pointer, Fenced: sid != "", FenceSid: sid}
	}
	state := func(rs ...RegionState) State {
		s := State{Target: Target{Table: "prod-hoge-session", Regions: []string{a, b}}, Regions: rs}
		s.Active = s.activeRegion() // as Inspect sets it
		return s
	}
	cases := []struct {
		name string
		s    State
		want []string // "" : clean
	}{
		{"never switched", state(region(a, a, ""), region(b, a, "")), nil},
		{"failover finished", state(region(a, b, FenceSid), region(b, b, "")), nil},
		{"failback finished", state(region(a, a, ""), region(b, a, "")), nil},
		{"failover between fence and flip", state(region(a, a, FenceSid), region(b, a, "")),
			[]string{"active region eu-west-1 is fenced", "a failover stopped", "dynops dr failover --table prod-hoge-session --to eu-central-1 --yes"}},
		{"failback between its fence and the unfence of the target", state(region(a, b, FenceSid), region(b, b, FailbackFenceSid)),
			[]string{"active region eu-central-1 is fenced", "a failback stopped between its fence", "dynops dr failback --table prod-hoge-session --to eu-west-1 --yes"}},
		{"failback between the unfence of the target and the flip", state(region(a, b, ""), region(b, b, FailbackFenceSid)),
			[]string{"active region eu-central-1 is fenced", "a failback stopped"}},
		{"failback after the flip, before unfence-old", state(region(a, a, ""), region(b, a, FailbackFenceSid)),
			[]string{"the pointer names eu-west-1, but eu-central-1 still carries the temporary fence of a failback", "dynops dr failback --table prod-hoge-session --to eu-west-1 --yes"}},
		{"failback flip cut short", state(region(a, a, ""), region(b, b, FailbackFenceSid)),
			[]string{"the pointers disagree"}},
		{"failover flip cut short", state(region(a, b, FenceSid), region(b, a, "")),
			[]string{"the pointers disagree"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.s.HalfDone()
			if c.want == nil {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, "HALF-DONE")
			for _, w := range c.want {
				assert.Contains(t, got, w)
			}
		})
	}
}

// TestFailbackFenceIsAFence: the failback's statement fences by content,
// is recognised as dynops's (removable, named), and replaces a failover
// fence rather than adding a second statement.
func TestFailbackFenceIsAFence(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-session"
	doc, err := withFence("", arn, "", FailbackFenceSid)
	assert.NoError(t, err)
	holds, by := FenceHolds(doc, arn, "")
	assert.True(t, holds)
	assert.Equal(t, FailbackFenceSid, by)
	assert.True(t, HasFence(doc))
	assert.Equal(t, FailbackFenceSid, FenceSidOf(doc))
	over, err := WithFence(doc, arn, "")
	assert.NoError(t, err)
	assert.Equal(t, FenceSid, FenceSidOf(over))
	assert.Equal(t, 1, len(mustParse(t, over).Statement), "one fence statement")
	none, err := WithoutFence(doc)
	assert.NoError(t, err)
	assert.Empty(t, none)
	assert.Empty(t, FenceSidOf(`{"Version":"2012-10-17","Statement":[{"Sid":"Other","Effect":"Allow"}]}`))
}

func mustParse(t *testing.T, doc string) policy {
	p, err := parsePolicy(doc)
	assert.NoError(t, err)
	return p
}
