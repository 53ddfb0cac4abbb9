package capacity

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Unit sizes, from the DynamoDB developer guide ("DynamoDB read and write
// operations", read-write-operations.md): a read unit is one strongly consistent read of up to 4 KB
// (an eventually consistent read costs half), a write capacity unit one
// standard write of up to 1 KB; larger items take more units, rounded up.
// A Scan is charged on the total size of the items it reads, rounded up to
// 4 KB, not per item.
const (
	ReadUnitBytes  = 4096
	WriteUnitBytes = 1024
)

// Estimate is what a bulk step is expected to take from one table: capacity
// units, the time at its budget, and (with a price file) the on-demand price.
type Estimate struct {
	Table string  `json:"table"`
	Kind  Kind    `json:"kind"`
	Items int64   `json:"items"`
	Bytes int64   `json:"bytes"`
	Units float64 `json:"units"`
	// SizeFrom says where Bytes came from when DescribeTable did not give
	// it (ScanSize): a sample, or why the size is unknown.
	SizeFrom string `json:"size_from,omitempty"`
	// SizeUnknown: no size could be read; Units is 0 for that reason, not
	// because the table is empty.
	SizeUnknown bool `json:"size_unknown,omitempty"`
	// Seconds is the time at the budget (0: no budget).
	Seconds float64 `json:"seconds_at_budget,omitempty"`
	// PriceUSD is the on-demand price of Units at the price file's list
	// price for the region (nil: no price file).
	PriceUSD  *float64 `json:"price_usd,omitempty"`
	PriceFrom string   `json:"price_from,omitempty"`
	// NoPrice says why there is no price ("" when there is one).
	NoPrice string `json:"no_price,omitempty"`
}

// ScanUnits: reading bytes of items with a Scan (eventually consistent
// unless consistent).
func ScanUnits(bytes int64, consistent bool) float64 {
	u := math.Ceil(float64(bytes) / ReadUnitBytes)
	if !consistent {
		u /= 2
	}
	return u
}

// WriteUnits: writing items of avgBytes each, one write per item.
func WriteUnits(items, avgBytes int64) float64 {
	per := math.Max(1, math.Ceil(float64(avgBytes)/WriteUnitBytes))
	return float64(items) * per
}

// TableSize is the item count and size DynamoDB reports for the table
// (refreshed about every six hours) and the average item size.
func TableSize(ctx context.Context, db Describer, table string) (items, bytes, avg int64, err error) {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("reading the size of %s for the estimate: %w", table, err)
	}
	items, bytes = aws.ToInt64(out.Table.ItemCount), aws.ToInt64(out.Table.TableSizeBytes)
	if items > 0 {
		avg = bytes / items
	}
	return items, bytes, avg, nil
}

// Finish fills the time at the budget and the price.
func (e *Estimate) Finish(b Budget, prices *Prices, region string) {
	if b.UnitsPerSecond > 0 {
		e.Seconds = e.Units / b.UnitsPerSecond
	}
	if prices == nil {
		prices = BuiltInPrices()
	}
	p, ok := prices.Regions[region]
	if !ok {
		e.NoPrice = prices.Missing(region)
		return
	}
	per := p.ReadRequestUnit
	if e.Kind == Write {
		per = p.WriteRequestUnit
	}
	usd := e.Units * per
	e.PriceUSD = &usd
	e.PriceFrom = fmt.Sprintf("%s (%s), %s", prices.Name(), prices.Date, region)
}

// String is the estimate as a plan line.
func (e Estimate) String() string {
	if e.SizeUnknown {
		return fmt.Sprintf("estimate on %s: %d items, %s: no estimate of the %s units", e.Table, e.Items, e.SizeFrom, e.Kind)
	}
	s := fmt.Sprintf("estimate on %s: %d items, %.1f MB, about %.0f %s units", e.Table, e.Items, float64(e.Bytes)/1e6, e.Units, e.Kind)
	if e.SizeFrom != "" {
		s = fmt.Sprintf("estimate on %s: %d items, %.1f MB (from %s), about %.0f %s units", e.Table, e.Items, float64(e.Bytes)/1e6, e.SizeFrom, e.Units, e.Kind)
	}
	if e.Seconds > 0 {
		s += fmt.Sprintf(", %s at the budget", (time.Duration(e.Seconds) * time.Second).Round(time.Second))
	}
	if e.PriceUSD != nil {
		s += fmt.Sprintf(", about $%.4f on demand (%s)", *e.PriceUSD, e.PriceFrom)
	} else if e.NoPrice != "" {
		s += " (" + e.NoPrice + ")"
	}
	return s
}

