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
	assert.Equal(t, "prod-hoge-session", got.Switch.Confirm)

	req := got.Switch.Request("failover", got.Target.Target(), &got.Target, true)
	assert.Equal(t, "/dynops/dr/prod-hoge-session/active-region", req.Target.Pointer, "the pointer modules/dr creates")
	assert.False(t, req.Rules.FromGiven)
	assert.True(t, req.Rules.Force)
}
