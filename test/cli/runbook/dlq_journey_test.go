package runbook

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/test/helpers/fixture"
	"github.com/dynops/dynops/test/helpers/harness"
)

// heldConsumer lets the first `free` invocations through and holds every
// later one until released: the redrive step is then mid-way for as long
// as the test needs.
type heldConsumer struct {
	mu      sync.Mutex
	calls   int
	free    int
	arrived chan struct{} // closed when the first held invocation arrives
	release chan struct{}
	once    sync.Once
}

func (h *heldConsumer) wrap(next lambda.Handler) lambda.Handler {
	return heldHandler{h: h, next: next}
}

type heldHandler struct {
	h    *heldConsumer
	next lambda.Handler
}

func (hh heldHandler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	h := hh.h
	h.mu.Lock()
	h.calls++
	held := h.calls > h.free
	h.mu.Unlock()
	if held {
		h.once.Do(func() { close(h.arrived) })
		<-h.release
	}
	return hh.next.Invoke(ctx, payload)
}

// TestRunbookDLQRedriveJourney_DDB_STREAM_05 is the dlq-redrive journey the
// way an incident goes (issue 43): the application keeps writing to the
// protected order table throughout; the runbook runs in the built binary
// without a terminal (the queue and the function confirmed by name) and is
// SIGKILLed in its redrive step while the consumer holds a replayed batch,
// then resumed with the same incident. The resumed run exits 0: every
// failed record is processed (the consumer is idempotent: a batch the
// killed run replayed and could not delete is replayed again, not lost),
// the DLQ is empty (the verify step), every writer item is in the table,
// and the timeline lists each step once, the redrive interrupted.
func TestRunbookDLQRedriveJourney_DDB_STREAM_05(t *testing.T) {
	harness.Long(t, "the dlq-redrive journey waits out a killed run's 10 s visibility timeout (about 40 s); TestRunbookExportAndCrossRegionRestoreJourney_DDB_DR_01 and the pitr journey run in make test")
	held := &heldConsumer{free: 1, arrived: make(chan struct{}), release: make(chan struct{})} // the sample step's one batch goes through
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(held.release) }) }
	t.Cleanup(release)
	db, dlq, fn, processed, table := dlqFixtureWrapped(t, held.wrap)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	incident := "INC-" + harness.UniqueID()
	name := dlq[strings.LastIndex(dlq, "/")+1:]
	w := startWriterKeyed(t, db, table, "order_id", 4000)
	args := []string{"runbook", "run", "dlq-redrive", "--incident", incident, "--yes", "--confirm", name + "," + fn,
		"--param", "queue=" + dlq, "--param", "function=" + fn, "--param", "visibility=--visibility-timeout 10s"}

	// 1. In the built binary; killed while the redrive step's first batch
	// is held by the consumer.
	killWhen(t, command(t, log, args...), "its redrive step invoked the consumer", func() bool {
		select {
		case <-held.arrived:
			return true
		default:
			return false
		}
	})
	require.NotNil(t, stepStarted(t, log, incident, "redrive"), "the held invocation is the redrive step's")
	release() // the held batch is processed after all: its answer is lost with the killed run
	t.Logf("killed in the redrive step; %d record(s) processed so far", count(t, db, processed))

	// 2. Resume: the same command, the same incident.
	_, errOut, code := target.Dynops(t, log, args...)
	require.Equal(t, 0, code, errOut)
	for _, s := range []string{"inspect", "sample"} {
		assert.Contains(t, errOut, s+": done earlier, skipped")
	}
	written := w.halt()
	require.NotEmpty(t, written, "the writer wrote through the journey")
	require.Zero(t, w.errs, "the table took every write")

	// 3. Nothing lost, nothing twice: the 4 failed records processed once
	// each (keyed by event), the writer's items all there.
	assert.Equal(t, 4, count(t, db, processed), "every failed record is processed (read back)")
	for _, id := range written {
		assert.NotNil(t, fixture.Get(t, db, table, map[string]types.AttributeValue{"order_id": &types.AttributeValueMemberS{Value: id}}), "writer item %s", id)
	}

	// 4. The timeline: each step once, the redrive interrupted.
	md, _, code := target.Dynops(t, log, "audit", "timeline", "--incident", incident, "--format", "markdown")
	require.Equal(t, 0, code)
	lines := stepsSection(md)
	require.Len(t, lines, 4, md)
	for i, s := range []string{"inspect", "sample", "redrive", "verify"} {
		assert.True(t, strings.HasPrefix(lines[i], "- dlq-redrive / "+s+": ok"), "step line %q", lines[i])
		assert.Equal(t, s == "redrive", strings.Contains(lines[i], "INTERRUPTED 1 time(s)"), lines[i])
	}
}
