package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/failover"
)

// DefaultPointer is the SSM parameter an application reads to pick its tables.
func DefaultPointer(source string) string { return "/dynops/migrate/" + source + "/active" }

// Pointer values.
const (
	PointerMulti  = "multi"
	PointerSingle = "single"
)

// CutoverOptions of a cutover.
type CutoverOptions struct {
	CatchUp        CatchUpOptions
	Verify         VerifyOptions
	Pointer        string // SSM parameter (default DefaultPointer)
	Value          string // what the pointer says after the cutover (default "multi")
	BreakGlassRole string // exempt from the fence
	// Settle is how long to wait after the fence before draining, so writes
	// accepted before it reach the stream (default 2 s).
	Settle time.Duration
	// DrainTimeout bounds the drain (default 5 min).
	DrainTimeout time.Duration
	// Act records each change made (the audit log).
	Act func(what, target string, detail any)
}

// Step is one step of a cutover or rollback, as done.
type Step struct {
	Name   string `json:"name"`
	Status string `json:"status"` // done, skipped, failed
	Detail string `json:"detail"`
}

// CutoverResult is what a cutover did.
type CutoverResult struct {
	Steps  []Step        `json:"steps"`
	Drain  []*PassResult `json:"drain"`
	Verify *VerifyResult `json:"verify,omitempty"`
}

// CutoverSteps are the steps of a cutover, for a dry run.
func CutoverSteps(source, pointer, value string) []Step {
	return []Step{
		{Name: "fence", Status: "planned", Detail: fmt.Sprintf("deny item writes on %s with its resource policy (Sid %s)", source, failover.MigrateFenceSid)},
		{Name: "drain", Status: "planned", Detail: "apply the stream until a pass reads no new record"},
		{Name: "verify", Status: "planned", Detail: "compare the routed source with the destinations: 0 differences or stop"},
		{Name: "flip-pointer", Status: "planned", Detail: fmt.Sprintf("set %s to %q", pointer, value)},
	}
}

// Cutover fences the source, drains the stream, verifies and flips the
// pointer. A failing step stops it; the source stays fenced and the error
// says how to roll back.
func Cutover(ctx context.Context, c Clients, o CutoverOptions, st *State) (*CutoverResult, error) {
	in := o.CatchUp.Input
	if o.Pointer == "" {
		o.Pointer = DefaultPointer(in.Source)
	}
	if o.Value == "" {
		o.Value = PointerMulti
	}
	if o.Settle == 0 {
		o.Settle = 2 * time.Second
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = 5 * time.Minute
	}
	if o.Act == nil {
		o.Act = func(string, string, any) {}
	}
	o.CatchUp.defaults()
	res := &CutoverResult{}
	if !st.BackfillDone() {
		return nil, &InputError{[]string{fmt.Sprintf("the backfill of %s has not finished (state %s): finish it and run catch-up before the cutover", in.Source, st.Path())}}
	}
	src, err := ReadSource(ctx, c.DB, in.Source, in.Routes, true)
	if err != nil {
		return nil, err
	}
	before, err := readPointer(ctx, c.SSM, o.Pointer)
	if err != nil {
		return nil, err
	}
	fail := func(step string, err error) (*CutoverResult, error) {
		res.Steps = append(res.Steps, Step{Name: step, Status: "failed", Detail: err.Error()})
		return res, fmt.Errorf("cutover stopped at %s: %w. %s stays fenced and the pointer %s is unchanged; fix the cause and run cutover again, or undo with `dynops migrate rollback --source %s --routes %s --yes`",
			step, err, in.Source, o.Pointer, in.Source, in.Routes.Path)
	}

	policyBefore, err := failover.FenceTable(ctx, c.DB, src.ARN, o.BreakGlassRole)
	if err != nil {
		return fail("fence", err)
	}
	now := o.CatchUp.Now().UTC()
	o.Act(audit.ActFenceWrites, in.Source, map[string]string{"table_arn": src.ARN, "sid": failover.MigrateFenceSid})
	if err := st.Update(func(s *State) {
		if s.Cutover == nil || s.Cutover.FencedAt == nil {
			s.Cutover = &CutoverState{PolicyBefore: policyBefore}
		}
		s.Cutover.FencedAt, s.Cutover.RolledBackAt = &now, nil
	}); err != nil {
		return fail("fence", err)
	}
	res.Steps = append(res.Steps, Step{Name: "fence", Status: "done", Detail: fmt.Sprintf("fence on %s, read back", src.ARN)})

	select {
	case <-ctx.Done():
		return fail("drain", ctx.Err())
	case <-time.After(o.Settle):
	}
	deadline := time.Now().Add(o.DrainTimeout)
	for {
		p, err := CatchUpPass(ctx, c, o.CatchUp, st)
		if err != nil {
			return fail("drain", err)
		}
		res.Drain = append(res.Drain, p)
		if p.CaughtUp && p.Records-p.BeforeBackfill == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fail("drain", fmt.Errorf("the stream still had new records after %s: is something writing past the fence (break-glass role)?", o.DrainTimeout))
		}
	}
	var applied int64
	for _, p := range res.Drain {
		applied += p.Put + p.Deleted + p.MovedAway
	}
	o.Act(audit.ActDrainStream, in.Source, map[string]any{"passes": len(res.Drain), "applied": applied})
	res.Steps = append(res.Steps, Step{Name: "drain", Status: "done", Detail: fmt.Sprintf("%d pass(es), %d change(s) applied, lag 0", len(res.Drain), applied)})

	o.Verify.Input = in
	v, err := Verify(ctx, c.DB, o.Verify)
	if err != nil {
		return fail("verify", err)
	}
	res.Verify = v
	if d := v.Differences(); d > 0 {
		return fail("verify", fmt.Errorf("%d difference(s) between %s and the destinations (only in source %d, only in destinations %d, changed %d)",
			d, in.Source, v.OnlyInSource, v.OnlyInTarget, v.Changed))
	}
	res.Steps = append(res.Steps, Step{Name: "verify", Status: "done", Detail: fmt.Sprintf("%d item(s) compared, 0 differences", v.SourceItems)})

	if err := putPointer(ctx, c.SSM, o.Pointer, o.Value); err != nil {
		return fail("flip-pointer", err)
	}
	o.Act(audit.ActFlipPointer, o.Pointer, map[string]string{"from": before, "to": o.Value})
	cut := o.CatchUp.Now().UTC()
	if err := st.Update(func(s *State) {
		s.Cutover.Pointer, s.Cutover.PointerBefore, s.Cutover.PointerValue, s.Cutover.CutAt = o.Pointer, before, o.Value, &cut
	}); err != nil {
		return res, err
	}
	res.Steps = append(res.Steps, Step{Name: "flip-pointer", Status: "done", Detail: fmt.Sprintf("%s = %q (was %q), read back", o.Pointer, o.Value, before)})
	return res, nil
}

