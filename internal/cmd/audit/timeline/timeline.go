// Package timeline is `dynops audit timeline`: an incident's runs as a
// postmortem-ready timeline.
package timeline

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/audit/log"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
)

// Options are the flags of `dynops audit timeline`.
type Options struct {
	Incident string
	Format   string
}

// NewCmdTimeline returns `dynops audit timeline`.
func NewCmdTimeline(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:     "timeline --incident ID",
		Short:   "Render an incident's runs as a timeline (markdown): time, who, command, result, what changed",
		Example: `  dynops audit timeline --incident INC-1234 --format markdown > timeline.md`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Incident = f.Flags.Incident // the global --incident (or DYNOPS_INCIDENT) selects
			if opts.Incident == "" {
				return factory.UsageErrorf("audit timeline needs --incident ID (the id given to --incident or DYNOPS_INCIDENT; `dynops audit log` lists them)")
			}
			if opts.Format != "markdown" {
				return factory.UsageErrorf("--format %q: use markdown (or -o json for the runs)", opts.Format)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "markdown", "markdown")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SkipAudit(cmd)
	return cmd
}

// Run renders the timeline.
func Run(_ context.Context, f *factory.Factory, opts *Options) error {
	runs, err := log.Load(f, opts.Incident, 0)
	if err != nil {
		return err
	}
	return view.Results(f, func(tl timeline) error {
		return audit.WriteTimeline(f.IOStreams.Out, tl.Incident, tl.Runs)
	}).Show(timeline{opts.Incident, runs, audit.Steps(runs)})
}

// timeline is the command's result: the incident's runs and its runbook steps.
type timeline struct {
	Incident string             `json:"incident"`
	Runs     []audit.Run        `json:"runs"`
	Steps    []audit.StepStatus `json:"steps"`
}
