package harness

import (
	"strings"
	"sync"
	"testing"
)

// RefusalSet is the refusal matrix of one test of a RefusalGroup: the
// test's name and its cases.
type RefusalSet struct {
	Test  string
	Cases func() []Refusal
}

// RefusalGroup runs the refusal matrices of several tests of one root in
// ONE ExpectRefusals run (one init, one set of `terraform test` processes,
// each paying the provider's schema and the module tree once), and each
// test judges its own cases as ExpectRefusals would. A package declares its
// group once (var refusals = harness.NewRefusalGroup(dir, sets...)); each
// test calls Expect. Case names are unique across the group.
type RefusalGroup struct {
	dir   string
	sets  map[string]func() []Refusal
	order []string

	once  sync.Once
	first *testing.T // the test that ran the group, for its outcome
	cases map[string][]Refusal
	run   *refusalRun
}

// NewRefusalGroup declares the refusal matrices of the tests on dir.
func NewRefusalGroup(dir string, sets ...RefusalSet) *RefusalGroup {
	g := &RefusalGroup{dir: dir, sets: map[string]func() []Refusal{}}
	for _, s := range sets {
		if _, dup := g.sets[s.Test]; dup {
			panic("harness: refusal set of " + s.Test + " declared twice")
		}
		g.sets[s.Test] = s.Cases
		g.order = append(g.order, s.Test)
	}
	return g
}

// Expect asserts the refusals of t's own cases (its set, by the test's
// name), one subtest per case, and returns the diagnostic that matched each
// case (by name). The first test to call it runs every set of the group.
func (g *RefusalGroup) Expect(t *testing.T) map[string]Diagnostic {
	t.Helper()
	name, _, _ := strings.Cut(t.Name(), "/")
	if _, ok := g.sets[name]; !ok {
		t.Fatalf("harness: no refusal set for %s in the group of %s (declared: %s)", name, g.dir, strings.Join(g.order, ", "))
	}
	g.once.Do(func() {
		g.first, g.cases = t, map[string][]Refusal{}
		var all []Refusal
		for _, test := range g.order {
			g.cases[test] = g.sets[test]()
			all = append(all, g.cases[test]...)
		}
		g.run = runRefusals(t, g.dir, all) // may skip or fail t (then g.run stays nil)
	})
	if g.run == nil {
		if g.first.Skipped() {
			t.Skipf("the refusal group of %s was skipped in %s (see its output)", g.dir, g.first.Name())
		}
		t.Fatalf("the refusal group of %s failed in %s (see its output)", g.dir, g.first.Name())
	}
	return g.run.judge(t, g.cases[name])
}
