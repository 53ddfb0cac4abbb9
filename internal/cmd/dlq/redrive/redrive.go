// Package redrive implements `dynops dlq redrive`.
package redrive

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/dlq/dlqcmd"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/redrive"
)

// Options of `dynops dlq redrive`.
type Options struct {
	dlqcmd.Target
	Function          string
	ToQueue           string
	LambdaEndpointURL string
	Max               int
	Concurrency       int
	DiscardExpired    bool
	VisibilityTimeout time.Duration
}

// NewCmdRedrive returns `dynops dlq redrive`. runF replaces the run function in tests of flag parsing.
func NewCmdRedrive(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "redrive --queue URL [--function NAME|ARN | --to-queue URL] [--yes]",
		Short: "Replay failed stream batches from the stream to the consumer, then delete them from the DLQ",
		Long: `Redrive takes each on-failure record from the DLQ, re-reads its batch from the
shard (GetShardIterator AT_SEQUENCE_NUMBER, GetRecords up to the end sequence
number), rebuilds the event an event source mapping delivers, and invokes the
function synchronously: the record's own function, or --function. With
--to-queue it sends the event to that queue instead.

A message is deleted only after the delivery succeeded: no invocation error,
no FunctionError, no batchItemFailures in the response. Anything else keeps the
message (visible again at the end of the run), says why, and goes on. Batches
past the 24 h retention are reported with their keys unknown and kept, unless
--discard-expired. Without --yes it is a dry run: it reads the records and
prints what it would replay.

The DLQ, --to-queue and every function the run invokes (each record's, or
--function) go through the protection rule (docs/protection.md): each
protected one needs its name typed, or --confirm NAME (repeat the flag).

Safe to interrupt and re-run. Ctrl-C stops taking messages, finishes the ones
in flight and makes the rest visible again. A deleted message is what "done"
means, so a second run never replays it. The one window is a kill between a
successful invocation and its delete: that message is replayed again on the
next run (at-least-once), which the idempotent consumer (DDB-STREAM-04) absorbs.

Done means the DLQ holds no message the run did not take: visible, in flight
(a receive whose answer was lost, another consumer) or delayed. The run waits
for messages in flight to come back (up to --wait-timeout, by default the
longest visibility timeout and delay plus 30 s) and redrives them; a message
replayed whose delete failed is deleted (not replayed again) when it comes
back. If some are still out when the wait ends, it says how many and exits 1;
a re-run takes them.`,
		Example: `  dynops dlq redrive --queue URL                      # dry run: what would be replayed
  dynops dlq redrive --queue URL --max 1 --yes        # a sample first
  dynops dlq redrive --queue URL --yes --concurrency 4
  dynops dlq redrive --queue URL --to-queue URL2 --yes  # consumers that are not Lambda`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.Queue == "":
				return factory.UsageErrorf("redrive needs --queue URL (the DLQ's queue URL)")
			case opts.Function != "" && opts.ToQueue != "":
				return factory.UsageErrorf("redrive takes --function or --to-queue, not both")
			case opts.ToQueue == opts.Queue:
				return factory.UsageErrorf("--to-queue is the DLQ itself: pass the consumer's queue")
			}
			if _, err := awsconfig.ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", opts.LambdaEndpointURL, f.Flags.AllowInsecureEndpoint); err != nil {
				return factory.UsageErrorf("%v", err)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	opts.AddFlags(fl)
	fl.StringVar(&opts.Function, "function", "", "function to invoke, name or ARN (default: the one in each on-failure record)")
	fl.StringVar(&opts.ToQueue, "to-queue", "", "send the rebuilt events to this queue URL instead of invoking a function")
	fl.StringVar(&opts.LambdaEndpointURL, "lambda-endpoint-url", "", "Lambda endpoint URL, when it differs from --endpoint-url (default: AWS_ENDPOINT_URL_LAMBDA, which also wins over --endpoint-url)")
	fl.IntVar(&opts.Max, "max", 0, "take at most N messages (0: all)")
	flagcheck.Range(fl, "max", "0", "", "0: all")
	fl.IntVar(&opts.Concurrency, "concurrency", 1, "messages redriven at once")
	flagcheck.Range(fl, "concurrency", "1", "64", "Lambda invocations at once")
	fl.BoolVar(&opts.DiscardExpired, "discard-expired", false, "delete messages whose records are no longer in the stream")
	fl.DurationVar(&opts.VisibilityTimeout, "visibility-timeout", 5*time.Minute, "how long a message taken stays hidden: longer than one replay")
	flagcheck.Range(fl, "visibility-timeout", "10s", "12h", "SQS takes up to 12 h; under 10 s a message reappears while this run still handles it")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "messages replayed so far are deleted from the DLQ, the others become visible again after --visibility-timeout; run the redrive again")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "queue", "to-queue")
	return cmd
}

