package migrate

import (
	"context"
	"errors"
	"fmt"
)

// RefusedError is a writing step refused by the plan's checks before its
// first write: nothing was written (a usage error at the command line,
// exit 2).
// Cause, when set, is the structured finding (an *UnmatchedError, an
// *UntransformableError) behind the problems.
type RefusedError struct {
	*InputError
	Cause error
}

func (e *RefusedError) Unwrap() []error { return []error{e.InputError, e.Cause} }

// IsRefused reports whether err is a RefusedError.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

// PreflightOptions say what a writing step is about to do, so that
// Preflight runs the checks of `migrate plan` that apply to it.
type PreflightOptions struct {
	Input
	// Written says the destinations may already hold the migration's
	// items (a resumed backfill, the catch-up, the cutover): they need not
	// be empty.
	Written bool
	// Items reads the source's items as plan does (unmatched and
	// untransformable ones are problems unless allowed). The catch-up
	// writes stream records, not the items of a Scan: CatchUpPass checks
	// each pass's records before it applies any. A backfill that reads an
	// export instead of scanning leaves it false (the export is there to
	// spare the source's reads).
	Items bool
	// Creates says ImportTable creates the destinations: they are not
	// checked here (the backfill refuses one that exists).
	Creates              bool
	AllowUnmatched       bool
	AllowUntransformable bool
	Segments             int
}

// Preflight is the validation of `dynops migrate plan`, run by every
// migrate step that writes before its first write: what plan would list
// as a problem refuses the step (a *RefusedError naming every problem),
// and nothing is written.
func Preflight(ctx context.Context, db DynamoDB, o PreflightOptions) error {
	res, err := Plan(ctx, db, PlanOptions{Input: o.Input, Segments: o.Segments, AllowUnmatched: o.AllowUnmatched,
		AllowUntransformable: o.AllowUntransformable, preflight: &o})
	if IsInputError(err) {
		return &RefusedError{InputError: asInput(err)}
	}
	if err != nil {
		return err
	}
	if res.Ready {
		return nil
	}
	problems := append([]string{}, res.Problems...)
	problems = append(problems, fmt.Sprintf("`dynops migrate plan --source %s --routes %s` lists the same problems with counts and samples", o.Source, o.Routes.Path))
	return &RefusedError{InputError: &InputError{problems}}
}

func asInput(err error) *InputError {
	var ie *InputError
	errors.As(err, &ie)
	return ie
}
