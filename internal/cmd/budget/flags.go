// Package budget is what the bulk commands share about capacity: the flags
// that set a run's budget (--max-read-units, --max-write-units) and its
// prices (--price-file), registered here so that internal/capacity knows
// nothing of the command line (no import of internal/cmd runs back up).
package budget

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
)

// AddFlag registers --max-read-units or --max-write-units on fl into v,
// with its range: the one way a bulk command takes a budget. what names
// the table the budget is on (e.g. "--to").
func AddFlag(fl *pflag.FlagSet, v *float64, k capacity.Kind, what string) {
	fl.Float64Var(v, k.Flag(), 0, fmt.Sprintf("%s capacity units per second the run may take on %s, measured from what DynamoDB reports (0: %d %% of a provisioned table's %s capacity, none on an on-demand table)", k, what, int(capacity.DefaultFraction*100), k))
	flagcheck.Range(fl, k.Flag(), "0", "", "a budget is more than 0 units/s; 0 is the default")
}

// AddPriceFlag registers --price-file: the one way a bulk command takes
// on-demand prices for its estimate (capacity.LoadPrices).
func AddPriceFlag(fl *pflag.FlagSet, path *string) {
	fl.StringVar(path, "price-file", "", "on-demand prices for the estimate (JSON: source, date, USD per read/write request unit per region; docs/capacity.md); default: the built-in list (us-east-1 only)")
}