// RollbackOptions of a rollback.
type RollbackOptions struct {
	Source  string
	Pointer string // default: the cutover's, else DefaultPointer
	Value   string // default: the value before the cutover, else "single"
	Act     func(what, target string, detail any)
	Now     func() time.Time
}

// RollbackSteps are the steps of a rollback, for a dry run.
func RollbackSteps(source, pointer, value string) []Step {
	return []Step{
		{Name: "check-source", Status: "planned", Detail: fmt.Sprintf("%s still exists", source)},
		{Name: "unfence", Status: "planned", Detail: fmt.Sprintf("remove the write fence (Sid %s) from %s", failover.MigrateFenceSid, source)},
		{Name: "flip-pointer", Status: "planned", Detail: fmt.Sprintf("set %s back to %q", pointer, value)},
	}
}

// RollbackTarget returns the pointer and value a rollback sets.
func RollbackTarget(st *State, o RollbackOptions) (pointer, value string) {
	pointer, value = o.Pointer, o.Value
	if cs := st.Cutover; cs != nil {
		if pointer == "" {
			pointer = cs.Pointer
		}
		if value == "" {
			value = cs.PointerBefore
		}
	}
	if pointer == "" {
		pointer = DefaultPointer(o.Source)
	}
	if value == "" {
		value = PointerSingle
	}
	return pointer, value
}

// Rollback points the application back at the source while it still exists:
// it removes the fence, then flips the pointer back.
func Rollback(ctx context.Context, c Clients, o RollbackOptions, st *State) ([]Step, error) {
	if o.Act == nil {
		o.Act = func(string, string, any) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	pointer, value := RollbackTarget(st, o)
	var steps []Step
	d, err := c.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &o.Source})
	if isNotFound(err) {
		return nil, &InputError{[]string{fmt.Sprintf("source %s no longer exists: there is nothing to roll back to (restore it from a backup or PITR first)", o.Source)}}
	}
	if err != nil {
		return nil, fmt.Errorf("describing source %s: %w", o.Source, err)
	}
	steps = append(steps, Step{Name: "check-source", Status: "done", Detail: fmt.Sprintf("%s is %s", o.Source, d.Table.TableStatus)})
	had, err := failover.UnfenceTable(ctx, c.DB, aws.ToString(d.Table.TableArn))
	if err != nil {
		return steps, err
	}
	if had {
		o.Act(audit.ActUnfenceWrites, o.Source, map[string]string{"table_arn": aws.ToString(d.Table.TableArn)})
		steps = append(steps, Step{Name: "unfence", Status: "done", Detail: "fence removed, read back"})
	} else {
		steps = append(steps, Step{Name: "unfence", Status: "skipped", Detail: "no fence on the source"})
	}
	before, err := readPointer(ctx, c.SSM, pointer)
	if err != nil {
		return steps, err
	}
	if err := putPointer(ctx, c.SSM, pointer, value); err != nil {
		return steps, err
	}
	o.Act(audit.ActFlipPointer, pointer, map[string]string{"from": before, "to": value})
	steps = append(steps, Step{Name: "flip-pointer", Status: "done", Detail: fmt.Sprintf("%s = %q (was %q), read back", pointer, value, before)})
	now := o.Now().UTC()
	err = st.Update(func(s *State) {
		if s.Cutover == nil {
			s.Cutover = &CutoverState{}
		}
		s.Cutover.RolledBackAt = &now
	})
	return steps, err
}

func readPointer(ctx context.Context, c SSM, name string) (string, error) {
	out, err := c.GetParameter(ctx, &ssm.GetParameterInput{Name: &name})
	var nf *ssmtypes.ParameterNotFound
	if errors.As(err, &nf) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the pointer %s: %w", name, err)
	}
	return aws.ToString(out.Parameter.Value), nil
}

// putPointer sets the parameter and reads it back.
func putPointer(ctx context.Context, c SSM, name, value string) error {
	_, err := c.PutParameter(ctx, &ssm.PutParameterInput{Name: &name, Value: &value, Type: ssmtypes.ParameterTypeString, Overwrite: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("setting %s to %q: %w", name, value, err)
	}
	got, err := readPointer(ctx, c, name)
	if err != nil {
		return err
	}
	if got != value {
		return fmt.Errorf("%s read back %q, not %q", name, got, value)
	}
	return nil
}
