package failover

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/iostreams"
)

func TestFlags(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var got *Options
	cmd := NewCmdFailover(factory.New(ios), func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--table", "prod-hoge-session", "--to", "eu-central-1", "--regions", "eu-west-1,eu-central-1",
		"--health-check", "eu-west-1=hc-1", "--health-check", "eu-central-1=hc-2", "--break-glass-role-arn", "arn:aws:iam::111122223333:role/bg",
		"--max-replication-latency", "10s", "--force", "--yes", "--confirm", "prod-hoge-session"})
	require.NoError(t, cmd.Execute())
	require.NotNil(t, got)
	assert.Equal(t, map[string]string{"eu-west-1": "hc-1", "eu-central-1": "hc-2"}, got.Target.HealthChecks)
	assert.Equal(t, 10*time.Second, got.Target.MaxLatency)
	assert.Equal(t, 15*time.Minute, got.Target.Window, "default window")
	assert.Equal(t, time.Minute, got.Switch.ReplicationTimeout, "default replication timeout")
	assert.True(t, got.Switch.Force)
	assert.Equal(t, []string{"prod-hoge-session"}, got.Switch.Confirm)

	req := got.Switch.Request("failover", got.Target.Target(), &got.Target, true)
	assert.Equal(t, "/dynops/dr/prod-hoge-session/active-region", req.Target.Pointer, "the pointer modules/dr creates")
	assert.False(t, req.Rules.FromGiven)
	assert.True(t, req.Rules.Force)
}

// TestDrainFlags: the drain flags' defaults reach the request; every bound
// is refused past its edge and accepted at it, naming the flag; --drain 0s
// needs both --force and --reason; a --drain given reaches the rules as an
// override, one not given does not.
func TestDrainFlags(t *testing.T) {
	base := []string{"--table", "prod-hoge-session", "--to", "eu-central-1", "--regions", "eu-west-1,eu-central-1"}
	run := func(args ...string) (*Options, error) {
		ios, _, _, _ := iostreams.Test()
		var got *Options
		cmd := NewCmdFailover(factory.New(ios), func(_ context.Context, o *Options) error { got = o; return nil })
		cmd.SetArgs(append(append([]string{}, base...), args...))
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		return got, cmd.Execute()
	}
	got, err := run()
	require.NoError(t, err)
	req := got.Switch.Request("failover", got.Target.Target(), &got.Target, false)
	assert.Equal(t, 10.0, req.Rules.Drain.Multiplier)
	assert.Equal(t, time.Minute, req.Rules.Drain.Floor)
	assert.Equal(t, 10*time.Minute, req.Rules.Drain.Cap)
	assert.Equal(t, 30*time.Minute, req.Rules.Drain.Unhealthy)
	assert.Nil(t, req.Rules.Drain.Override, "no --drain: the computed drain")

	for _, c := range []struct {
		args []string
		want string // "" : accepted
	}{
		{[]string{"--drain-multiplier", "1"}, ""},
		{[]string{"--drain-multiplier", "100"}, ""},
		{[]string{"--drain-multiplier", "0.99"}, "--drain-multiplier 0.99"},
		{[]string{"--drain-multiplier", "101"}, "--drain-multiplier 101"},
		{[]string{"--drain-floor", "-1s"}, "--drain-floor -1s"},
		{[]string{"--drain-floor", "0s"}, ""},
		{[]string{"--drain-cap", "59s"}, "--drain-cap 59s"},
		{[]string{"--drain-cap", "1m", "--drain-unhealthy", "1m"}, ""},
		{[]string{"--drain-cap", "3h"}, "--drain-cap 3h0m0s"},
		{[]string{"--drain-unhealthy", "9m"}, "--drain-unhealthy 9m0s"},
		{[]string{"--drain-unhealthy", "2h"}, ""},
		{[]string{"--drain-unhealthy", "2h1s"}, "--drain-unhealthy 2h0m1s"},
		{[]string{"--drain", "-1s"}, "--drain -1s"},
		{[]string{"--drain", "2h1s"}, "--drain 2h0m1s"},
		{[]string{"--drain", "0s"}, "--drain 0s skips the wait"},
		{[]string{"--drain", "0s", "--force"}, "--drain 0s skips the wait"},
		{[]string{"--drain", "0s", "--reason", "region gone"}, "--drain 0s skips the wait"},
		{[]string{"--drain", "0s", "--force", "--reason", "  "}, "--drain 0s skips the wait"},
		{[]string{"--drain", "0s", "--force", "--reason", "eu-west-1 is gone (incident 42)"}, ""},
		{[]string{"--drain", "20m"}, ""},
	} {
		got, err := run(c.args...)
		if c.want == "" {
			require.NoError(t, err, "%v", c.args)
			continue
		}
		require.Error(t, err, "%v", c.args)
		assert.Contains(t, err.Error(), c.want, "%v", c.args)
		assert.Nil(t, got, "refused before running: %v", c.args)
	}
	got, err = run("--drain", "0s", "--force", "--reason", "incident 42")
	require.NoError(t, err)
	req = got.Switch.Request("failover", got.Target.Target(), &got.Target, false)
	require.NotNil(t, req.Rules.Drain.Override)
	assert.Equal(t, time.Duration(0), *req.Rules.Drain.Override)
	assert.Equal(t, "incident 42", req.Rules.Drain.Reason)
}
