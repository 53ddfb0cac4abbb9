package budget

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
)

// Budgets are a bulk run's capacity budgets (capacity units per second, per
// table, as DynamoDB reports them): what its flags set, and once Resolve or
// Tables has read them, one budget per table and kind. A command's options
// embed it and register its flags with AddFlags, the one way a command
// takes a budget:
//
//	budget.Budgets                                  // in the options struct
//	opts.Budgets.AddFlags(fl, "", "--table")         // in the constructor
//	wb, err := opts.Budgets.Resolve(ctx, db, capacity.Write, opts.Table)
//
// Runs that share one budget (the shards of a run) each take Split(n).
type Budgets struct {
	// MaxReadUnits and MaxWriteUnits are the flags' values (0: the
	// default of capacity.Resolve).
	MaxReadUnits, MaxWriteUnits float64

	parts    int // more than 1: this run holds 1/parts of each budget (Split)
	resolved []capacity.Budget
}

// AddFlags registers --max-read-units when reads names what the run scans
// and --max-write-units when writes names what it writes (an empty name
// registers no flag), with their ranges.
func (b *Budgets) AddFlags(fl *pflag.FlagSet, reads, writes string) {
	if reads != "" {
		addFlag(fl, &b.MaxReadUnits, capacity.Read, reads)
	}
	if writes != "" {
		addFlag(fl, &b.MaxWriteUnits, capacity.Write, writes)
	}
}

// Units is the flag's value of kind k.
func (b *Budgets) Units(k capacity.Kind) float64 {
	if k == capacity.Read {
		return b.MaxReadUnits
	}
	return b.MaxWriteUnits
}

// Split is the budgets of one of n runs that share these (the shards of one
// run): each budget it resolves, from the flag or the default, is 1/n of the
// whole, so that n runs together hold to it (a split of a split shares
// the share). Nothing resolved is carried over; n below 2 splits nothing.
func (b *Budgets) Split(n int) *Budgets {
	return &Budgets{MaxReadUnits: b.MaxReadUnits, MaxWriteUnits: b.MaxWriteUnits, parts: max(n, 1) * max(b.parts, 1)}
}

// Resolve is the budget of kind k on table (capacity.Resolve: the flag,
// else 25 % of a provisioned table's capacity, else none; after Split, its
// share), kept for Status, Record and Uses.
func (b *Budgets) Resolve(ctx context.Context, db capacity.Describer, k capacity.Kind, table string) (capacity.Budget, error) {
	bu, err := capacity.Resolve(ctx, db, table, k, b.Units(k))
	if err != nil {
		return bu, err
	}
	if bu, err = bu.Split(b.parts); err != nil { // capacity.Budget.Split: the one split
		return bu, err
	}
	b.resolved = append(b.resolved, bu)
	return bu, nil
}

// Tables resolves the budget of kind k on each table, says each on stderr
// before the run (not with -o json) and returns each table's bucket, to be
// held by the limiters (capacity.Scans, capacity.Writes, capacity.Items).
// A table that does not exist has no budget and is left out: the run's own
// check refuses it, naming every missing one.
func (b *Budgets) Tables(ctx context.Context, f *factory.Factory, db capacity.Describer, k capacity.Kind, tables []string) (map[string]*capacity.Bucket, error) {
	buckets := map[string]*capacity.Bucket{}
	for _, t := range tables {
		bu, err := b.Resolve(ctx, db, k, t)
		var nf *types.ResourceNotFoundException
		if errors.As(err, &nf) {
			continue
		}
		if err != nil {
			return nil, err
		}
		buckets[t] = bu.Bucket
		view.Printf(f, f.IOStreams.ErrOut)("%s\n", bu.String())
	}
	return buckets, nil
}

// Status is the units per second used of each budget, for a progress line
// (", T 1.2 RCU/s of 5.0" per budget; "" without one).
func (b *Budgets) Status() string {
	s := ""
	for _, bu := range b.resolved {
		if bu.Bucket != nil {
			u := bu.Bucket.Usage()
			s += fmt.Sprintf(", %s %.1f %sCU/s of %.1f", bu.Table, u.PerSecond, map[capacity.Kind]string{capacity.Read: "R", capacity.Write: "W"}[bu.Kind], u.Budget)
		}
	}
	return s
}

// Record says what each budget used: in the audit (capacity-budget, one
// action per table and kind) and, without -o json, on stderr.
func (b *Budgets) Record(f *factory.Factory) {
	note := view.Printf(f, f.IOStreams.ErrOut)
	for _, use := range b.Uses() {
		detail := map[string]any{"budget": use.Budget}
		if u := use.Used; u != nil {
			detail["used"] = *u
			note("%s capacity on %s: %.1f units used, %.1f units/s on average, budget %.1f units/s (as DynamoDB reported)\n",
				use.Kind, use.Table, u.Used, u.PerSecond, u.Budget)
		}
		f.Audit.Act(audit.ActCapacityBudget, use.Table, detail)
	}
}

// Uses lists each budget and what the run used of it, for -o json.
func (b *Budgets) Uses() []capacity.Use {
	uses := []capacity.Use{}
	for _, bu := range b.resolved {
		use := capacity.Use{Budget: bu}
		if bu.Bucket != nil {
			u := bu.Bucket.Usage()
			use.Used = &u
		}
		uses = append(uses, use)
	}
	return uses
}
