package main

import (
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/capacity"
)

// scanPathSection measures where a diff's time goes on the Scan path, each
// variant beside a raw Scan of the same tables in the same rounds (issue
// 45: wave 3 measured table diff at 0.70-0.79x of a raw Scan, against
// 0.88-0.95x before the capacity budgets): the raw Scan with and without
// ReturnConsumedCapacity; table diff on on-demand tables (no budget: the
// wrapper passes the call through), on provisioned tables with capacity to
// spare (the wrapper in the path, not binding), and on provisioned tables of
// 4 read units (boto3's create_table makes provisioned tables: the default
// budget, 1 unit/s, holds the diff by design; moto charges 1 unit a page);
// and the estimate's own cost (DescribeTable and a sample page). Printed
// only: the goal rows are "table diff" and "table diff, provisioned".
func scanPathSection(e *env) error {
	n := e.scanItems
	od1, od2, _, err := e.diffTablesWith("sp-od", n, 0)
	if err != nil {
		return err
	}
	pb1, pb2, _, err := e.diffTablesWith("sp-big", n, 4000)
	if err != nil {
		return err
	}
	ps1, ps2, _, err := e.diffTablesWith("sp-small", n, 4)
	if err != nil {
		return err
	}
	raw := func(rcc types.ReturnConsumedCapacity, a, b string) func() (measure, error) {
		return func() (measure, error) {
			start := time.Now()
			k, err := e.rawScanWith(e.segments, rcc, a, b)
			return measure{work: float64(k), seconds: time.Since(start).Seconds()}, err
		}
	}
	diff := func(a, b string, extra ...string) func() (measure, error) {
		return func() (measure, error) { _, m, err := e.diff(a, b, extra...); return m, err }
	}
	variants := []struct {
		name string
		run  func() (measure, error)
		ms   []measure
	}{
		{name: "raw Scan, on-demand tables (the baseline)", run: raw("", od1, od2)},
		{name: "raw Scan + ReturnConsumedCapacity TOTAL", run: raw(types.ReturnConsumedCapacityTotal, od1, od2)},
		{name: "table diff, on-demand (no budget)", run: diff(od1, od2)},
		{name: "table diff, 4,000 RCU (default budget 1,000/s)", run: diff(pb1, pb2)},
		{name: "raw Scan, 4 RCU tables", run: raw("", ps1, ps2)},
		{name: "table diff, 4 RCU (default budget 1/s)", run: diff(ps1, ps2)},
		{name: "table diff, 4 RCU, --max-read-units 1000", run: diff(ps1, ps2, "--max-read-units", "1000")},
	}
	const rounds = 2
	for r := 0; r < rounds; r++ {
		for i := range variants {
			v := &variants[(i+r)%len(variants)] // each round starts one later
			m, err := v.run()
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			v.ms = append(v.ms, m)
			fmt.Fprintf(os.Stderr, "bench: scan path round %d: %-48s %8.1f items/s (%.2fs)\n", r+1, v.name, m.rate(), m.seconds)
		}
	}
	base := median(rates(variants[0].ms))
	fmt.Printf("\nSCAN PATH (2 x %d items per variant, %d segments, median of %d rounds; ratio = rate / raw Scan on on-demand tables, same run)\n", n, e.segments, rounds)
	for _, v := range variants {
		r := median(rates(v.ms))
		fmt.Printf("  %-50s %9.1f items/s  %5.2fx\n", v.name, r, r/base)
	}
	// The estimate: what table diff reads before its scans, per table.
	start := time.Now()
	if _, _, _, err := capacity.TableSize(e.ctx, e.db, od1); err != nil {
		return err
	}
	describe := time.Since(start)
	start = time.Now()
	if _, err := capacity.ScanEstimate(e.ctx, e.db, e.db, od1, false); err != nil {
		return err
	}
	fmt.Printf("  estimate per table: DescribeTable %s; with the sample Scan page (the emulator reports 0 bytes) %s\n",
		describe.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return nil
}
