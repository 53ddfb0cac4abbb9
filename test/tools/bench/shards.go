package main

import (
	"fmt"
	"os"
)

// goalShards: the same diff as 2 local shards (two processes per stage,
// exchanging through S3) against 1 shard, items per wall second. On the
// emulator (one moto process serving every Scan) the ratio measures what
// sharding costs, not what it gains; on AWS, with a table's read limit and
// S3 request rates per prefix that grow with the shards, it is where the
// speed-up shows (docs/performance.md). Sharding must not cost more than
// half the rate.
const goalShards = 0.5

// shardsSection diffs two tables of e.items items (1 % changed) with
// `table diff --engine local` at 1 and 2 shards, alternating, three rounds
// each; every run must find the same differences.
func shardsSection(e *env) ([]goalRow, error) {
	a, b, changed, err := e.diffTables("shards", e.items)
	if err != nil {
		return nil, err
	}
	bucket, err := e.bucket("shards")
	if err != nil {
		return nil, err
	}
	var one, two []measure
	for i := 0; i < 3; i++ {
		for _, run := range []struct {
			shards int
			into   *[]measure
		}{{1, &one}, {2, &two}} {
			// A new run ID each time: the same ID continues a run.
			rep, m, err := e.diff(a, b, "--engine", "local", "--shards", fmt.Sprint(run.shards),
				"--run-prefix", "s3://"+bucket+"/runs", "--run-id", fmt.Sprintf("bench-%d-%d", run.shards, i))
			if err != nil {
				return nil, fmt.Errorf("table diff --engine local --shards %d: %w", run.shards, err)
			}
			if rep.Changed != changed {
				return nil, fmt.Errorf("table diff --shards %d found %d changed items, want %d", run.shards, rep.Changed, changed)
			}
			*run.into = append(*run.into, m)
			fmt.Fprintf(os.Stderr, "bench: sharded diff round %d: %d shard(s) %.0f items/s (%.2fs)\n", i+1, run.shards, m.rate(), m.seconds)
		}
	}
	r1, r2 := median(rates(one)), median(rates(two))
	return []goalRow{{name: "table diff, 2 local shards", value: fmt.Sprintf("%.0f items/s", r2),
		baseline: fmt.Sprintf("1 local shard: %.0f items/s (%d items per table)", r1, e.items), ratio: r2 / r1, goal: goalShards}}, nil
}
