package runbook

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/faults"
)

// killAtRequest runs the built binary through a proxy in front of the
// emulator (test/helpers/faults, cfg's faults included) and SIGKILLs it at
// the first request at says is the one: that request is held in the proxy
// until the process is dead, then forwarded (so pick a read, or a change
// whose landing the journey expects). at sees each request's operation
// (faults.Operation), in order; what names the moment for the failure
// message. env, when set, is added to the process's environment.
func killAtRequest(t *testing.T, log, what string, cfg faults.Config, at func(op string) bool, env []string, args ...string) {
	t.Helper()
	if !target.OnEmulator() {
		t.Skip("emulator only: the kill point is a request held in a proxy in front of the emulator")
	}
	hit, dead := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	matched := false
	cfg.Observe = func(_ int, op string) {
		mu.Lock()
		first := !matched && at(op)
		matched = matched || first
		mu.Unlock()
		if first {
			close(hit)
			<-dead
		}
	}
	p, err := faults.Start(target.Emulator.URL, cfg)
	require.NoError(t, err)
	defer func() { _ = p.Close() }()
	cmd := commandAt(t, log, p.URL, args...)
	if env != nil {
		cmd.Env = append(cmd.Env, env...)
	}
	defer close(dead)
	killWhen(t, cmd, what, func() bool {
		select {
		case <-hit:
			return true
		default:
			return false
		}
	})
}
