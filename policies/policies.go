// Package policies evaluates the guard rules of docs/guideline.md (the
// Rego files beside this one) over `terraform show -json` plans, with OPA
// embedded. The same files work with conftest:
//
//	conftest test --policy policies --data policies/data.json --namespace dynops.plan plan.json
package policies

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

//go:embed *.rego data.json
var files embed.FS

// Query is the set of deny messages, each starting with its rule ID.
const Query = "data.dynops.plan.deny"

// Evaluator holds the prepared rules; build it once with New.
type Evaluator struct {
	query rego.PreparedEvalQuery
}

// New compiles the rules and loads data.json.
func New(ctx context.Context) (*Evaluator, error) {
	opts := []func(*rego.Rego){rego.Query(Query)}
	mods, err := fs.Glob(files, "*.rego")
	if err != nil {
		return nil, err
	}
	for _, m := range mods {
		b, err := files.ReadFile(m)
		if err != nil {
			return nil, err
		}
		opts = append(opts, rego.Module(m, string(b)))
	}
	var data map[string]any
	b, err := files.ReadFile("data.json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &data); err != nil {
		return nil, fmt.Errorf("policies: data.json: %w", err)
	}
	opts = append(opts, rego.Store(inmem.NewFromObject(data)))
	q, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("policies: compiling the rules: %w", err)
	}
	return &Evaluator{query: q}, nil
}

// Deny evaluates a `terraform show -json` plan and returns the sorted deny messages.
func (e *Evaluator) Deny(ctx context.Context, planJSON []byte) ([]string, error) {
	var input any
	if err := json.Unmarshal(planJSON, &input); err != nil {
		return nil, fmt.Errorf("policies: plan is not JSON: %w", err)
	}
	rs, err := e.query.Eval(ctx, rego.EvalInput(input))
	if err != nil {
		return nil, fmt.Errorf("policies: evaluating: %w", err)
	}
	var msgs []string
	for _, r := range rs {
		for _, expr := range r.Expressions {
			set, ok := expr.Value.([]any)
			if !ok {
				return nil, fmt.Errorf("policies: %s is %T, not a set of messages", Query, expr.Value)
			}
			for _, m := range set {
				s, ok := m.(string)
				if !ok {
					return nil, fmt.Errorf("policies: deny message %v is not a string", m)
				}
				msgs = append(msgs, s)
			}
		}
	}
	sort.Strings(msgs)
	return msgs, nil
}
