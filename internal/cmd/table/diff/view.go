package diff

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/tablediff"
)

// report is the JSON output: the diff and the read budgets.
type report struct {
	*tablediff.Report
	ReadBudgets []capacity.Use `json:"read_budgets"`
}

// diffView is what table diff shows: the plan before the scans (each
// table's budget and estimate; a sharded run's plan) and the report.
type diffView interface {
	Budgets(budgets []capacity.Use, shards int)
	ShardPlan(where string, p *tablediff.Plan)
	Report(r report) error
}

func newView(f *factory.Factory) diffView {
	return view.Pick[diffView](f, humanView{f: f}, jsonView{f: f})
}

// jsonView shows the report as the run's JSON document, nothing else.
type jsonView struct{ f *factory.Factory }

func (jsonView) Budgets([]capacity.Use, int)       {}
func (jsonView) ShardPlan(string, *tablediff.Plan) {}
func (v jsonView) Report(r report) error           { return v.f.PrintResult(r) }

// humanView prints the plan on stderr and the report on stdout.
type humanView struct{ f *factory.Factory }

func (v humanView) Budgets(budgets []capacity.Use, shards int) {
	errOut := v.f.IOStreams.ErrOut
	for _, u := range budgets {
		fmt.Fprintf(errOut, "%s\n%s\n", u.Budget, u.Estimate)
		if note := slowAtDefault(u); note != "" {
			fmt.Fprintln(errOut, note)
		}
		if share, err := u.Budget.Split(shards); err == nil && shards > 1 && share.Bucket != nil {
			fmt.Fprintf(errOut, "each shard's part: %s\n", share)
		}
	}
}

func (v humanView) ShardPlan(where string, p *tablediff.Plan) {
	fmt.Fprintf(v.f.IOStreams.ErrOut, "plan: %s (%d shards, %d buckets)\n%s\n", where, p.Shards, p.Buckets, p.Estimate)
}

func (v humanView) Report(r report) error {
	if err := printReport(v.f, r.Report); err != nil {
		return err
	}
	for _, bu := range r.ReadBudgets {
		if bu.Used != nil {
			fmt.Fprintf(v.f.IOStreams.Out, "read capacity on %s: %.1f units used, %.1f units/s on average, budget %.1f units/s (as DynamoDB reported)\n",
				bu.Table, bu.Used.Used, bu.Used.PerSecond, bu.Used.Budget)
		}
	}
	return nil
}

// slowAtDefault says when the default budget (a share of a provisioned
// table's capacity, kept for the application) holds the diff to more than a
// minute, and how to give it more: "" otherwise.
func slowAtDefault(u capacity.Use) string {
	if u.Provisioned == 0 || u.Estimate == nil || u.Estimate.Seconds < 60 {
		return ""
	}
	return fmt.Sprintf("the default budget holds this diff to about %s of reads on %s: give --max-read-units N to go faster (up to the table's %d provisioned read units, which its application shares: a diff at all of them throttles it)",
		(time.Duration(u.Estimate.Seconds) * time.Second).Round(time.Second), u.Table, u.Provisioned)
}

func printReport(f *factory.Factory, rep *tablediff.Report) error {
	out := f.IOStreams.Out
	fmt.Fprintf(out, "%s (source, %d items) vs %s (target, %d items); %d segments, %d buckets, %.0f items/s\n\n",
		rep.Source, rep.SourceItems, rep.Target, rep.TargetItems, rep.Segments, rep.Buckets, rep.ItemsPerSec)
	rows := [][]string{
		{"same", fmt.Sprint(rep.Same), ""},
		{"only in source", fmt.Sprint(rep.OnlyInSource), sample(rep.Sample.OnlyInSource, rep.OnlyInSource)},
		{"only in target", fmt.Sprint(rep.OnlyInTarget), sample(rep.Sample.OnlyInTarget, rep.OnlyInTarget)},
		{"changed", fmt.Sprint(rep.Changed), sample(rep.Sample.Changed, rep.Changed)},
	}
	if err := f.IOStreams.Table([]string{"KIND", "ITEMS", "SAMPLE KEYS"}, rows); err != nil {
		return err
	}
	if rep.Differences() == 0 {
		fmt.Fprintf(out, "\nThe tables hold the same items.\n")
		return nil
	}
	fmt.Fprintf(out, "\n%d difference(s).", rep.Differences())
	if rep.KeysOut != "" {
		fmt.Fprintf(out, " All keys: %s\nRepair the target from the source (dry run first):\n  dynops pitr repair --from %s --to %s --keys %s\n",
			rep.KeysOut, rep.Source, rep.Target, rep.KeysOut)
	} else {
		fmt.Fprintf(out, " Add --keys-out FILE to write every key.\n")
	}
	return nil
}

func sample(keys []json.RawMessage, total int64) string {
	s := ""
	for i, k := range keys {
		if i == 3 {
			break
		}
		if i > 0 {
			s += " "
		}
		s += string(k)
	}
	if total > 3 {
		s += fmt.Sprintf(" ... (+%d)", total-min(total, 3))
	}
	return s
}
