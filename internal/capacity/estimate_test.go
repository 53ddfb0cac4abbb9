package capacity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
)

func TestUnits(t *testing.T) {
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"scan of 4 KB, consistent", ScanUnits(4096, true), 1},
		{"scan of 4 KB + 1 byte, consistent: rounded up", ScanUnits(4097, true), 2},
		{"scan of 8 KB, eventually consistent: half", ScanUnits(8192, false), 1},
		{"nothing to scan", ScanUnits(0, false), 0},
		{"writes of 100-byte items: 1 unit each", WriteUnits(10, 100), 10},
		{"writes of 1025-byte items: 2 units each", WriteUnits(10, 1025), 20},
		{"writes of unknown size: at least 1 unit each", WriteUnits(3, 0), 3},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v units, want %v", c.name, c.got, c.want)
		}
	}
}

func TestEstimateFinish(t *testing.T) {
	p := &Prices{Source: "test", Date: "2026-11-01", Regions: map[string]RegionPrices{"eu-west-1": {ReadRequestUnit: 0.25e-6, WriteRequestUnit: 1.25e-6}}}
	e := Estimate{Table: "dev-x", Kind: Write, Items: 1000, Units: 2_000_000}
	e.Finish(Budget{UnitsPerSecond: 1000}, p, "eu-west-1")
	if e.Seconds != 2000 {
		t.Errorf("time at 1000 units/s: %v s, want 2000", e.Seconds)
	}
	if e.PriceUSD == nil || *e.PriceUSD != 2.5 {
		t.Errorf("price: %v, want 2.5 USD (2M write units at 1.25 USD per million)", e.PriceUSD)
	}
	if !strings.Contains(e.String(), "test (2026-11-01), eu-west-1") {
		t.Errorf("the estimate names its price source: %s", e.String())
	}
	other := Estimate{Table: "dev-x", Kind: Read, Units: 10}
	other.Finish(Budget{}, p, "us-east-1")
	if other.PriceUSD != nil || other.Seconds != 0 {
		t.Errorf("a region the file does not price, and no budget: no price, no time: %+v", other)
	}
	if !strings.Contains(other.String(), "no price") {
		t.Errorf("says there is no price: %s", other.String())
	}
}

func TestLoadPricesRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p, err := LoadPrices(""); err != nil || p == nil || !p.builtIn {
		t.Errorf("no file: the built-in list, no error; got %v, %v", p, err)
	}
	for _, c := range []struct{ name, body, want string }{
		{"not-json", "{", "not JSON"},
		{"no-source", `{"date":"x","regions":{"eu-west-1":{"read_request_unit":1,"write_request_unit":1}}}`, "needs source, date"},
		{"zero-price", `{"source":"s","date":"d","regions":{"eu-west-1":{"read_request_unit":0,"write_request_unit":1}}}`, "region eu-west-1 needs"},
		// Read with a bound, not whole: a huge file (or /dev/zero) is refused.
		{"too-large", `{"source":"s","date":"d","regions":{}, "pad": "` + strings.Repeat("x", MaxPriceFileBytes) + `"}`, "larger than 1024 KiB"},
	} {
		_, err := LoadPrices(write(c.name, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: %v, want an error naming the file and %q", c.name, err, c.want)
		}
	}
	if _, err := LoadPrices(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "--price-file") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestBuiltInPrices: without --price-file the estimate is priced from the
// built-in list where it has the region (us-east-1: USD 0.125 per million
// read request units, 0.625 per million write request units, as AWS's own
// DynamoDB cost calculator carries them) and says why not elsewhere.
func TestBuiltInPrices(t *testing.T) {
	w := Estimate{Table: "dev-x", Kind: Write, Units: 2_000_000}
	w.Finish(Budget{}, nil, "us-east-1")
	if w.PriceUSD == nil || *w.PriceUSD != 1.25 {
		t.Errorf("2M write units in us-east-1: %v, want 1.25 USD", w.PriceUSD)
	}
	r := Estimate{Table: "dev-x", Kind: Read, Units: 8_000_000}
	r.Finish(Budget{}, nil, "us-east-1")
	if r.PriceUSD == nil || *r.PriceUSD != 1.0 {
		t.Errorf("8M read units in us-east-1: %v, want 1 USD", r.PriceUSD)
	}
	if s := w.String(); !strings.Contains(s, "dynops built-in list, from github.com/aws/agent-toolkit-for-aws") || !strings.Contains(s, "2026-11-27") {
		t.Errorf("the price names the built-in list, its source and date: %s", s)
	}
	o := Estimate{Table: "dev-x", Kind: Write, Units: 10}
	o.Finish(Budget{}, nil, "eu-west-1")
	if o.PriceUSD != nil || !strings.Contains(o.String(), "the built-in list has us-east-1 only; give --price-file for eu-west-1") {
		t.Errorf("another region: no price, and why: %+v %s", o.PriceUSD, o.String())
	}
}

// TestStoredSize follows the developer guide's sizing ("DynamoDB item sizes
// and formats"): name bytes plus value; numbers 1 byte per two significant
// digits plus 1 (leading and trailing zeroes trimmed); lists and maps 3 bytes
// plus 1 per element; a null or Boolean 1 byte.
func TestStoredSize(t *testing.T) {
	item := map[string]types.AttributeValue{
		"id":   &types.AttributeValueMemberS{Value: "héllo"},                                                                            // 2 + 6
		"n":    &types.AttributeValueMemberN{Value: "-0012300.4500"},                                                                    // 1 + (7 digits 1230045 -> 4) + 1
		"b":    &types.AttributeValueMemberB{Value: []byte{1, 2, 3}},                                                                    // 1 + 3
		"ok":   &types.AttributeValueMemberBOOL{Value: true},                                                                            // 2 + 1
		"l":    &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "ab"}}},                  // 1 + 3 + 1 + 2
		"m":    &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberNULL{Value: true}}}, // 1 + 3 + 1 + 1 + 1
		"tags": &types.AttributeValueMemberSS{Value: []string{"a", "bc"}},                                                               // 4 + 3
	}
	assert.Equal(t, int64(8+6+4+3+7+7+7), StoredSize(item))
	assert.Equal(t, int64(1), numberSize("0"), "zero: no significant digits, 1 byte")
}

// TestUnknownSizeIsSaid: an estimate whose size could not be read says so
// and gives no units, rather than "0.0 MB, about 0 units".
func TestUnknownSizeIsSaid(t *testing.T) {
	e := Estimate{Table: "t", Kind: Read, Items: 0, SizeUnknown: true,
		SizeFrom: "size unknown: DescribeTable reports 0 bytes (updated about every 6 hours by DynamoDB)"}
	assert.Equal(t, "estimate on t: 0 items, size unknown: DescribeTable reports 0 bytes (updated about every 6 hours by DynamoDB): no estimate of the read units", e.String())
}
