package migrate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/ddbjson"
	"github.com/dynops/dynops/internal/tablediff"
)

// PlanOptions of a plan.
type PlanOptions struct {
	Input
	Sample         int // read at most this many source items (0: all)
	Segments       int // parallel Scan segments (default 4)
	AllowUnmatched bool
	// AllowUntransformable makes items their route cannot transform a
	// warning (the backfill leaves them behind) instead of a problem.
	AllowUntransformable bool
	// preflight, when set, is the step Preflight checks for: which of the
	// plan's checks apply (the items, the destinations' emptiness); the
	// guideline rules (warnings only) are not read.
	preflight *PreflightOptions
}

// TableCount is how many source items a destination receives.
type TableCount struct {
	Table  string   `json:"table"`
	Routes []string `json:"routes"`
	Items  int64    `json:"items"`
}

// PlanResult is what a migration would do.
type PlanResult struct {
	Source  *SourceInfo `json:"source"`
	Scanned int64       `json:"scanned"`
	// ScannedBytes is the size of the items read (DynamoDB's item size).
	ScannedBytes    int64              `json:"scanned_bytes"`
	Sampled         bool               `json:"sampled"`
	Tables          []TableCount       `json:"tables"`
	Unmatched       int64              `json:"unmatched"`
	UnmatchedSample []string           `json:"unmatched_sample"`
	Invalid         int64              `json:"transform_errors"`
	InvalidSample   []string           `json:"transform_error_sample"`
	Destinations    []DestinationCheck `json:"destinations"`
	Problems        []string           `json:"problems"`
	Warnings        []string           `json:"warnings"`
	Ready           bool               `json:"ready"`
}

// Plan scans the source (or a sample), counts the items per destination and
// checks the destinations. It writes nothing.
func Plan(ctx context.Context, db DynamoDB, o PlanOptions) (*PlanResult, error) {
	if o.Segments <= 0 {
		o.Segments = 4
	}
	res := &PlanResult{UnmatchedSample: []string{}, InvalidSample: []string{}, Problems: []string{}, Warnings: []string{}}
	src, err := ReadSource(ctx, db, o.Source, o.Routes, true)
	var ie *InputError
	switch {
	case errors.As(err, &ie) && src != nil:
		res.Problems = append(res.Problems, ie.Problems...)
	case err != nil:
		return nil, err
	}
	res.Source = src
	counts := map[string]int64{}
	var mu sync.Mutex
	segments, limit := o.Segments, int32(0)
	if o.Sample > 0 {
		segments, limit = 1, int32(min(o.Sample+1, 1000)) // a sample is the first items of one Scan
	}
	pf := o.preflight
	scan := func(fn func(map[string]types.AttributeValue) error) error {
		if pf != nil && !pf.Items {
			return nil
		}
		return scanTable(ctx, db, o.Source, segments, false, limit, fn)
	}
	err = scan(func(item map[string]types.AttributeValue) error {
		mu.Lock()
		defer mu.Unlock()
		if o.Sample > 0 && res.Scanned >= int64(o.Sample) {
			res.Sampled = true
			return errStop
		}
		res.Scanned++
		res.ScannedBytes += int64(ddbjson.ItemSize(item))
		rt := o.Routes.Find(item)
		if rt == nil {
			res.Unmatched++
			if len(res.UnmatchedSample) < 10 {
				k, _ := tablediff.EncodeKey(item, o.Routes.SourceKey)
				res.UnmatchedSample = append(res.UnmatchedSample, string(k))
			}
			return nil
		}
		if _, err := rt.Transform(item); err != nil {
			res.Invalid++
			k, _ := tablediff.EncodeKey(item, o.Routes.SourceKey)
			res.InvalidSample = appendSample(res.InvalidSample, fmt.Sprintf("%s: %v", k, err))
			return nil
		}
		counts[rt.Table]++
		return nil
	})
	if err != nil {
		return nil, err
	}
	names := map[string][]string{}
	for _, rt := range o.Routes.Routes {
		names[rt.Table] = append(names[rt.Table], rt.Name)
	}
	for _, t := range o.Routes.Tables() {
		res.Tables = append(res.Tables, TableCount{Table: t, Routes: names[t], Items: counts[t]})
	}
	if pf == nil || !pf.Creates {
		res.Destinations, err = CheckDestinations(ctx, db, src, o.Routes, pf == nil || !pf.Written, pf == nil)
		if err != nil {
			return nil, err
		}
	}
	res.Problems = append(res.Problems, Problems(res.Destinations)...)
	if res.Unmatched > 0 {
		msg := "items match no route (counts and samples above): add rules, or pass --allow-unmatched to backfill to leave them behind"
		if o.AllowUnmatched {
			res.Warnings = append(res.Warnings, msg)
		} else {
			res.Problems = append(res.Problems, msg)
		}
	}
	if res.Invalid > 0 {
		msg := "items cannot be transformed by their route (a rename onto an attribute they already have; counts and samples above): fix the renames, or pass --allow-untransformable to backfill to leave them behind"
		if o.AllowUntransformable {
			res.Warnings = append(res.Warnings, msg)
		} else {
			res.Problems = append(res.Problems, msg)
		}
	}
	for _, d := range res.Destinations {
		if len(d.Failing) > 0 {
			res.Warnings = append(res.Warnings, d.Table+" fails guideline rules "+strings.Join(d.Failing, ", ")+": see `dynops check --table "+d.Table+"`")
		}
	}
	sort.Strings(res.Warnings)
	res.Ready = len(res.Problems) == 0
	return res, nil
}
