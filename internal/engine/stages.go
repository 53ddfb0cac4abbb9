package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// CancelTimeout bounds the cancellation of a run's jobs after Ctrl-C.
const CancelTimeout = 30 * time.Second

// RunStages submits the stages at once, each after the one before (as an
// AWS Batch dependency would chain them), and follows them in order;
// progress gets each status. When a stage fails, or ctx ends (Ctrl-C), every
// submitted job is cancelled before RunStages returns.
func RunStages(ctx context.Context, e Engine, stages []Stage, every time.Duration, progress func(stage Stage, st Status)) error {
	var jobs []Job
	cancelAll := func(reason string) error {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CancelTimeout)
		defer cancel()
		var errs []error
		for _, j := range jobs {
			if err := e.Cancel(cctx, j, reason); err != nil {
				errs = append(errs, fmt.Errorf("cancelling %s job %s: %w", e.Name(), j.ID(), err))
			}
		}
		return errors.Join(errs...)
	}
	var after Job
	for _, s := range stages {
		j, err := e.Submit(ctx, s, after)
		if err != nil {
			return errors.Join(fmt.Errorf("submitting stage %s to %s: %w", s.Name, e.Name(), err), cancelAll("submit failed"))
		}
		jobs = append(jobs, j)
		after = j
	}
	for i, s := range stages {
		err := Wait(ctx, e, jobs[i], every, func(st Status) {
			if progress != nil {
				progress(s, st)
			}
		})
		if err != nil {
			reason := "stage " + s.Name + " failed"
			if ctx.Err() != nil {
				reason = "interrupted"
			}
			return errors.Join(fmt.Errorf("stage %s: %w", s.Name, err), cancelAll(reason))
		}
	}
	return nil
}
