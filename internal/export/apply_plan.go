package export

import (
	"context"
	"time"

	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/exportverify"
)

// ApplyRequest is what `export apply` is asked to apply, and onto what.
type ApplyRequest struct {
	Bucket   string
	Prefixes []string
	Table    string
	// SourceTable is the ARN of the table the exports are of ("": the table
	// of the full export Table was imported from).
	SourceTable string
	// Since is where the first window must start when the table says
	// nothing (zero: it must say).
	Since time.Time
	Shard engine.Shard
	Trust exportverify.Trust
}

// ApplyPlan is what an apply establishes before it writes anything: the
// chain, whom it believes (the full export first, when the source table
// came from it) and where it continues.
type ApplyPlan struct {
	Increments []Increment
	Source     string
	Vouched    []exportverify.Vouched
	Start      Start
}

// PlanApply finds the exports, the table they are of, vouches for every
// one (exportverify.Vouch) and reads where the table (or the shard)
// continues from. Refusals wrap ErrNoSource, ErrShardMix or
// exportverify's refusals; nothing is written.
func PlanApply(ctx context.Context, db ApplyDB, store exportverify.Store, r ApplyRequest) (ApplyPlan, error) {
	var p ApplyPlan
	var err error
	if p.Increments, err = FindIncrements(ctx, store, r.Prefixes); err != nil {
		return p, err
	}
	source, full, err := SourceOfApply(ctx, db, store, r.Bucket, r.Table, r.SourceTable, r.Trust)
	if err != nil {
		return p, err
	}
	p.Source = source
	if p.Vouched, err = Vouch(ctx, store, p.Increments, exportverify.Expect{TableArn: source, Bucket: r.Bucket}, r.Trust); err != nil {
		return p, err
	}
	if full != nil {
		p.Vouched = append([]exportverify.Vouched{*full}, p.Vouched...)
	}
	p.Start, err = Baseline(ctx, db, store, r.Bucket, r.Table, r.Since, r.Shard)
	return p, err
}

// PendingChanges are the puts and deletes of the exports not yet applied
// (a dry run's estimate).
func (r ApplyReport) PendingChanges() (puts, deletes int64) {
	for _, inc := range r.Increments {
		if !inc.Skipped {
			puts, deletes = puts+int64(inc.Puts), deletes+int64(inc.Deletes)
		}
	}
	return puts, deletes
}
