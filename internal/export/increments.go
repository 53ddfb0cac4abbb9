package export

// The chain of incremental exports a revert or an apply reads: found under
// the prefixes, ordered by window, checked to follow each other.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"time"

	"github.com/dynops/dynops/internal/exportverify"
)

// Increment is one incremental export (one manifest-summary.json with
// exportType INCREMENTAL_EXPORT).
type Increment struct {
	Dir       string    `json:"dir"` // .../AWSDynamoDB/<ExportId>
	ExportArn string    `json:"export_arn"`
	From      time.Time `json:"from"` // inclusive
	To        time.Time `json:"to"`   // exclusive
	View      string    `json:"view"`
	Items     int64     `json:"items"`
	summary   exportverify.Summary
}

// parseStamp reads a manifest time (RFC 3339, with or without fraction).
func parseStamp(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q is not RFC 3339", s)
	}
	return t.UTC(), nil
}

func readSummary(ctx context.Context, store exportverify.Store, key string) (exportverify.Summary, error) {
	var sum exportverify.Summary
	body, err := store.Open(ctx, key)
	if err != nil {
		return sum, err
	}
	defer body.Close()
	if err := decodeJSON(body, &sum); err != nil {
		return sum, fmt.Errorf("%s: %w", store.Describe(key), err)
	}
	return sum, nil
}

// FindIncrements reads every export under the prefixes (matched by path
// segment), refuses full exports, and returns the incremental ones ordered by
// their window; an export found under two prefixes counts once.
func FindIncrements(ctx context.Context, store exportverify.Store, prefixes []string) ([]Increment, error) {
	seen := map[string]bool{}
	var incs []Increment
	for _, prefix := range prefixes {
		objs, err := exportverify.ListUnder(ctx, store, prefix)
		if err != nil {
			return nil, err
		}
		found := 0
		for _, o := range objs {
			if path.Base(o.Key) != exportverify.SummaryName {
				continue
			}
			found++
			sum, err := readSummary(ctx, store, o.Key)
			if err != nil {
				return nil, err
			}
			dir := path.Dir(o.Key)
			if sum.ExportType != "INCREMENTAL_EXPORT" {
				return nil, fmt.Errorf("%s is a full export: apply takes incremental exports; import the full one with `dynops export import` first", store.Describe(dir))
			}
			if seen[sum.ExportArn+dir] {
				continue
			}
			seen[sum.ExportArn+dir] = true
			from, err := parseStamp(sum.ExportFromTime)
			if err != nil {
				return nil, fmt.Errorf("%s exportFromTime: %w", store.Describe(o.Key), err)
			}
			to, err := parseStamp(sum.ExportToTime)
			if err != nil {
				return nil, fmt.Errorf("%s exportToTime: %w", store.Describe(o.Key), err)
			}
			incs = append(incs, Increment{Dir: dir, ExportArn: sum.ExportArn, From: from, To: to, View: sum.OutputView, Items: sum.ItemCount, summary: sum})
		}
		if found == 0 {
			return nil, fmt.Errorf("no %s under %s: not an incremental export prefix, or the export has not finished", exportverify.SummaryName, store.Describe(prefix))
		}
	}
	sort.SliceStable(incs, func(i, j int) bool { return incs[i].From.Before(incs[j].From) })
	return incs, nil
}

// ErrGap: the windows do not follow each other without gap or overlap.
var ErrGap = errors.New("the incremental exports do not chain")

// CheckChain checks that the windows start at since (when set) and that
// each starts where the previous one ended: no gap (changes lost) and no
// overlap (an older image applied after a newer one).
func CheckChain(incs []Increment, since time.Time) error {
	prev := since
	for i, inc := range incs {
		if !inc.From.Before(inc.To) {
			return fmt.Errorf("%w: %s has an empty or inverted window %s..%s", ErrGap, inc.Dir, stamp(inc.From), stamp(inc.To))
		}
		if !prev.IsZero() && !inc.From.Equal(prev) {
			what, after := "gap", "the previous window ends"
			if inc.From.Before(prev) {
				what = "overlap"
			}
			if i == 0 {
				after = "the table's checkpoint (" + TagAppliedThrough + ") is"
			}
			return fmt.Errorf("%w: %s between %s and %s (%s at %s, %s starts at %s): export the missing window, or pass the exports in one unbroken series",
				ErrGap, what, stamp(prev), stamp(inc.From), after, stamp(prev), inc.Dir, stamp(inc.From))
		}
		prev = inc.To
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
