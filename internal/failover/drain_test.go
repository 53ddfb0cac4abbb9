package failover

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// threeRegions is a global table in three regions, eu-west-1 active, each
// region reporting latency ms[i][j] from region i into region j.
func threeRegions(latency map[string]map[string]time.Duration) State {
	all := []string{"eu-west-1", "eu-central-1", "eu-north-1"}
	s := State{Target: Target{Table: "prod-hoge-session", Regions: all, Pointer: DefaultPointer("prod-hoge-session")}, Active: "eu-west-1"}
	for _, r := range all {
		rs := RegionState{Region: r, Answers: true, TableExists: true, TableStatus: "ACTIVE", Pointer: "eu-west-1", Replicas: map[string]string{}}
		for _, o := range all {
			if o == r {
				continue
			}
			rs.Replicas[o] = "ACTIVE"
			l := Latency{Receiving: o, Max: latency[r][o], Datapoints: 5}
			if latency[r][o] < 0 {
				l = Latency{Receiving: o}
			}
			rs.Latency = append(rs.Latency, l)
		}
		s.Regions = append(s.Regions, rs)
	}
	return s
}

func drainRules(to string) Rules {
	r := rules()
	r.To, r.Drain = to, DefaultDrainRules()
	return r
}

// TestPlanDrain: the drain of a switch (a decision on the state dynops
// read: no emulator needed) is multiplier x the largest latency from any
// other region into the target, within floor and cap; the rules for no
// datapoints, an unhealthy source and stand-ins; and --drain overrides.
func TestPlanDrain(t *testing.T) {
	const to = "eu-central-1"
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	lat := func(west, north time.Duration) map[string]map[string]time.Duration {
		return map[string]map[string]time.Duration{"eu-west-1": {to: west, "eu-north-1": ms(100)}, "eu-north-1": {to: north, "eu-west-1": ms(100)}, to: {"eu-west-1": ms(100), "eu-north-1": ms(100)}}
	}
	d := func(x time.Duration) *time.Duration { return &x }
	cases := []struct {
		name   string
		s      func() State
		rules  func(Rules) Rules
		wait   time.Duration
		rule   string
		status CheckStatus
		detail []string
	}{
		{"10 x the largest source, three regions", func() State { return threeRegions(lat(8*time.Second, 11*time.Second)) }, nil,
			110 * time.Second, DrainByMetric, CheckOK, []string{"10 x max ReplicationLatency 11s = 1m50s", "eu-west-1 -> eu-central-1 max 8s (5 datapoints)", "eu-north-1 -> eu-central-1 max 11s"}},
		{"the floor", func() State { return threeRegions(lat(ms(900), ms(400))) }, nil, time.Minute, DrainByMetric, CheckOK, []string{"= 9s, within floor 1m0s"}},
		{"the cap", func() State { return threeRegions(lat(2*time.Minute, 0)) }, nil, 10 * time.Minute, DrainByMetric, CheckOK, []string{"= 20m0s, within floor 1m0s and cap 10m0s"}},
		{"multiplier 3", func() State { return threeRegions(lat(30*time.Second, 0)) }, func(r Rules) Rules { r.Drain.Multiplier = 3; return r }, 90 * time.Second, DrainByMetric, CheckOK, nil},
		{"no datapoints from one source: the cap", func() State { return threeRegions(lat(time.Second, -1)) }, nil,
			10 * time.Minute, DrainNoData, CheckOK, []string{"no ReplicationLatency from eu-north-1 into eu-central-1 in the last 15m0s", "--drain-cap 10m0s"}},
		{"a source that does not answer: unhealthy", func() State {
			s := threeRegions(lat(time.Second, time.Second))
			s.Regions[2] = RegionState{Region: "eu-north-1", Error: "DynamoDB in eu-north-1 does not answer"}
			return s
		}, nil, 30 * time.Minute, DrainUnhealthy, CheckOK, []string{"unhealthy-region rule", "eu-north-1 does not answer"}},
		{"CloudWatch does not answer: unhealthy", func() State {
			s := threeRegions(lat(time.Second, time.Second))
			s.Regions[0].Latency[0] = Latency{Receiving: to, Error: "reading ReplicationLatency into eu-central-1: timeout"}
			return s
		}, nil, 30 * time.Minute, DrainUnhealthy, CheckOK, []string{"timeout"}},
		{"stand-ins: nothing replicates", func() State {
			s := threeRegions(lat(time.Second, time.Second))
			for i := range s.Regions {
				s.Regions[i].Replicas = nil
			}
			return s
		}, func(r Rules) Rules { r.AllowUnreplicated = true; return r }, 0, DrainNothing, CheckOK, []string{"not a replica"}},
		{"--drain longer than computed", func() State { return threeRegions(lat(time.Second, time.Second)) }, func(r Rules) Rules { r.Drain.Override = d(5 * time.Minute); return r },
			5 * time.Minute, DrainOverride, CheckOK, []string{"wait 5m0s (--drain; the rules give 1m0s"}},
		{"--drain shorter without --force: refused", func() State { return threeRegions(lat(10*time.Second, time.Second)) }, func(r Rules) Rules { r.Drain.Override = d(time.Minute); r.Drain.Reason = "hurry"; return r },
			100 * time.Second, DrainByMetric, CheckFail, []string{"--drain 1m0s is shorter than the drain the rules give (1m40s", "--force and --reason"}},
		{"--drain shorter with --force, no reason: refused", func() State { return threeRegions(lat(10*time.Second, time.Second)) }, func(r Rules) Rules { r.Drain.Override = d(0); r.Force = true; return r },
			100 * time.Second, DrainByMetric, CheckFail, []string{"--drain 0s is shorter"}},
		{"--drain 0s with --force and --reason: a warning", func() State { return threeRegions(lat(10*time.Second, time.Second)) }, func(r Rules) Rules {
			r.Drain.Override, r.Force, r.Drain.Reason = d(0), true, "incident 42"
			return r
		}, 0, DrainOverridden, CheckWarn, []string{`reason "incident 42"`, "instead of 1m40s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := drainRules(to)
			if c.rules != nil {
				r = c.rules(r)
			}
			p, check := PlanDrain(c.s(), r)
			assert.Equal(t, c.status, check.Status, check.Detail)
			if c.status != CheckFail {
				assert.Equal(t, c.wait, p.Wait)
				assert.Equal(t, c.rule, p.Rule)
			} else {
				assert.Equal(t, c.wait, p.Computed)
			}
			assert.Equal(t, "drain", check.Name)
			for _, w := range c.detail {
				assert.Contains(t, check.Detail, w)
			}
			for _, src := range p.Sources {
				assert.NotEqual(t, to, src.From, "the target is no source")
			}
		})
	}
}
