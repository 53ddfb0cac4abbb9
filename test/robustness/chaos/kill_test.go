package chaos

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/test/helpers/faults"
	"github.com/dynops/dynops/test/helpers/harness"
)

// killSeeds: at least 20 kill points per family in make chaos, 2 in make test.
// DYNOPS_CHAOS_KILLS=N sets another count (a quick look at one family).
func killSeeds() int {
	if n, err := strconv.Atoi(os.Getenv("DYNOPS_CHAOS_KILLS")); err == nil && n > 0 {
		return n
	}
	if os.Getenv("DYNOPS_CHAOS") == "full" {
		return 20
	}
	return 2
}

// process is the built binary running args through endpoint.
func process(t *testing.T, endpoint string, args ...string) *harness.Proc {
	return target.Command(t, args, harness.Via(endpoint))
}

// runToEnd runs args through endpoint to its end: stdout, and an error
// naming the exit code and stderr unless it exited 0.
func runToEnd(t *testing.T, endpoint string, args ...string) (string, error) {
	out, errOut, code := process(t, endpoint, args...).Run()
	if code != 0 {
		return out, fmt.Errorf("exit %d: %s", code, errOut)
	}
	return out, nil
}

// combined runs args through endpoint to its end: stdout and stderr
// together, and the exit code.
func combined(t *testing.T, endpoint string, args ...string) (string, int) {
	out, errOut, code := process(t, endpoint, args...).Run()
	return out + errOut, code
}

// killedRun starts args through endpoint, for a proxy's observer to
// SIGKILL (killAt) at a request, and returns whether it ended non-zero.
func killedRun(t *testing.T, p *harness.Proc) bool {
	p.Start()
	return p.Wait() != 0
}

// killAt SIGKILLs p from a proxy's observer and waits until it is gone, so
// that no request of it follows.
func killAt(p *harness.Proc) {
	_ = p.Signal(syscall.SIGKILL)
	<-p.Done()
}

// TestKilledAndRerun: SIGKILL of the built binary at seeded random points of
// its run (each request slowed by up to 150 ms so that the run is long
// enough to be hit anywhere), then a re-run to completion: the final state
// equals the uninterrupted run's.
func TestKilledAndRerun(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("kill points are timed against the emulator")
	}
	cfg := target.AWSConfig(t)
	e := &env{db: dynamodb.NewFromConfig(cfg), s3: awsclients.New(cfg).S3(), sqs: sqs.NewFromConfig(cfg)}
	families := map[string]bool{"pitr repair --unconditional": true, "pitr repair (conditional)": true, "export import + apply": true, "dlq move (receive/send/delete)": true,
		"dlq redrive (--to-queue)": true}
	for _, sc := range scenarios {
		if !families[sc.family] {
			continue
		}
		t.Run(sc.family, func(t *testing.T) {
			slow, err := faults.Start(target.Emulator.URL, faults.Config{Rate: 1, Kinds: []faults.Kind{faults.Latency}, Seed: 7})
			require.NoError(t, err)
			defer slow.Close()
			args, state := sc.setup(t, e)
			start := time.Now()
			out, err := runToEnd(t, slow.URL, args...)
			require.NoError(t, err, "the uninterrupted run: %s", out)
			span := time.Since(start)
			want := state(string(out))
			kills := 0
			for seed := 1; seed <= killSeeds(); seed++ {
				rnd := rand.New(rand.NewPCG(uint64(seed), 42))
				at := time.Duration(rnd.Int64N(int64(span)))
				args, state := sc.setup(t, e)
				p := process(t, slow.URL, args...)
				p.Start()
				timer := time.AfterFunc(at, func() { _ = p.Signal(syscall.SIGKILL) })
				code := p.Wait()
				timer.Stop()
				killed := code != 0
				if killed {
					kills++
				}
				// No wait here for a killed dlq move's messages in flight:
				// the re-run waits for them to come back itself.
				out, err := runToEnd(t, slow.URL, args...)
				if err != nil && sc.family == "pitr repair (conditional)" {
					// A conditional put the kill cut off after it landed is a
					// conflict on the re-run (documented): a third run copies it.
					out, err = runToEnd(t, slow.URL, args...)
				}
				require.NoError(t, err, "re-run after a kill at %s: %s", at, out)
				got := state(string(out))
				require.Equal(t, want, got, "seed %d: killed at %s of %s", seed, at.Round(time.Millisecond), span.Round(time.Millisecond))
			}
			record(sc.family, fmt.Sprintf("SIGKILL x%d", killSeeds()), fmt.Sprintf("same final state after %d kills (%d landed mid-run) and re-runs", killSeeds(), kills), true)
			t.Logf("%s: %d kill points over a %s run, %d landed mid-run; every re-run converged", sc.family, killSeeds(), span.Round(time.Millisecond), kills)
		})
	}
	report(t)
}