// Prices is a price file: on-demand list prices per region in USD per
// request unit, with where and when they were read.
type Prices struct {
	Source  string                  `json:"source"`
	Date    string                  `json:"date"`
	Regions map[string]RegionPrices `json:"regions"`
	builtIn bool
}

// RegionPrices are one region's on-demand prices in USD per request unit.
type RegionPrices struct {
	ReadRequestUnit  float64 `json:"read_request_unit"`
	WriteRequestUnit float64 `json:"write_request_unit"`
	// ExportPerGB and ImportPerGB (optional): a point-in-time export to S3
	// and an import from S3, USD per GB of table data (migrate plan).
	ExportPerGB float64 `json:"export_per_gb,omitempty"`
	ImportPerGB float64 `json:"import_per_gb,omitempty"`
}

// Name is the price list as an estimate cites it: the built-in list by
// name, a price file by its source.
func (p *Prices) Name() string {
	if p.builtIn {
		return "dynops built-in list, from " + p.Source
	}
	return p.Source
}

// Missing says why the list has no price for region, and the fix.
func (p *Prices) Missing(region string) string {
	if p.builtIn {
		return "no price: the built-in list has " + strings.Join(slices.Sorted(maps.Keys(p.Regions)), ", ") + " only; give --price-file for " + region + ", see docs/capacity.md"
	}
	return "no price: --price-file (" + p.Source + ") has no " + region
}

// BuiltInPrices is the list dynops carries: DynamoDB's public on-demand
// rates for the Standard table class in us-east-1, as AWS's own DynamoDB
// cost calculator carries them (USD 0.125 per million read request units,
// 0.625 per million write request units), read on the date given. Other
// regions have other rates: they get no price without --price-file. The
// export and import per-GB rates are not in that source, so paths priced
// per GB get none either.
func BuiltInPrices() *Prices {
	return &Prices{
		Source: "github.com/aws/agent-toolkit-for-aws, skills/specialized-skills/database-skills/amazon-dynamodb/scripts/calculate_costs.py " +
			"(Standard table class, on-demand public rates; confirm at https://aws.amazon.com/dynamodb/pricing/on-demand/)",
		Date: "2026-11-27",
		Regions: map[string]RegionPrices{
			"us-east-1": {ReadRequestUnit: 0.125 / 1e6, WriteRequestUnit: 0.625 / 1e6},
		},
		builtIn: true,
	}
}

// MaxPriceFileBytes bounds --price-file: it is read whole, and every region
// of AWS at a few hundred bytes each stays far below it.
const MaxPriceFileBytes = 1 << 20

// LoadPrices reads a price file; "" is the built-in list (BuiltInPrices).
// Errors name the file, what is wrong and the format.
func LoadPrices(path string) (*Prices, error) {
	if path == "" {
		return BuiltInPrices(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--price-file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPriceFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--price-file %s: %w", path, err)
	}
	if len(b) > MaxPriceFileBytes {
		return nil, fmt.Errorf("--price-file %s is larger than %d KiB: a price file lists a few regions' two prices; give the JSON file written for dynops (see docs/capacity.md)", path, MaxPriceFileBytes>>10)
	}
	const format = `{"source": "URL read", "date": "2026-11-01", "regions": {"eu-west-1": {"read_request_unit": 0.0000001, "write_request_unit": 0.0000005}}} (USD per request unit)`
	var p Prices
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("--price-file %s: not JSON of the form %s: %w", path, format, err)
	}
	if p.Source == "" || p.Date == "" || len(p.Regions) == 0 {
		return nil, fmt.Errorf("--price-file %s: needs source, date and at least one region: %s", path, format)
	}
	for r, rp := range p.Regions {
		if rp.ReadRequestUnit <= 0 || rp.WriteRequestUnit <= 0 {
			return nil, fmt.Errorf("--price-file %s: region %s needs read_request_unit and write_request_unit above 0 (USD per unit): %s", path, r, format)
		}
	}
	return &p, nil
}

