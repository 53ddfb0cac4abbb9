package dlq

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/harness"
	"github.com/dynops/dynops/test/helpers/lambdaendpoint"
)

const (
	interruptMessages    = 40
	interruptConcurrency = 4
	interruptAfter       = 10 // invocations before the signal
)

// redriveProcess is `dynops dlq redrive --yes` as a process of its own.
// The Lambda endpoint is given by --lambda-endpoint-url, or with lambdaEnv by
// AWS_ENDPOINT_URL_LAMBDA (which the SDK honours over --endpoint-url).
func (d *drill) redriveProcess(lambdaEnv bool) *harness.Proc {
	args := []string{"dlq", "redrive", "--queue", d.dlq, "--yes", "--concurrency", "4", "--visibility-timeout", "10s", "-o", "json"}
	var env []string
	if lambdaEnv {
		env = append(env, "AWS_ENDPOINT_URL_LAMBDA="+d.endpoint.URL)
	} else {
		args = append(args, "--lambda-endpoint-url", d.endpoint.URL)
	}
	return target.Command(d.t, args, harness.AuditLog(d.auditLog), harness.Env(env...))
}

// redriveToEnd runs redriveProcess to its end: stdout, and an error naming
// the exit code and stderr unless it exited 0.
func (d *drill) redriveToEnd(lambdaEnv bool) (string, error) {
	out, errOut, code := d.redriveProcess(lambdaEnv).Run()
	if code != 0 {
		return out, fmt.Errorf("exit %d: %s", code, errOut)
	}
	return out, nil
}

// interruptDrill fills the DLQ with one message per record and starts a
// redrive that gets sig after interruptAfter invocations.
func interruptDrill(t *testing.T, sig syscall.Signal) (d *drill, all []string, firstRun map[string]int) {
	d = newDrill(t)
	for i := range interruptMessages {
		d.put(orderID(i), i, false)
	}
	recs := d.records()
	require.Len(t, recs, interruptMessages)
	for i := range recs {
		d.fail(recs[i:i+1], nil)
	}
	all = ids(recs)
	d.endpoint.SetDelay(150 * time.Millisecond) // the function's own duration

	p := d.redriveProcess(false)
	var once sync.Once
	signalled := make(chan struct{})
	p.Start()
	d.endpoint.OnInvoke(func(lambdaendpoint.Invocation) {
		if len(d.endpoint.Invocations()) >= interruptAfter {
			once.Do(func() { _ = p.Signal(sig); close(signalled) })
		}
	})
	code := p.Wait()
	<-signalled
	d.endpoint.OnInvoke(nil)
	t.Logf("first run ended by %s: exit %d", sig, code)

	firstRun = invokedIDs(d)
	return d, all, firstRun
}

func invokedIDs(d *drill) map[string]int {
	n := map[string]int{}
	for _, ev := range d.invokedEvents(consumerFn) {
		for _, r := range ev["Records"].([]any) {
			n[r.(map[string]any)["eventID"].(string)]++
		}
	}
	return n
}

// TestRedriveKilledMidRun: SIGKILL mid-run, then re-run. No message is lost:
// every record ends processed and the DLQ empty; a message is replayed twice
// only if the kill fell between its invocation and its delete (at most the
// messages in flight).
func TestRedriveKilledMidRun(t *testing.T) {
	t.Parallel()
	d, all, _ := interruptDrill(t, syscall.SIGKILL)

	// The killed run's messages in flight come back when their visibility timeout ends.
	deadline := time.Now().Add(40 * time.Second)
	visible, inFlight := d.depth(d.dlq)
	for inFlight > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Second)
		visible, inFlight = d.depth(d.dlq)
	}
	require.Zero(t, inFlight, "messages hidden by the killed run are visible again")
	// Invocations the killed process started ran to their end (as on Lambda,
	// where the function goes on when its caller is gone): count them now.
	first := invokedIDs(d)
	require.Less(t, len(first), interruptMessages, "the kill came mid-run")
	deletedFirst := interruptMessages - visible
	assert.LessOrEqual(t, deletedFirst, len(first), "nothing was deleted that was not replayed")

	out, err := d.redriveToEnd(false)
	require.NoError(t, err, "the re-run: %s", out)

	all2 := invokedIDs(d)
	twice, lost := 0, 0
	for _, id := range all {
		if all2[id] == 0 {
			lost++
		}
		assert.GreaterOrEqual(t, all2[id], 1, "record %s was replayed", id)
		if all2[id] > 1 {
			twice++
			assert.Equal(t, 1, first[id], "a record replayed twice was in flight at the kill")
		}
	}
	assert.LessOrEqual(t, twice, interruptConcurrency, "only messages in flight at the kill are replayed twice")
	assert.Len(t, d.processedIDs(), interruptMessages, "every record processed, once (idempotent consumer)")
	visible, inFlight = d.depth(d.dlq)
	assert.Zero(t, visible+inFlight, "the DLQ is empty")
	assert.Zero(t, lost, "records never replayed")
	t.Logf("SIGKILL after %d invocations: first run replayed %d and deleted %d; re-run replayed %d; replayed twice: %d; lost: %d",
		interruptAfter, len(first), deletedFirst, len(all2)-len(first)+twice, twice, lost)
}

// TestRedriveInterruptedMidRun: SIGINT (Ctrl-C) mid-run: the messages in
// flight finish, the rest are visible again at once; a re-run replays every
// remaining message: each record is replayed exactly once.
func TestRedriveInterruptedMidRun(t *testing.T) {
	t.Parallel()
	d, all, first := interruptDrill(t, syscall.SIGINT)
	require.Less(t, len(first), interruptMessages, "the interrupt came mid-run")
	visible, inFlight := d.depth(d.dlq)
	assert.Zero(t, inFlight, "Ctrl-C left nothing hidden")
	assert.Equal(t, interruptMessages-len(first), visible, "every replayed message was deleted, every other one kept")

	out, err := d.redriveToEnd(true)
	require.NoError(t, err, "the re-run, with AWS_ENDPOINT_URL_LAMBDA: %s", out)
	got := invokedIDs(d)
	twice, lost := 0, 0
	for _, id := range all {
		assert.Equal(t, 1, got[id], "record %s replayed exactly once", id)
		switch {
		case got[id] == 0:
			lost++
		case got[id] > 1:
			twice++
		}
	}
	assert.Len(t, d.processedIDs(), interruptMessages)
	visible, inFlight = d.depth(d.dlq)
	assert.Zero(t, visible+inFlight, "the DLQ is empty")
	t.Logf("SIGINT after %d invocations: first run replayed and deleted %d, re-run %d; replayed twice: %d; lost: %d",
		interruptAfter, len(first), interruptMessages-len(first), twice, lost)
}