// Run redrives the DLQ and prints the outcome; exit status 1 when messages were kept.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	queueClients, err := f.AWSForQueue(ctx, opts.Queue)
	if err != nil {
		return err
	}
	sqsClient := queueClients.SQS()
	q := redrive.Queue{Client: sqsClient, URL: opts.Queue, VisibilityTimeout: opts.VisibilityTimeout}
	if opts.ToQueue != "" {
		g, err := opts.Apply(ctx, f, sqsClient, protect.ReadQueue(ctx, sqsClient, opts.ToQueue))
		if err != nil {
			return err
		}
		return run(ctx, f, opts, q, sqsClient, clients, redrive.QueueTarget{Client: sqsClient, URL: opts.ToQueue}, g)
	}
	target, g, err := functionTarget(ctx, f, opts, q, sqsClient, clients)
	if err != nil {
		return err
	}
	return run(ctx, f, opts, q, sqsClient, clients, target, g)
}

// functionTarget is the redrive's Lambda target: the functions this run
// invokes go through the same protection rule as the DLQ (--function, or,
// with --yes or --confirm, every function the messages name), and one that
// shows up later is checked before it is invoked (functionGuard).
func functionTarget(ctx context.Context, f *factory.Factory, opts *Options, q redrive.Queue, sqsClient protect.QueueAPI, clients awsclients.Set) (redrive.Target, *guard.Confirmed, error) {
	endpoint, err := awsconfig.ServiceEndpoint("LAMBDA", "--lambda-endpoint-url", opts.LambdaEndpointURL, f.Flags.AllowInsecureEndpoint)
	if err != nil {
		return nil, nil, factory.UsageErrorf("%v", err)
	}
	lc := clients.Lambda(endpoint)
	fns := []string{opts.Function}
	if opts.Function == "" && (opts.Yes || len(opts.Confirm) > 0) {
		if fns, err = functionsIn(ctx, q, opts.Max, f.Now()); err != nil {
			return nil, nil, err
		}
	}
	var more []protect.Target
	named := map[string]bool{}
	for _, fn := range fns {
		if fn != "" {
			more = append(more, protect.ReadFunction(ctx, lc, fn, inRegionOf(fn)))
			named[protect.FunctionName(fn)] = true
		}
	}
	if opts.Function == "" {
		// A message in flight (taken by a run that was killed) cannot be
		// read until its visibility timeout ends, nor the function it
		// names: a function --confirm names is a target as well when it
		// exists, so the resumed redrive is not refused the name its
		// returning messages ask for. A name that is no function stays
		// refused as matching no target.
		for _, c := range opts.Confirm {
			if named[c] {
				continue
			}
			if t := protect.ReadFunction(ctx, lc, c); t.ARN != "" {
				more = append(more, t)
				named[c] = true
			}
		}
	}
	confirmed, err := opts.Apply(ctx, f, sqsClient, more...)
	if err != nil {
		return nil, nil, err
	}
	g := &functionGuard{f: f, client: lc, allowed: map[string]bool{}, arns: map[string]string{}}
	for _, d := range confirmed.Decisions() {
		if d.Kind == protect.Function && d.ARN != "" {
			g.allowed[d.ARN] = true // not protected, or confirmed by the guard
		}
	}
	return redrive.Function{Name: opts.Function, Client: lc, Allow: g.allow}, confirmed, nil
}

