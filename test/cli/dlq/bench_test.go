package dlq

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/redrive"
)

const benchMessages = 120

// BenchmarkRedrive measures messages redriven per second (each: receive,
// GetShardIterator, GetRecords, a synchronous invocation of the real consumer
// handler, which writes to DynamoDB, and the delete) at concurrency 1, 4 and
// 16, with the handler alone and with 50 ms added to each invocation (a
// consumer's own work). On the emulator, moto (one Python process on shared
// cores) bounds the first; concurrency overlaps the function's time.
func BenchmarkRedrive(b *testing.B) {
	for _, fnTime := range []time.Duration{0, 50 * time.Millisecond} {
		for _, c := range []int{1, 4, 16} {
			benchmarkRedrive(b, c, fnTime)
		}
	}
}

func benchmarkRedrive(b *testing.B, c int, fnTime time.Duration) {
	b.Run(fmt.Sprintf("function=%s/concurrency=%d", fnTime, c), func(b *testing.B) {
		d := newDrill(b)
		d.endpoint.SetDelay(fnTime)
		cfg := target.AWSConfig(b)
		fn := redrive.Function{Name: consumerFn, Client: lambda.NewFromConfig(cfg, func(o *lambda.Options) { o.BaseEndpoint = &d.endpoint.URL })}
		q := redrive.Queue{Client: d.sqs, URL: d.dlq, VisibilityTimeout: 5 * time.Minute}
		total, seconds := 0, 0.0
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			for j := range benchMessages {
				d.put(orderID(i*benchMessages+j), j, false)
			}
			recs := d.records()
			for k := len(recs) - benchMessages; k < len(recs); k++ {
				d.fail(recs[k:k+1], nil)
			}
			b.StartTimer()
			rep, err := redrive.Run(d.ctx, q, d.streams, fn, redrive.Options{Apply: true, Concurrency: c})
			require.NoError(b, err)
			require.Equal(b, benchMessages, rep.Counts[redrive.Replayed], "every message replayed")
			total += benchMessages
			seconds += rep.Seconds
		}
		b.ReportMetric(float64(total)/seconds, "msgs/s")
	})
}
