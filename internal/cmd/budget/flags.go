// Package budget is what the bulk commands share about capacity: the
// budgeted run (Budgets: the --max-read-units and --max-write-units flags,
// each table's budget resolved from them, said before the run, held by the
// limiters, recorded in the audit and the report) and the prices of the
// estimate (--price-file). It lives here so that internal/capacity knows
// nothing of the command line (no import of internal/cmd runs back up).
package budget

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
)

// Annotation marks a budget flag registered by Budgets.AddFlags; the walk
// of the command tree (internal/cmd/root TestBudgetFlagsOnlyThroughBudgets)
// refuses a --max-read-units or --max-write-units without it.
const Annotation = "dynops_budget_flag"

// addFlag registers --max-read-units or --max-write-units on fl into v,
// with its range. what names the table the budget is on (e.g. "--to").
func addFlag(fl *pflag.FlagSet, v *float64, k capacity.Kind, what string) {
	fl.Float64Var(v, k.Flag(), 0, fmt.Sprintf("%s capacity units per second the run may take on %s, measured from what DynamoDB reports (0: %d %% of a provisioned table's %s capacity, none on an on-demand table)", k, what, int(capacity.DefaultFraction*100), k))
	flagcheck.Range(fl, k.Flag(), "0", "", "a budget is more than 0 units/s; 0 is the default")
	if err := fl.SetAnnotation(k.Flag(), Annotation, []string{string(k)}); err != nil {
		panic(err) // cannot happen: the flag was registered above
	}
}

// AddPriceFlag registers --price-file: the one way a bulk command takes
// on-demand prices for its estimate (capacity.LoadPrices).
func AddPriceFlag(fl *pflag.FlagSet, path *string) {
	fl.StringVar(path, "price-file", "", "on-demand prices for the estimate (JSON: source, date, USD per read/write request unit per region; docs/capacity.md); default: the built-in list (us-east-1 only)")
}
