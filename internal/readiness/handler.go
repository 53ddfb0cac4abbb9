package readiness

import (
	"context"
	"fmt"
	"log"
	"time"
)

// Event is the schedule's input; empty fields take the handler's defaults.
type Event struct {
	Env          string `json:"env"`
	RestoreTable string `json:"restore_table"`
}

// Handler is the Lambda handler (cmd/readiness).
type Handler struct {
	Clients      Clients
	Env          string
	RestoreTable string
	LeftoverAge  time.Duration
}

// Handle runs one readiness pass. A failed restore test is an error (the
// invocation fails) after the metrics are published.
func (h Handler) Handle(ctx context.Context, ev Event) (Report, error) {
	cfg := Config{Env: ev.Env, RestoreTable: ev.RestoreTable, LeftoverAge: h.LeftoverAge}
	if cfg.Env == "" {
		cfg.Env = h.Env
	}
	if cfg.RestoreTable == "" {
		cfg.RestoreTable = h.RestoreTable
	}
	rep, err := Run(ctx, h.Clients, cfg)
	for _, t := range rep.LeftoversDeleted {
		log.Printf("deleted leftover restore-test table %s", t)
	}
	for _, t := range rep.LeftoversKept {
		log.Printf("kept table %s", t)
	}
	for rule, n := range rep.FailingRules {
		log.Printf("%s: %d failing", rule, n)
	}
	for _, d := range rep.DR {
		if d.Ready {
			log.Printf("dr status %s: READY (regions %v, active %s)", d.Table, d.Regions, d.Active)
		} else {
			log.Printf("dr status %s: NOT READY (regions %v): %s", d.Table, d.Regions, d.Reason)
		}
	}
	if len(rep.NotGlobal) > 0 {
		log.Printf("dr status skipped for %d tables without replicas (not global tables): %v", len(rep.NotGlobal), rep.NotGlobal)
	}
	if err != nil {
		return rep, err
	}
	if r := rep.Restore; r != nil {
		log.Printf("restore test %s -> %s: %.1fs, %d/%d items, deleted=%v", r.Source, r.Target, r.Seconds, r.RestoredItems, r.SourceItems, r.Deleted)
		if r.Error != "" {
			return rep, fmt.Errorf("restore test of %s: %s", r.Source, r.Error)
		}
	}
	return rep, nil
}