// functionsIn lists the functions the DLQ's messages name (without consuming them).
func functionsIn(ctx context.Context, q redrive.Queue, max int, now time.Time) ([]string, error) {
	entries, err := redrive.Inspect(ctx, q, max, now, 0)
	if err != nil {
		return nil, fmt.Errorf("reading the DLQ to find the functions to check: %w; nothing was changed", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		if e.Function != "" && !seen[e.Function] {
			seen[e.Function] = true
			out = append(out, e.Function)
		}
	}
	return out, nil
}

func inRegionOf(fn string) func(*lambda.Options) {
	return func(o *lambda.Options) {
		if r := redrive.ARNRegion(fn); r != "" {
			o.Region = r
		}
	}
}

// functionGuard refuses to invoke a function that was neither shown to be
// unprotected nor confirmed before the run started (e.g. named by a message
// that arrived since): the message is kept. Decisions are keyed by the
// function's full unqualified ARN, so a message naming a function of the same
// name in another account or region gets a decision of its own.
type functionGuard struct {
	f       *factory.Factory
	client  protect.FunctionAPI
	mu      sync.Mutex
	allowed map[string]bool   // by unqualified function ARN
	arns    map[string]string // a name as given -> its ARN, once read
}

func (g *functionGuard) allow(ctx context.Context, fn string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	arn := protect.UnqualifiedFunctionARN(fn)
	if !strings.HasPrefix(fn, "arn:") {
		arn = g.arns[fn]
	}
	if arn != "" && g.allowed[arn] {
		return nil
	}
	t := protect.ReadFunction(ctx, g.client, fn, inRegionOf(fn))
	decided, err := guard.Decide(g.f, t)
	if err != nil {
		return err
	}
	ds := decided.Decisions()
	if ds[0].Protected {
		return fmt.Errorf("not invoked: %s; run again with --confirm %s", ds[0], ds[0].Name)
	}
	if t.ARN == "" {
		return fmt.Errorf("not invoked: the ARN of function %s could not be read, so the decision cannot be tied to it", fn)
	}
	g.arns[fn] = t.ARN
	g.allowed[t.ARN] = true
	return nil
}

func run(ctx context.Context, f *factory.Factory, opts *Options, q redrive.Queue, depthOf redrive.QueueAttributes, clients awsclients.Set, target redrive.Target, g *guard.Confirmed) error {
	apply := !g.DryRun()
	d, err := redrive.ReadDepth(ctx, depthOf, opts.Queue)
	if err != nil {
		return err
	}
	depth := d.Upto(opts.Max)
	bar := f.IOStreams.StartProgress("redrive "+opts.Name()+": messages", int64(depth))
	rep, err := redrive.Run(ctx, q, clients.Streams(), target, redrive.Options{
		Apply: apply, Max: opts.Max, Concurrency: opts.Concurrency, DiscardExpired: opts.DiscardExpired,
		Now: f.Now, Act: f.Audit.Act,
		Progress: func(done int, o redrive.Outcome) {
			bar.Set(int64(done))
			bar.Status("last %s: %s", o.MessageID, o.Status)
		},
		Waiting: dlqcmd.Waiting(bar),
	})
	bar.Done()
	counts := map[string]int64{"kept": int64(rep.Kept()), "remaining": int64(rep.Remaining)}
	for k, v := range rep.Counts {
		counts[k] = int64(v)
	}
	f.Audit.Counts(counts)
	if perr := printReport(f, rep); perr != nil {
		return perr
	}
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: the messages in flight finished, the rest are back in the queue; run again to go on")
	}
	if apply && rep.Kept() > 0 {
		return factory.ExitError{Code: 1}
	}
	if !apply {
		g.PrintDryRun("replay them")
	}
	return nil
}

// printReport shows the run's report: the table and the verdict, or the
// JSON document.
func printReport(f *factory.Factory, rep redrive.Report) error {
	return view.Results(f, func(rep redrive.Report) error { return showReport(f.IOStreams, rep) }).Show(rep)
}

// showReport is the human view: one row per message, then the verdict.
func showReport(ios *iostreams.IOStreams, rep redrive.Report) error {
	var rows [][]string
	for _, o := range rep.Outcomes {
		status := o.Status
		switch o.Status {
		case redrive.Replayed, redrive.WouldReplay, redrive.Discarded:
			status = ios.Colour(iostreams.Green, status)
		default:
			status = ios.Colour(iostreams.Red, status)
		}
		detail := o.Reason
		if detail == "" {
			var keys []string
			for _, r := range o.Records {
				keys = append(keys, r.EventName+" "+r.Keys)
			}
			detail = fmt.Sprintf("%d record(s): %s", len(o.Records), strings.Join(keys, "; "))
		}
		rows = append(rows, []string{o.MessageID, o.Table, o.Start + ".." + o.End, o.Target, status, detail})
	}
	if err := ios.Table([]string{"MESSAGE", "TABLE", "SEQUENCE RANGE", "TARGET", "STATUS", "DETAIL"}, rows); err != nil {
		return err
	}
	verdict := fmt.Sprintf("%d replayed and deleted, %d kept in the queue", rep.Counts[redrive.Replayed], rep.Kept())
	if rep.DryRun {
		verdict = guard.DryRunHeader(fmt.Sprintf("replay %d, and keep %d", rep.Counts[redrive.WouldReplay], len(rep.Outcomes)-rep.Counts[redrive.WouldReplay]))
	}
	fmt.Fprintf(ios.Out, "\n%d message(s) from %s in %.1fs: %s\n", len(rep.Outcomes), rep.Queue, rep.Seconds, verdict)
	return nil
}
