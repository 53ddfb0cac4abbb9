package chaos

import (
	"fmt"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/test/helpers/faults"
)

// tcpFamilies run through the TCP layer (toxiproxy) as well.
var tcpFamilies = map[string]bool{"table diff": true, "pitr repair --unconditional": true, "pitr repair (conditional)": true, "dlq move (receive/send/delete)": true}

// TestCommandsUnderTCPFaults runs table diff, pitr repair (both modes) and
// dlq move through toxiproxy (faults.StartTCP) in front of the emulator:
// 10 % and 30 % of the connections reset, silenced and closed, slowed,
// throttled or sliced. Each ends with the fault-free run's result, or stops
// with a message and converges on a re-run. make test runs seed 1 at
// 30 %, make chaos seeds 1-5 at each rate; a seed fixes which toxic each
// connection gets, in the order the connections open (faults.TCPConfig).
func TestCommandsUnderTCPFaults(t *testing.T) {
	if !target.OnEmulator() {
		t.Skip("the TCP fault proxy sits in front of the emulator")
	}
	cfg := target.AWSConfig(t)
	e := &env{db: dynamodb.NewFromConfig(cfg), s3: awsclients.New(cfg).S3(), sqs: sqs.NewFromConfig(cfg)}
	rates := []float64{0.3}
	if os.Getenv("DYNOPS_CHAOS") == "full" {
		rates = []float64{0.1, 0.3}
	}
	for _, sc := range scenarios {
		if !tcpFamilies[sc.family] {
			continue
		}
		t.Run(sc.family, func(t *testing.T) {
			want, _, errOut, code := runCell(t, e, sc, target.Emulator.URL)
			require.Equal(t, 0, code, "the fault-free run: %s", errOut)
			for _, rate := range rates {
				for _, seed := range seeds() {
					name := fmt.Sprintf("tcp %.0f%%/seed%d", rate*100, seed)
					t.Run(name, func(t *testing.T) {
						p, err := faults.StartTCP(target.Emulator.URL, faults.TCPConfig{Rate: rate, Seed: seed})
						require.NoError(t, err)
						defer p.Close()
						got, outcome, _, _ := runCell(t, e, sc, p.URL)
						ok := got == want
						if !ok {
							outcome = "DIFFERENT: " + got + " (want " + want + ")"
						}
						counts, total := p.Counts()
						t.Logf("%s: %s (connections %d, toxics %v)", name, got, total, counts)
						record(sc.family, name, fmt.Sprintf("%s (toxiproxy: %d of %d connections %v)", outcome, sum(counts), total, counts), ok)
						require.Equal(t, want, got, "the same final state as without faults")
					})
				}
			}
		})
	}
	report(t)
}
