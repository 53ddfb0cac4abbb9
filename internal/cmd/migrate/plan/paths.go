package plan

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/migrate"
)

// Path is one way to move the source's items into the destinations, with
// what it is expected to take. The figures come from the items the plan read
// (the whole table, or a sample scaled by the ItemCount DynamoDB reports)
// and the developer guide's unit sizes (capacity.ScanUnits,
// capacity.WriteUnits).
type Path struct {
	Name string `json:"name"`
	// How is the backfill command line of this path.
	How        string  `json:"how"`
	ReadUnits  float64 `json:"read_units"`  // from the source
	WriteUnits float64 `json:"write_units"` // into the destinations, all together
	// ExportGB and ImportGB are the data the export and the imports carry.
	ExportGB float64 `json:"export_gb,omitempty"`
	ImportGB float64 `json:"import_gb,omitempty"`
	// Seconds is the time the capacity units take at the default budgets
	// (0: no budget holds them: on-demand tables, or no units).
	Seconds float64 `json:"seconds_at_default_budgets,omitempty"`
	// PriceUSD is the on-demand price with a price file (nil: none).
	PriceUSD *float64 `json:"price_usd,omitempty"`
	Note     string   `json:"note"`
}

// paths estimates the three backfill paths for a source of items and bytes
// whose routed share (routed of scanned) goes to the destinations.
func paths(ctx context.Context, db capacity.Describer, res *migrate.PlanResult, prices *capacity.Prices, region string) ([]Path, error) {
	items, bytes, avg, err := capacity.TableSize(ctx, db, res.Source.Table)
	if err != nil {
		return nil, err
	}
	// DynamoDB refreshes the size about every six hours (a new table reads
	// 0): the plan's own read of the whole table is the better figure, and
	// a sample's average scales the reported item count.
	switch {
	case !res.Sampled && res.Scanned > 0:
		items, bytes = res.Scanned, res.ScannedBytes
	case res.Sampled && res.Scanned > 0 && bytes == 0:
		bytes = items * (res.ScannedBytes / res.Scanned)
	}
	if items > 0 {
		avg = bytes / items
	}
	routed := items
	if res.Scanned > 0 {
		routed = int64(math.Round(float64(items) * float64(res.Scanned-res.Unmatched-res.Invalid) / float64(res.Scanned)))
	}
	gb := float64(bytes) / 1e9
	reads := capacity.ScanUnits(bytes, true) // the backfill's Scan reads consistently
	writes := capacity.WriteUnits(routed, avg)
	defaults := &budget.Budgets{} // the budgets a backfill takes without flags
	rb, err := defaults.Resolve(ctx, db, capacity.Read, res.Source.Table)
	if err != nil {
		return nil, err
	}
	// The destinations' write budgets add up; each is its own table's.
	var writeBudget float64
	for _, d := range res.Destinations {
		if !d.Exists {
			continue
		}
		wb, err := defaults.Resolve(ctx, db, capacity.Write, d.Table)
		if err != nil {
			return nil, err
		}
		writeBudget += wb.UnitsPerSecond
	}
	at := func(units, perSecond float64) float64 {
		if perSecond <= 0 {
			return 0
		}
		return units / perSecond
	}
	var p *capacity.RegionPrices
	if prices != nil {
		if rp, ok := prices.Regions[region]; ok {
			p = &rp
		}
	}
	price := func(r, w, exportGB, importGB float64) *float64 {
		// No price rather than a low one: a path that moves GB needs the GB rates.
		if p == nil || (exportGB > 0 && p.ExportPerGB == 0) || (importGB > 0 && p.ImportPerGB == 0) {
			return nil
		}
		usd := r*p.ReadRequestUnit + w*p.WriteRequestUnit + exportGB*p.ExportPerGB + importGB*p.ImportPerGB
		return &usd
	}
	src := res.Source.Table
	return []Path{
		{Name: "scan", How: "dynops migrate backfill --source " + src + " --routes FILE",
			ReadUnits: reads, WriteUnits: writes, Seconds: max(at(reads, rb.UnitsPerSecond), at(writes, writeBudget)), PriceUSD: price(reads, writes, 0, 0),
			Note: "reads the source table (consistent Scan) and writes each destination; both hold to budgets"},
		{Name: "export", How: "dynops migrate backfill --source " + src + " --routes FILE --export-to s3://BUCKET/PREFIX",
			WriteUnits: writes, ExportGB: gb, Seconds: at(writes, writeBudget), PriceUSD: price(0, writes, gb, 0),
			Note: "a point-in-time export reads no capacity of the source; the destinations are written as in the scan path"},
		{Name: "export+import", How: "dynops migrate backfill --source " + src + " --routes FILE --export-to s3://BUCKET/PREFIX --import-to s3://BUCKET/PREFIX",
			ExportGB: gb, ImportGB: gb, PriceUSD: price(0, 0, gb, gb),
			Note: "no capacity at all: ImportTable creates the destinations (they must not exist yet); billed per GB exported and imported"},
	}, nil
}

func printPaths(out io.Writer, ps []Path, prices *capacity.Prices) {
	fmt.Fprintf(out, "\nBackfill paths (from the items the plan read):\n")
	for _, p := range ps {
		fmt.Fprintf(out, "  %-14s read %.0f units, write %.0f units", p.Name, p.ReadUnits, p.WriteUnits)
		if p.ExportGB > 0 || p.ImportGB > 0 {
			fmt.Fprintf(out, ", export %.3f GB, import %.3f GB", p.ExportGB, p.ImportGB)
		}
		if p.Seconds > 0 {
			fmt.Fprintf(out, ", %s at the default budgets", (time.Duration(p.Seconds) * time.Second).Round(time.Second))
		}
		if p.PriceUSD != nil {
			fmt.Fprintf(out, ", about $%.4f", *p.PriceUSD)
		}
		fmt.Fprintf(out, "\n                 %s\n                 %s\n", p.Note, p.How)
	}
	for _, p := range ps {
		if p.PriceUSD == nil {
			fmt.Fprintf(out, "  (a path without a price: its region or its GB rates are not in %s; give --price-file, docs/capacity.md)\n", prices.Name())
			break
		}
	}
}
