// Package status implements `dynops dr status`: a global table in every
// region, and whether it is ready to fail over.
package status

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/dr/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/internal/iostreams"
)

// Options of `dynops dr status`.
type Options struct {
	Target shared.TargetFlags
}

// Report is what --output json prints (the readiness run reads the same).
type Report = failover.Status

// NewCmdStatus returns `dynops dr status`. runF replaces the run function in tests of flag parsing.
func NewCmdStatus(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "status --table NAME",
		Short: "Show a global table in every region and whether it is ready to fail over",
		Long: `Status reads, in every region of the table: the table and replica status,
deletion protection (the provider's replica block cannot set it: check it here),
ReplicationLatency into each other region (max and average over --latency-window,
from CloudWatch), the active-region pointer and the write fence. It ends with a
verdict per region: ready to fail over there, or why not.

Exit status 1 when no region is ready to take writes over.`,
		Example: `  dynops dr status --table prod-hoge-session
  dynops dr status --table local-hoge-session --regions eu-west-1,eu-central-1 --allow-unreplicated -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Target.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	shared.AddTargetFlags(cmd, &opts.Target)
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd, "table")
	return cmd
}

// Run prints the status; ExitError{1} when no region is ready.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	target, runner, err := shared.Resolve(ctx, f, &opts.Target)
	if err != nil {
		return err
	}
	f.IOStreams.Progress("reading %s in %s", target.Table, strings.Join(target.Regions, ", "))
	rep := failover.ReadStatus(ctx, runner.Clients, target, opts.Target.Rules(), f.Now())
	f.IOStreams.Done()
	if err := view.Results(f, func(r Report) error { return printReport(f.IOStreams, r) }).Show(rep); err != nil {
		return err
	}
	if !rep.Ready {
		return factory.ExitError{Code: 1}
	}
	return nil
}

func printReport(ios *iostreams.IOStreams, rep Report) error {
	s := rep.State
	fmt.Fprintf(ios.Out, "%s: pointer %s, active region %s\n\n", s.Target.Table, s.Target.Pointer, orDash(s.Active))
	if h := s.HalfDone(); h != "" {
		fmt.Fprintf(ios.Out, "%s\n\n", ios.Colour(iostreams.Red, h))
	}
	if m := s.MRSCNote(); m != "" {
		fmt.Fprintf(ios.Out, "%s\n\n", m)
	}
	var rows, lat [][]string
	for _, r := range s.Regions {
		table := r.TableStatus
		if !r.Answers || !r.TableExists {
			table = ios.Colour(iostreams.Red, r.Error)
		}
		pointer := r.Pointer
		if r.PointerError != "" {
			pointer = ios.Colour(iostreams.Yellow, r.PointerError)
		}
		fence := "no"
		switch {
		case r.Fenced:
			fence = ios.Colour(iostreams.Yellow, "FENCED (by content: "+r.FenceDetail+")")
		case r.FenceDetail != "" && strings.Contains(r.FenceDetail, failover.FenceSid):
			fence = ios.Colour(iostreams.Red, "NOT fenced: "+r.FenceDetail)
		}
		if r.PolicyError != "" {
			fence = r.PolicyError
		}
		rows = append(rows, []string{r.Region, table, replicas(r.Replicas), onOff(r.DeletionProtection), pointer, fence})
		for _, l := range r.Latency {
			row := []string{r.Region, l.Receiving, "-", "-", fmt.Sprint(l.Datapoints)}
			if l.Datapoints > 0 {
				row[2], row[3] = l.Max.Round(time.Millisecond).String(), l.Avg.Round(time.Millisecond).String()
			}
			if l.Error != "" {
				row[4] = l.Error
			}
			lat = append(lat, row)
		}
	}
	if err := ios.Table([]string{"REGION", "TABLE", "REPLICAS", "DELETION-PROTECTION", "POINTER", "FENCE"}, rows); err != nil {
		return err
	}
	if len(lat) > 0 {
		fmt.Fprintln(ios.Out)
		if err := ios.Table([]string{"SOURCE", "RECEIVING", "LATENCY-MAX", "LATENCY-AVG", "DATAPOINTS"}, lat); err != nil {
			return err
		}
	}
	fmt.Fprintln(ios.Out)
	for _, v := range rep.Verdicts {
		if v.Ready {
			fmt.Fprintf(ios.Out, "%s: %s\n", ios.Colour(iostreams.Green, "READY to fail over to "+v.To), warnings(v.Checks))
			continue
		}
		fmt.Fprintf(ios.Out, "%s:\n", ios.Colour(iostreams.Red, "NOT READY to fail over to "+v.To))
		for _, w := range v.Why {
			fmt.Fprintf(ios.Out, "  - %s\n", w)
		}
	}
	return nil
}

func warnings(checks []failover.Check) string {
	var w []string
	for _, c := range checks {
		if c.Status == failover.CheckWarn || c.Status == failover.CheckSkipped {
			w = append(w, c.Name+": "+c.Detail)
		}
	}
	if len(w) == 0 {
		return "every check passes"
	}
	return "with notes: " + strings.Join(w, "; ")
}

func replicas(m map[string]string) string {
	if len(m) == 0 {
		return "none (not a global table)"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "OFF (DDB-PROT-01)"
}

func orDash(s string) string {
	if s == "" {
		return "- (pointers disagree or unreadable)"
	}
	return s
}
