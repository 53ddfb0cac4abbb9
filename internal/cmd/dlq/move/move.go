// Package move implements `dynops dlq move`.
package move

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/dlq/dlqcmd"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/redrive"
)

// Options of `dynops dlq move`.
type Options struct {
	dlqcmd.Target
	ToQueue           string
	Max               int
	VisibilityTimeout time.Duration
}

// NewCmdMove returns `dynops dlq move`. runF replaces the run function in tests of flag parsing.
func NewCmdMove(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "move --queue URL [--to-queue URL] [--yes]",
		Short: "Move the messages of a plain SQS DLQ back to a queue",
		Long: `Move is for DLQs of SQS consumers, whose messages are the messages themselves
(for the on-failure records of stream consumers, use redrive).

It starts an SQS message move task (StartMessageMoveTask) where the service has
one, to --to-queue or, without it, to each message's original source queue, and
follows it to the end. Where the service has none (or with --max), dynops moves
each message itself: receive, send to --to-queue, and delete from the DLQ only
after the send succeeded. A message is never lost; one interrupted between send
and delete is in both queues. Without --yes it is a dry run that says which way
it would move how many messages.

Done means the DLQ holds no message the run did not move or keep: visible, in
flight (a receive whose answer was lost, another consumer) or delayed. The run
waits for messages in flight to come back (up to --wait-timeout, by default the
longest visibility timeout and delay plus 30 s) and moves them; a message sent
whose delete failed is deleted when it comes back. If some are still out when
the wait ends, it says how many and exits 1; a re-run moves them.`,
		Example: `  dynops dlq move --queue URL --to-queue URL2            # dry run
  dynops dlq move --queue URL --to-queue URL2 --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.Queue == "":
				return factory.UsageErrorf("move needs --queue URL (the DLQ's queue URL)")
			case opts.ToQueue == opts.Queue:
				return factory.UsageErrorf("--to-queue is the DLQ itself: pass the queue to move to")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	opts.AddFlags(fl)
	fl.StringVar(&opts.ToQueue, "to-queue", "", "queue URL to move to (default: each message's source queue; needs a message move task)")
	fl.IntVar(&opts.Max, "max", 0, "move at most N messages (0: all; N > 0 moves with receive/send/delete)")
	flagcheck.Range(fl, "max", "0", "", "0: all")
	fl.DurationVar(&opts.VisibilityTimeout, "visibility-timeout", 60*time.Second, "how long a message being moved stays hidden")
	flagcheck.Range(fl, "visibility-timeout", "10s", "12h", "SQS takes up to 12 h; under 10 s a message reappears while this run still handles it")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "a message move task goes on in SQS; messages being copied are in the source or both queues (at least once); run the move again")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "queue", "to-queue")
	return cmd
}

// destinations are the queues the messages go to: --to-queue, or else the
// queues that use the DLQ (ListDeadLetterSourceQueues), each to be decided by
// the protection rule. When they cannot be listed nothing is moved.
func destinations(ctx context.Context, client *sqs.Client, opts *Options) ([]protect.Target, error) {
	if opts.ToQueue != "" {
		return []protect.Target{protect.ReadQueue(ctx, client, opts.ToQueue)}, nil
	}
	var out []protect.Target
	p := sqs.NewListDeadLetterSourceQueuesPaginator(client, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &opts.Queue})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the source queues of %s (ListDeadLetterSourceQueues), to check whether they are protected: %w; pass --to-queue URL; nothing was changed", opts.Queue, err)
		}
		for _, u := range page.QueueUrls {
			out = append(out, protect.ReadQueue(ctx, client, u))
		}
	}
	return out, nil
}

// Run moves the messages and prints the outcome.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWSForQueue(ctx, opts.Queue)
	if err != nil {
		return err
	}
	client := clients.SQS()
	dests, err := destinations(ctx, client, opts)
	if err != nil {
		return err
	}
	g, err := opts.Apply(ctx, f, client, dests...)
	if err != nil {
		return err
	}
	apply := !g.DryRun()
	d, err := redrive.ReadDepth(ctx, client, opts.Queue)
	if err != nil {
		return err
	}
	depth := d.Upto(opts.Max)
	bar := f.IOStreams.StartProgress("move "+opts.Name()+": messages", int64(depth))
	rep, err := redrive.Move(ctx, client, redrive.MoveOptions{
		Source: redrive.Queue{Client: client, URL: opts.Queue, VisibilityTimeout: opts.VisibilityTimeout},
		Dest:   opts.ToQueue, Apply: apply, Max: opts.Max, Act: f.Audit.Act,
		Progress: func(moved int) { bar.Set(int64(moved)) },
		Waiting:  dlqcmd.Waiting(bar),
	})
	bar.Done()
	f.Audit.Counts(map[string]int64{"moved": int64(rep.Moved), "kept": int64(rep.Kept), "visible_at_start": int64(rep.Visible), "remaining": int64(rep.Remaining)})
	if rep.FallbackReason != "" {
		f.IOStreams.Infof("note: %s: moving with receive/send/delete\n", rep.FallbackReason)
	}
	if err != nil {
		if rep.Moved > 0 || rep.Kept > 0 {
			f.IOStreams.Infof("moved %d message(s) from %s to %s, %d kept, before stopping\n", rep.Moved, rep.Source, rep.Dest, rep.Kept)
		}
		return err
	}
	if err := printReport(f, rep); err != nil || apply {
		return err
	}
	g.PrintDryRun("move them")
	return nil
}

// printReport shows what the move did, as the service reported it: the
// lines below, or the JSON document.
func printReport(f *factory.Factory, rep redrive.MoveReport) error {
	return view.Results(f, func(rep redrive.MoveReport) error { return showMove(f.IOStreams.Out, rep) }).Show(rep)
}

// showMove is the human view; a run with errors exits 1.
func showMove(out io.Writer, rep redrive.MoveReport) error {
	dest := rep.Dest
	if dest == "" {
		dest = "each message's source queue"
	}
	if rep.DryRun {
		fmt.Fprintln(out, guard.DryRunHeader(fmt.Sprintf("move the %d visible message(s) of %s to %s by %s", rep.Visible, rep.Source, dest, rep.Method)))
		return nil
	}
	fmt.Fprintf(out, "moved %d message(s) from %s to %s by %s", rep.Moved, rep.Source, dest, rep.Method)
	if rep.TaskHandle != "" {
		fmt.Fprintf(out, " (task %s: %s)", rep.TaskHandle, rep.TaskStatus)
	}
	fmt.Fprintf(out, "; %d kept\n", rep.Kept)
	for _, e := range rep.Errors {
		fmt.Fprintln(out, "  "+e)
	}
	if len(rep.Errors) > 0 {
		return factory.ExitError{Code: 1}
	}
	return nil
}
