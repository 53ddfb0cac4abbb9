// Package inspect implements `dynops dlq inspect`.
package inspect

import (
	"context"
	"fmt"
	"time"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/exitcode"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/redrive"
)

// Options of `dynops dlq inspect`.
type Options struct {
	Queue             string
	Max               int
	Critical          time.Duration
	VisibilityTimeout time.Duration
	ShowBody          bool
}

// Report is what --output json prints.
type Report struct {
	Queue    string          `json:"queue"`
	Messages []redrive.Entry `json:"messages"`
	Counts   map[string]int  `json:"counts"`
}

// NewCmdInspect returns `dynops dlq inspect`. runF replaces the run function in tests of flag parsing.
func NewCmdInspect(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "inspect --queue URL",
		Short: "List the failed stream batches in a DLQ without consuming them",
		Long: `Inspect reads the DLQ's messages without consuming them and decodes each
on-failure record: table, shard, sequence range, batch size, why Lambda gave up
(condition), the function, and the time left before the records fall out of the
24 h stream retention: "critical" under --critical, "lost" past it.

SQS has no peek: inspect receives each message with a short visibility
timeout (--visibility-timeout: other consumers do not see it meanwhile), never
deletes, and sets the visibility back to 0 as soon as the listing is done. If
inspect is killed, the messages come back by themselves when the timeout ends.
Each receive counts towards the queue's own maxReceiveCount, if it has one.

Each record shows every field Lambda writes: the request (requestId,
approximateInvokeCount, condition, function), the response (statusCode,
executedVersion, functionError), the record version and the batch (shard,
sequence range, size, approximateArrivalOfFirstRecord and ...OfLastRecord).
Messages that are not on-failure records are listed as malformed, with their
body; --show-body prints the body of every message.`,
		Example: `  dynops dlq inspect --queue https://sqs.eu-west-1.amazonaws.com/123456789012/prod-hoge-user-dlq
  dynops dlq inspect --queue URL --critical 6h -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Queue == "" {
				return factory.UsageErrorf("inspect needs --queue URL (the DLQ's queue URL)")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Queue, "queue", "q", "", "URL of the DLQ")
	cmd.Flags().IntVar(&opts.Max, "max", 0, "list at most N messages (0: all)")
	flagcheck.Range(cmd.Flags(), "max", "0", "", "0: all")
	cmd.Flags().DurationVar(&opts.Critical, "critical", 4*time.Hour, "a batch with less time left than this before it leaves the stream is critical")
	flagcheck.Range(cmd.Flags(), "critical", "1s", "24h", "a stream keeps records 24 h")
	cmd.Flags().BoolVar(&opts.ShowBody, "show-body", false, "print every message's body (valid records too)")
	cmd.Flags().DurationVar(&opts.VisibilityTimeout, "visibility-timeout", 30*time.Second, "how long a listed message stays hidden if inspect is killed")
	flagcheck.Range(cmd.Flags(), "visibility-timeout", "10s", "12h", "SQS takes up to 12 h; under 10 s a message reappears while this run still handles it")
	cmdfacts.SetInterrupt(cmd, "listed messages become visible again after --visibility-timeout; nothing was deleted")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd, "queue")
	return cmd
}

// Run lists the DLQ and prints it.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWSForQueue(ctx, opts.Queue)
	if err != nil {
		return err
	}
	q := redrive.Queue{Client: clients.SQS(), URL: opts.Queue, VisibilityTimeout: opts.VisibilityTimeout}
	f.IOStreams.Progress("reading %s", opts.Queue)
	entries, err := redrive.Inspect(ctx, q, opts.Max, f.Now(), opts.Critical)
	f.IOStreams.Done()
	if err != nil {
		return err
	}
	if opts.ShowBody {
		redrive.ShowBody(entries)
	}
	rep := Report{Queue: opts.Queue, Messages: entries, Counts: map[string]int{}}
	for _, e := range entries {
		rep.Counts[e.State]++
	}
	counts := map[string]int64{"messages": int64(len(entries))}
	for k, v := range rep.Counts {
		counts[k] = int64(v)
	}
	f.Audit.Counts(counts)
	if err := show(f, rep); err != nil {
		return err
	}
	if code := ExitCode(rep.Counts); code != exitcode.OK {
		return factory.ExitError{Code: code}
	}
	return nil
}

// ExitCode is inspect's exit status for the message counts by state, so
// scripts and pagers can act: exitcode.Lost (4) when a message's records
// already left the stream or a message cannot be read, exitcode.Critical (3)
// when one has less than --critical left, 0 otherwise.
func ExitCode(counts map[string]int) int {
	switch {
	case counts[redrive.StateLost] > 0 || counts[redrive.StateMalformed] > 0:
		return exitcode.Lost
	case counts[redrive.StateCritical] > 0:
		return exitcode.Critical
	}
	return exitcode.OK
}

// show shows the report: the table, or the JSON document.
func show(f *factory.Factory, rep Report) error {
	return view.Results(f, func(rep Report) error { return printTable(f.IOStreams, rep) }).Show(rep)
}

func printTable(ios *iostreams.IOStreams, rep Report) error {
	var rows [][]string
	var bodies []string
	for _, e := range rep.Messages {
		state := e.State
		switch e.State {
		case redrive.StateLost, redrive.StateMalformed:
			state = ios.Colour(iostreams.Red, state)
		case redrive.StateCritical:
			state = ios.Colour(iostreams.Red, "CRITICAL")
		default:
			state = ios.Colour(iostreams.Green, state)
		}
		if e.Body != "" && e.State != redrive.StateMalformed {
			bodies = append(bodies, e.MessageID+": "+e.Body)
		}
		if e.State == redrive.StateMalformed {
			rows = append(rows, []string{e.MessageID, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", state + ": " + e.Problem})
			continue
		}
		left := "gone " + (-*e.TimeLeft).Round(time.Minute).String() + " ago"
		if *e.TimeLeft > 0 {
			left = e.TimeLeft.Round(time.Minute).String()
		}
		last := "-"
		if e.LastArrival != nil {
			last = e.LastArrival.UTC().Format(time.RFC3339)
		}
		response := fmt.Sprintf("%d %s", e.StatusCode, e.ExecutedVersion)
		if e.FunctionError != "" {
			response += " " + e.FunctionError
		}
		rows = append(rows, []string{e.MessageID, e.Table, e.Shard, e.Start + ".." + e.End, fmt.Sprint(e.BatchSize),
			e.Condition, e.Function, e.RequestID, fmt.Sprint(e.InvokeCount), response, e.Version, last + " / " + left, state})
	}
	if err := ios.Table([]string{"MESSAGE", "TABLE", "SHARD", "SEQUENCE RANGE", "BATCH", "CONDITION", "FUNCTION",
		"REQUEST ID", "INVOKES", "RESPONSE", "VERSION", "LAST RECORD / TIME LEFT", "STATE"}, rows); err != nil {
		return err
	}
	if len(bodies) > 0 {
		fmt.Fprintln(ios.Out, "\nbodies:")
		for _, b := range bodies {
			fmt.Fprintln(ios.Out, "  "+b)
		}
	}
	c := rep.Counts
	fmt.Fprintf(ios.Out, "\n%d message(s) in %s: %d ok, %d critical, %d lost, %d malformed; nothing was consumed\n",
		len(rep.Messages), rep.Queue, c[redrive.StateOK], c[redrive.StateCritical], c[redrive.StateLost], c[redrive.StateMalformed])
	return nil
}
