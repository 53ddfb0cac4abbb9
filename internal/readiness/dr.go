package readiness

import (
	"context"
	"fmt"
	"time"

	"github.com/dynops/dynops/internal/failover"
)

// DRResult is what `dynops dr status` reports for one global table of the
// env, read back from every region of the table.
type DRResult struct {
	Table   string   `json:"table"`
	Regions []string `json:"regions"`
	Active  string   `json:"active_region,omitempty"`
	Ready   bool     `json:"ready"`
	// Reason says why no region is ready to take writes over ("" when one is).
	Reason   string `json:"reason,omitempty"`
	HalfDone string `json:"half_done,omitempty"`
}

// DRStatus runs `dynops dr status` (failover.ReadStatus, with its default
// rules) for every table that lists replicas in home. A table without
// replicas is not a global table: it is returned in notGlobal and gets no
// DR result. A table whose replicas cannot be read is an error: the run
// cannot say whether it is global.
func DRStatus(ctx context.Context, clients failover.Regional, home string, tables []string, now time.Time) (results []DRResult, notGlobal []string, err error) {
	for _, t := range tables {
		regions, err := failover.DiscoverRegions(ctx, clients(home).DynamoDB, t, home)
		if err != nil {
			return results, notGlobal, fmt.Errorf("dr status of %s: %w", t, err)
		}
		if len(regions) < 2 {
			notGlobal = append(notGlobal, t)
			continue
		}
		target := failover.Target{Table: t, Regions: regions, Pointer: failover.DefaultPointer(t)}
		s := failover.ReadStatus(ctx, clients, target, failover.DefaultRules(), now)
		results = append(results, DRResult{Table: t, Regions: regions, Active: s.State.Active, Ready: s.Ready, Reason: s.Reason(), HalfDone: s.HalfDone})
	}
	return results, notGlobal, nil
}