// ItemWrites estimates writing puts whole items of table's average size
// and deleting deletes items (one unit each), finished at b and priced with
// prices. It returns nil when the table's size cannot be read: the plan
// then says no estimate rather than a wrong one.
func ItemWrites(ctx context.Context, db Describer, table string, puts, deletes int64, b Budget, prices *Prices, region string) *Estimate {
	_, _, avg, err := TableSize(ctx, db, table)
	if err != nil {
		return nil
	}
	est := &Estimate{Table: table, Kind: Write, Items: puts + deletes, Bytes: puts * avg,
		Units: WriteUnits(puts, avg) + float64(deletes)}
	est.Finish(b, prices, region)
	return est
}

// StoredSize is an item's size as DynamoDB counts it for capacity (the
// developer guide's "DynamoDB item sizes and formats"): each attribute's
// name in UTF-8 bytes plus its value: a string its UTF-8 bytes, a number 1
// byte per two significant digits plus 1, a binary its raw bytes, a null or
// Boolean 1 byte, a list or map 3 bytes plus its elements with 1 byte each,
// a set its elements.
func StoredSize(item map[string]types.AttributeValue) int64 {
	var n int64
	for name, v := range item {
		n += int64(len(name)) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int64 {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return int64(len(v.Value))
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return int64(len(v.Value))
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		return sizeOfAll(v.Value, func(s string) int64 { return int64(len(s)) })
	case *types.AttributeValueMemberNS:
		return sizeOfAll(v.Value, numberSize)
	case *types.AttributeValueMemberBS:
		return sizeOfAll(v.Value, func(b []byte) int64 { return int64(len(b)) })
	case *types.AttributeValueMemberL:
		n := int64(3)
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := int64(3)
		for name, e := range v.Value {
			n += 1 + int64(len(name)) + valueSize(e)
		}
		return n
	}
	return 0
}

// sizeOfAll is the sum of a set's element sizes.
func sizeOfAll[T any](xs []T, size func(T) int64) int64 {
	var n int64
	for _, x := range xs {
		n += size(x)
	}
	return n
}

// numberSize: 1 byte per two significant digits (leading and trailing
// zeroes trimmed), plus 1.
func numberSize(s string) int64 {
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.SplitN(strings.ToLower(s), "e", 2)[0])
	digits = strings.Trim(digits, "0")
	return int64(len(digits)+1)/2 + 1
}

// SampleItems is how many items ScanSize reads to size a table whose
// DescribeTable reports 0 bytes.
const SampleItems = 100

// ScanEstimate estimates reading the whole table with a Scan (eventually
// consistent unless consistent). DescribeTable's item count and size come
// first (DynamoDB updates them about every six hours). When it reports 0
// bytes (a new table, or the emulator, which never counts bytes) one Scan
// page of up to SampleItems items is read through scan (a budgeted scanner
// charges it): a page that holds the whole table is its size; otherwise the
// page's average stored item size times ItemCount. With neither the size is
// unknown and the estimate says so (SizeUnknown) instead of 0 units.
func ScanEstimate(ctx context.Context, db Describer, scan Scanner, table string, consistent bool) (*Estimate, error) {
	items, bytes, _, err := TableSize(ctx, db, table)
	if err != nil {
		return nil, err
	}
	est := &Estimate{Table: table, Kind: Read, Items: items, Bytes: bytes}
	if bytes == 0 {
		if err := est.sample(ctx, scan); err != nil {
			return nil, err
		}
	}
	est.Units = ScanUnits(est.Bytes, consistent)
	return est, nil
}

// sample sizes the table from one Scan page (ScanEstimate).
func (e *Estimate) sample(ctx context.Context, scan Scanner) error {
	out, err := scan.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(e.Table), Limit: aws.Int32(SampleItems)})
	if err != nil {
		return fmt.Errorf("reading a sample of %s for the estimate (DescribeTable reports 0 bytes): %w", e.Table, err)
	}
	var sample int64
	for _, it := range out.Items {
		sample += StoredSize(it)
	}
	n := int64(len(out.Items))
	const zero = "DescribeTable reports 0 bytes; DynamoDB updates it about every 6 hours"
	switch {
	case len(out.LastEvaluatedKey) == 0:
		e.Items, e.Bytes = n, sample
		e.SizeFrom = "the whole table in one sample Scan page: " + zero
	case e.Items > 0 && n > 0:
		e.Bytes = sample * e.Items / n
		e.SizeFrom = fmt.Sprintf("%d sampled items of %d bytes on average times the item count: %s", n, sample/n, zero)
	default:
		e.SizeFrom = "size unknown: DescribeTable reports 0 bytes (updated about every 6 hours by DynamoDB)"
		e.SizeUnknown = true
	}
	return nil
}
