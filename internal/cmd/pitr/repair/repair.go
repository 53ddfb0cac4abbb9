// Package repair implements `dynops pitr repair`.
package repair

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	exportshared "github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/engine"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/repair"
	"github.com/dynops/dynops/internal/tablediff"
)

// Options of `dynops pitr repair`.
type Options struct {
	Repair         repair.Options
	FromExport     string // a full export's URI instead of --from
	AllDifferences bool
	Segments       int // for --all-differences
	Yes            bool
	Confirm        []string
	// AllowUnrelated is --allow-unrelated-source REASON: repair from a table
	// that is not shown to be a restore of --to; the reason goes in the audit.
	AllowUnrelated string
	// Unverified is the --unverified-exports reason for a --from-export
	// DynamoDB cannot vouch for ("": none).
	Unverified string
	// Budgets holds --max-write-units, the write budget on --to.
	budget.Budgets
	// PriceFile holds on-demand prices for the estimate.
	PriceFile string
	// The damage window: --damage-since (default: --from's restore point),
	// --damage-until, and where its keys come from: --damage-stream (the
	// table's stream) or --damage-keys FILE.
	DamageSince, DamageUntil string
	DamageStream             bool
	DamageKeys               string
	DamageAttribute          string
	// Shard is --shard I/N: repair only the keys of that shard ("": all).
	Shard string
	// Plan is --plan-out FILE [--hashes-only]: each key's item before and
	// after the repair, written on the dry run and on the run.
	Plan exportshared.PlanOut
}

// Report is the --output json document.
type Report struct {
	DryRun bool `json:"dry_run"`
	// The counts a person reads first (the runbook's one-line summary):
	// what is copied back, how many of those may be good writes (all of
	// them when unscoped), and the good writes left alone.
	CopyBack        int64             `json:"copy_back"`
	MayBeGoodWrites int64             `json:"may_be_good_writes"`
	LeftAlone       int64             `json:"left_alone"`
	Conflicts       int64             `json:"conflicts"`
	Record          string            `json:"record,omitempty"` // every key's outcome, for `pitr verify`
	Source          *repair.Relation  `json:"source"`
	Target          *protect.Decision `json:"target"`
	Diff            *tablediff.Report `json:"diff,omitempty"` // with --all-differences
	Plan            *repair.Plan      `json:"plan"`
	Result          *repair.Result    `json:"result,omitempty"`
	// WriteBudget is the budget the writes to --to hold to and where it came from.
	WriteBudget *capacity.Budget `json:"write_budget"`
	// WriteEstimate is what the writes are expected to take from --to.
	WriteEstimate *capacity.Estimate `json:"write_estimate,omitempty"`
}

// NewCmdRepair returns `dynops pitr repair`. runF replaces the run function in tests of flag parsing.
func NewCmdRepair(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	r := &opts.Repair
	cmd := &cobra.Command{
		Use:   "repair --from RESTORED --to ORIGINAL (--keys FILE | --all-differences) (--damage-until TIME (--damage-stream | --damage-keys FILE) | --unscoped REASON) [--yes]",
		Short: "Copy items back from a restored table to the original",
		Long: `Repair copies the items a diff found missing or changed from the restored table
(--from) back to the original (--to). The keys come from
` + "`dynops table diff --source RESTORED --target ORIGINAL --keys-out FILE`" + ` (--keys FILE),
or from a fresh diff (--all-differences). With --from-export the items come
from a full export instead of a restored table (keys from
` + "`table diff --source-export`" + `): no restore, no read capacity; the export
is checked against its manifests as it streams, and must be one DynamoDB
vouches for (DescribeExport agrees with its manifest; see 'dynops export
revert'), or be accepted with --unverified-exports "REASON". The keys may also
come from two exports (` + "`table diff --source-export --target-export`" + `, no table
read at all): the target export must then be of --to and vouched for the same
way; each write's condition is on the item as that export held it.

Each item is written with a condition that the original still holds what the
diff saw (its checksum, then a condition on its whole image in the write), so a
write the application made since is never overwritten: it is reported as a
conflict and left alone. A condition can only name the attributes read: an
attribute another writer adds between the read and the write is replaced by
the put; the write asks for the item it replaced, and such a key is reported
as a conflict (written) with the attributes it replaced. With
--version-attribute NAME (the application's optimistic-locking version, as
the AWS SDKs' DynamoDBMapper and Enhanced Client keep it) each write is
conditional on that version and increments it, so a versioned writer's
change in between makes the write fail instead. --plan-out FILE writes each
key's item before and after the repair (--hashes-only: their checksums) to a
new 0600 file, on the dry run (which then reads every key) and on the run.
--unconditional uses BatchWriteItem (25 items per call,
unprocessed items retried with backoff) without conditions: faster, and safe
only while writes to the original are stopped.

--from must be a restore of --to: its restored-from tag (written by
` + "`dynops pitr restore`" + `, read from the service) names --to, and the key schemas
are the same. A source that is not needs --allow-unrelated-source REASON (the
reason goes in the audit record); a different key schema is always refused.

A restore point cannot tell the damage from good writes made after it: both
differ from the restored table. Scope the repair to the keys written in the
damage window [--damage-since, --damage-until] (--damage-since defaults to
--from's restore point, its restored-to-time tag), read from the table's stream
(--damage-stream: records carry their time, rounded down to the second; the
stream keeps 24 hours), a list of keys (--damage-keys FILE, one key per line in
DynamoDB JSON), or an updated-at attribute the application writes on every put
(--damage-attribute NAME: each differing item of --to dated by it; a deleted item
cannot be dated and is copied back, counted as a possible good write). Differing keys not written in the window are good writes, left
alone; keys written in the window and again after it are conflicts, left alone
and listed. Without a scope, --yes is refused when anything would be copied
back, saying how many changed items may be good writes, unless --unscoped
REASON decides to copy back every difference (the reason goes in the audit).
--record FILE (default: the keys file + .repair.jsonl) lists every key's outcome,
conflicts included; ` + "`dynops pitr verify --record FILE`" + ` checks it afterwards.

Items only in the original are never deleted unless --delete-extra is given
(with a scope: only those written in the window).
Without --yes it prints what it would write and delete and changes nothing; a
protected original (prod, or anything dynops cannot show is not prod, README
"Protected targets") also needs its name typed after the counts are shown (or
--confirm NAME).
Exit status 1 when some keys were left alone as conflicts, or written over a
change made since the read.`,
		Example: `  dynops pitr repair --from prod-hoge-user-restored-20261121t094500z --to prod-hoge-user --keys keys.jsonl
  dynops pitr repair --from RESTORED --to ORIGINAL --all-differences --yes --confirm ORIGINAL
  dynops pitr repair --from-export s3://prod-hoge-exports/full/AWSDynamoDB/01732000000000-abcd1234 --to prod-hoge-user --keys keys.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (r.From == "") == (opts.FromExport == "") || r.To == "" {
				return factory.UsageErrorf("pitr repair needs --to ORIGINAL and one of --from RESTORED (a table) or --from-export s3://BUCKET/PREFIX (a full export)")
			}
			if r.From == r.To {
				return factory.UsageErrorf("--from and --to are both %s: repair copies from a restored table to the original", r.From)
			}
			if err := exportshared.CheckExportFlags(cmd, nil, opts.Unverified); err != nil {
				return err
			}
			if opts.Unverified != "" && opts.FromExport == "" {
				return factory.UsageErrorf("--unverified-exports goes with --from-export: a table needs no vouching")
			}
			if (r.KeysFile == "") == !opts.AllDifferences {
				return factory.UsageErrorf("pitr repair needs exactly one of --keys FILE (from table diff --keys-out) or --all-differences")
			}
			if err := checkScopeFlags(cmd, opts); err != nil {
				return err
			}
			if opts.Shard != "" {
				sh, err := engine.ParseShard(opts.Shard)
				if err != nil {
					return factory.UsageErrorf("%w", err)
				}
				if opts.AllDifferences {
					return factory.UsageErrorf("--shard %s needs --keys FILE: every shard must repair from the same keys file (diff first with table diff --keys-out)", opts.Shard)
				}
				r.Shard = sh
			}
			if err := checkWriteFlags(opts); err != nil {
				return err
			}
			if fl := cmd.Flags().Lookup("allow-unrelated-source"); fl.Changed && strings.TrimSpace(opts.AllowUnrelated) == "" {
				return factory.UsageErrorf("--allow-unrelated-source needs a REASON (it goes in the audit record), e.g. --allow-unrelated-source \"INC-123: restored by hand\"")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&r.From, "from", "", "the restored table to copy from")
	fl.StringVar(&r.To, "to", "", "the original table to repair")
	fl.StringVar(&opts.FromExport, "from-export", "", "copy the items from a full export instead of a table (keys from table diff --source-export, with --target TABLE or --target-export of it)")
	fl.IntVar(&r.ExportParallel, "export-parallel", 4, "export data files read at once (with --from-export)")
	flagcheck.Range(fl, "export-parallel", "1", "1024", "export data files read at once")
	fl.StringVar(&r.KeysFile, "keys", "", "keys file from `dynops table diff --keys-out`")
	fl.BoolVar(&opts.AllDifferences, "all-differences", false, "diff the tables now and repair every difference")
	fl.IntVar(&opts.Segments, "segments", 4, "parallel Scan segments for --all-differences")
	flagcheck.Range(fl, "segments", "1", "1000000", "DynamoDB Scan takes 1 to 1,000,000 segments")
	fl.BoolVar(&r.DeleteExtra, "delete-extra", false, "also delete items that are only in the original")
	fl.BoolVar(&r.Unconditional, "unconditional", false, "BatchWriteItem without conditions (only while writes to the original are stopped)")
	fl.IntVar(&r.Workers, "workers", 8, "parallel writers")
	opts.Budgets.AddFlags(fl, "", "--to")
	budget.AddPriceFlag(fl, &opts.PriceFile)
	flagcheck.Range(fl, "workers", "1", "256", "writes at once")
	fl.BoolVar(&opts.Yes, "yes", false, "repair (without it: print what would change, change nothing)")
	factory.AddConfirmFlag(fl, &opts.Confirm, "the original table's name, for the repair of a protected table")
	fl.StringVar(&opts.AllowUnrelated, "allow-unrelated-source", "", "REASON: repair from a --from that is not a restore of --to (recorded in the audit)")
	exportshared.AddUnverifiedFlag(fl, &opts.Unverified)
	fl.StringVar(&opts.DamageSince, "damage-since", "", "start of the damage window, RFC3339 (default: --from's restore point, its restored-to-time tag)")
	fl.StringVar(&opts.DamageUntil, "damage-until", "", "end of the damage window, RFC3339: the last bad write")
	fl.BoolVar(&opts.DamageStream, "damage-stream", false, "read the keys written in the damage window from --to's stream (24 h)")
	fl.StringVar(&opts.DamageKeys, "damage-keys", "", "FILE listing the keys written in the damage window (DynamoDB JSON, one per line)")
	fl.StringVar(&opts.DamageAttribute, "damage-attribute", "", "NAME of an updated-at attribute (RFC3339, or epoch s/ms) dating each differing item of --to")
	fl.StringVar(&r.Unscoped, "unscoped", "", "REASON: copy back every difference, good writes since the restore point included (recorded in the audit)")
	fl.StringVar(&r.RecordFile, "record", "", "write every key's outcome here, JSON lines, for `pitr verify` (default: the keys file + .repair.jsonl, + .repair-shard-I-of-N.jsonl with --shard)")
	fl.StringVar(&opts.Shard, "shard", "", "I/N: repair only the keys whose key hash mod N is I (N such repairs do what one does; --max-write-units is split evenly across them)")
	fl.StringVar(&r.VersionAttribute, "version-attribute", "", "NAME of --to's version attribute (a number the application's data-access layer increments): each write is conditional on it and increments it")
	exportshared.AddPlanOutFlags(fl, &opts.Plan)
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "items written so far stay written (the audit log lists what was done); run the same repair again: it writes only what still differs")
	cmdfacts.SetTimeout(cmd, time.Minute)
	cmdfacts.SetTargets(cmd, "from", "to")
	return cmd
}

// Run plans the repair, and with --yes (and the prod confirmation) runs it.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	db := clients.DynamoDB()
	ro, rep := opts.Repair, Report{}
	// The target's protection and the source's relation come first: both read
	// from the service, before any diff.
	decided, err := guard.Decide(f, protect.ReadTable(ctx, db, ro.To))
	if err != nil {
		return err
	}
	ds := decided.Decisions()
	rep.Target = &ds[0]
	if err := decided.CheckTyped(opts.Confirm); err != nil {
		return err // a --confirm naming another table: refused before anything is read
	}
	if rep.Source, err = checkSource(ctx, f, clients, decided, opts, &ro); err != nil {
		return err
	}
	cleanup, err := prepare(ctx, f, clients, opts, &ro, &rep)
	defer cleanup()
	if err != nil {
		return err
	}
	v := view.Pick[repairView](f, humanView{f: f}, jsonView{f: f})
	v.Plan(&rep)
	if err := rep.Plan.CheckScoped(); err != nil && opts.Yes {
		return factory.UsageErrorf("%w", err) // fail closed: nothing that may be a good write is reverted without a decision
	}
	g, err := decided.Confirm(opts.Yes, opts.Confirm)
	if err != nil {
		return err
	}
	ro.Planned = opts.Plan.Planned()
	if g.DryRun() {
		return dryRun(ctx, f, db, g, v, opts, ro, &rep)
	}
	if _, err := g.StartAudit(ctx, audit.Plan{Targets: []string{ro.From, ro.To}, Counts: map[string]int64{
		"missing": rep.Plan.Missing, "changed": rep.Plan.Changed, "extra": rep.Plan.Extra}}); err != nil {
		return err
	}
	err = runRepair(ctx, f, db, ro, &rep)
	if ferr := opts.Plan.Finish(f); err == nil { // the keys written so far, also when the run failed
		err = ferr
	}
	if err != nil {
		return err
	}
	if err := v.Result(&rep); err != nil {
		return err
	}
	if rep.Result.Conflicts+rep.Result.ChangedSinceRead > 0 {
		return factory.ExitError{Code: 1}
	}
	return nil
}

// dryRun audits the plan; with --plan-out it reads every key as the repair
// would (writing nothing) and writes each key's item before and after.
func dryRun(ctx context.Context, f *factory.Factory, db repair.DynamoDB, g *guard.Confirmed, v repairView, opts *Options, ro repair.Options, rep *Report) error {
	rep.DryRun = true
	f.Audit.Act(audit.ActRepairItems, ro.To, map[string]any{"plan": rep.Plan, "write_budget": rep.WriteBudget, "plan_out": opts.Plan.File})
	if opts.Plan.File != "" {
		ro.DryRun, ro.Progress = true, nil
		if _, err := repair.Run(ctx, db, ro); err != nil {
			return err
		}
		if err := opts.Plan.Finish(f); err != nil {
			return err
		}
	}
	return v.DryRun(rep, g)
}

// runRepair runs the repair with a progress bar (its write budget in the
// status) and audits what it did.
func runRepair(ctx context.Context, f *factory.Factory, db repair.DynamoDB, ro repair.Options, rep *Report) error {
	bar := f.IOStreams.StartProgress("repairing "+ro.To+": keys", rep.Plan.Missing+rep.Plan.Changed+rep.Plan.Extra)
	ro.Progress = bar.Set
	if b := ro.WriteBudget; b != nil {
		ro.Progress = func(n int64) {
			u := b.Usage()
			bar.Status("%.1f WCU/s of %.1f", u.PerSecond, u.Budget)
			bar.Set(n)
		}
	}
	res, err := repair.Run(ctx, db, ro)
	bar.Done()
	if r := res; r != nil {
		f.Audit.Counts(map[string]int64{"copied": r.Copied, "deleted": r.Deleted, "already_equal": r.AlreadyEqual,
			"gone_from_source": r.GoneFromSource, "kept_extra": r.KeptExtra, "left_out_of_scope": r.LeftOutOfScope, "conflicts": r.Conflicts,
			"changed_since_read": r.ChangedSinceRead})
	}
	if err != nil {
		return err
	}
	rep.Result, rep.Conflicts, rep.Record = res, res.Conflicts, ro.RecordFile
	f.Audit.Act(audit.ActRepairItems, ro.To, map[string]any{"result": res, "write_budget": rep.WriteBudget})
	return nil
}

// checkSource checks what the repair copies from: an export DynamoDB
// vouches for, of --to (or accepted with --allow-unrelated-source), or a
// table that is a restore of --to. It returns the table's relation (nil for
// an export).
func checkSource(ctx context.Context, f *factory.Factory, clients awsclients.Set, decided *guard.Decided, opts *Options, ro *repair.Options) (*repair.Relation, error) {
	db := clients.DynamoDB()
	if opts.FromExport == "" {
		rel, err := repair.CheckSource(ctx, db, ro.From, ro.To)
		switch {
		case errors.Is(err, repair.ErrKeySchema):
			return &rel, factory.UsageErrorf("%w", err)
		case errors.Is(err, repair.ErrUnrelatedSource) && opts.AllowUnrelated == "":
			return &rel, factory.UsageErrorf("%w; repair copies from a restore of the table it repairs: pass the restored table as --from, or --allow-unrelated-source REASON to copy from it anyway (the reason goes in the audit record); nothing was changed", err)
		case errors.Is(err, repair.ErrUnrelatedSource):
			f.Audit.Act(audit.ActAllowUnrelatedSource, ro.To, map[string]any{"from": ro.From, "reason": opts.AllowUnrelated, "why_unrelated": rel.Why})
			f.IOStreams.Infof("warning: %s; going on because of --allow-unrelated-source %q\n", rel.Why, opts.AllowUnrelated)
		case err != nil:
			return &rel, err
		}
		return &rel, nil
	}
	var err error
	ro.FromExport, err = exportverify.OpenExport(opts.FromExport, func() (exportverify.S3API, error) { return clients.S3(), nil })
	if err != nil {
		return nil, factory.UsageErrorf("--from-export: %w", err)
	}
	ro.From = opts.FromExport
	// The export must be of --to (its manifest's tableArn), as a restored
	// table must be a restore of it.
	sum, _, err := ro.FromExport.ExportSummary(ctx)
	if err != nil {
		return nil, err
	}
	want, err := export.TableArn(ctx, db, ro.To)
	if err != nil {
		return nil, err
	}
	if name := sum.TableArn[strings.LastIndex(sum.TableArn, "/")+1:]; name != ro.To {
		why := fmt.Sprintf("the export %s is of table %q (its manifest's tableArn %s), not of --to %s", opts.FromExport, name, sum.TableArn, ro.To)
		if opts.AllowUnrelated == "" {
			return nil, factory.UsageErrorf("%s; pass --allow-unrelated-source REASON to copy from it anyway (the reason goes in the audit record); nothing was changed", why)
		}
		f.Audit.Act(audit.ActAllowUnrelatedSource, ro.To, map[string]any{"from": opts.FromExport, "reason": opts.AllowUnrelated, "why_unrelated": why})
		f.IOStreams.Infof("warning: %s; going on because of --allow-unrelated-source %q\n", why, opts.AllowUnrelated)
		want = sum.TableArn // still an export DynamoDB vouches for, of the table it names
	}
	// Whom to believe: the export as DynamoDB vouches for it
	// (exportverify.Vouch), before anything is diffed or written.
	if opts.Unverified != "" && opts.Yes {
		if err := decided.AllowException(ctx, "--"+exportshared.UnverifiedFlag); err != nil {
			return nil, err
		}
	}
	if _, _, err = exportshared.VouchExport(ctx, f, clients, ro.FromExport, exportverify.Expect{TableArn: want}, opts.Unverified, ro.To); err != nil {
		return nil, err
	}
	return nil, checkKeysTarget(ctx, f, clients, opts, ro, want)
}

// errHeaderRead stops reading a keys file after its header.
var errHeaderRead = errors.New("header read")

// checkKeysTarget accepts a keys file diffed against a full export of --to
// (`table diff --source-export --target-export`, the large-table runbook)
// instead of --to itself: that export must be of --to (its manifest's
// tableArn want) and vouched for like --from-export. It sets ro.KeysTarget.
func checkKeysTarget(ctx context.Context, f *factory.Factory, clients awsclients.Set, opts *Options, ro *repair.Options, want string) error {
	if opts.AllDifferences || ro.KeysFile == "" {
		return nil
	}
	h, err := tablediff.ReadKeys(ro.KeysFile, func(tablediff.KeyRecord) error { return errHeaderRead })
	if (err != nil && !errors.Is(err, errHeaderRead)) || h.Target == ro.To || !strings.HasPrefix(h.Target, "s3://") {
		return nil // MakePlan names what does not fit
	}
	target, err := exportverify.OpenExport(h.Target, func() (exportverify.S3API, error) { return clients.S3(), nil })
	if err != nil {
		return factory.UsageErrorf("the target of keys file %s: %w", ro.KeysFile, err)
	}
	if _, _, err := exportshared.VouchExport(ctx, f, clients, target, exportverify.Expect{TableArn: want}, opts.Unverified, ro.To); err != nil {
		return err
	}
	ro.KeysTarget = h.Target
	return nil
}

// prepare finds the keys (a fresh diff with --all-differences), the damage
// scope and the record file, makes the plan, and resolves the write budget
// and the estimate. cleanup removes the fresh diff's keys file.
func prepare(ctx context.Context, f *factory.Factory, clients awsclients.Set, opts *Options, ro *repair.Options, rep *Report) (cleanup func(), err error) {
	db := clients.DynamoDB()
	cleanup = func() {}
	if opts.AllDifferences {
		dir, err := os.MkdirTemp("", "dynops-repair-")
		if err != nil {
			return cleanup, fmt.Errorf("creating a temp dir for the keys: %w", err)
		}
		cleanup = func() { os.RemoveAll(dir) }
		ro.KeysFile = filepath.Join(dir, "keys.jsonl")
		if rep.Diff, err = diffAll(ctx, f, db, opts, *ro); err != nil {
			return cleanup, err
		}
	}
	if ro.Scope, err = buildScope(ctx, f, opts, *ro, rep.Source); err != nil {
		return cleanup, err
	}
	if ro.RecordFile == "" && !opts.AllDifferences {
		ro.RecordFile = ro.KeysFile + ".repair.jsonl"
		if ro.Shard.Count > 1 {
			ro.RecordFile = fmt.Sprintf("%s.repair-shard-%d-of-%d.jsonl", ro.KeysFile, ro.Shard.Index, ro.Shard.Count)
		}
	}
	rep.Plan, err = repair.MakePlan(*ro)
	if errors.Is(err, repair.ErrKeysFile) {
		return cleanup, factory.UsageErrorf("%w", err)
	}
	if err != nil {
		return cleanup, err
	}
	rep.CopyBack, rep.MayBeGoodWrites, rep.LeftAlone = rep.Plan.Copy, rep.Plan.MayBeGoodWrites, rep.Plan.OutOfScope+rep.Plan.WrittenAfter
	rep.Conflicts = rep.Plan.WrittenAfter // known before the run; the run adds keys changed since the diff
	wb, err := opts.Budgets.Resolve(ctx, db, capacity.Write, ro.To)
	if err != nil {
		return cleanup, err
	}
	if wb, err = wb.Split(ro.Shard.Count); err != nil {
		return cleanup, err
	}
	rep.WriteBudget, ro.WriteBudget = &wb, wb.Bucket
	prices, err := capacity.LoadPrices(opts.PriceFile)
	if err != nil {
		return cleanup, factory.UsageErrorf("%w", err)
	}
	// The estimate: each copy a whole item of the target's average size,
	// each delete one unit.
	deletes := int64(0)
	if rep.Plan.DeleteExtra {
		deletes = rep.Plan.Extra
	}
	rep.WriteEstimate = capacity.ItemWrites(ctx, db, ro.To, rep.Plan.Copies(), deletes, wb, prices, clients.Region())
	return cleanup, nil
}

// diffAll diffs --from and --to now into ro.KeysFile, with a progress bar.
func diffAll(ctx context.Context, f *factory.Factory, db *dynamodb.Client, opts *Options, ro repair.Options) (*tablediff.Report, error) {
	var total int64 // unknown (0) for an export source: its manifest counts are read by the diff
	if ro.FromExport == nil {
		_, count, err := tablediff.SameKey(ctx, db, ro.From, ro.To)
		if err != nil {
			return nil, err
		}
		total = 2 * count
	}
	bar := f.IOStreams.StartProgress("diff before repair: items scanned", total)
	defer bar.Done()
	return tablediff.Diff(ctx, db, tablediff.Options{Source: ro.From, Target: ro.To, Segments: opts.Segments,
		SourceExport: ro.FromExport, ExportParallel: ro.ExportParallel,
		KeysOut: ro.KeysFile, Now: f.Now, Progress: func(a, b int64) { bar.Set(a + b) }})
}

// repairView shows a repair: its plan before the question, then the dry
// run or the result.
type repairView interface {
	Plan(rep *Report)
	DryRun(rep *Report, g *guard.Confirmed) error
	Result(rep *Report) error
}

// humanView prints the plan, the dry-run notice and the outcome table.
type humanView struct{ f *factory.Factory }

func (v humanView) Plan(rep *Report) {
	printPlan(v.f, rep.Plan, rep.Target)
	fmt.Fprintf(v.f.IOStreams.Out, "  %s\n", rep.WriteBudget)
	if rep.WriteEstimate != nil {
		fmt.Fprintf(v.f.IOStreams.Out, "  %s\n", rep.WriteEstimate)
	}
}

func (v humanView) DryRun(_ *Report, g *guard.Confirmed) error {
	g.PrintDryRun("repair")
	return nil
}

func (v humanView) Result(rep *Report) error {
	printResult(v.f, rep.Result, rep.Record)
	if c := rep.Result.WriteCapacity; c != nil {
		fmt.Fprintf(v.f.IOStreams.Out, "write capacity: %.1f units used, %.1f units/s on average, budget %.1f units/s (as DynamoDB reported)\n", c.Used, c.PerSecond, c.Budget)
	}
	return nil
}

// jsonView shows only the report, as the run's JSON document.
type jsonView struct{ f *factory.Factory }

func (jsonView) Plan(*Report) {}

func (v jsonView) DryRun(rep *Report, _ *guard.Confirmed) error { return v.f.PrintResult(rep) }

func (v jsonView) Result(rep *Report) error { return v.f.PrintResult(rep) }

func printPlan(f *factory.Factory, p *repair.Plan, target *protect.Decision) {
	out := f.IOStreams.Out
	fmt.Fprintf(out, "Repair plan: %s -> %s (%s writes), keys from the diff of %s\n", p.From, p.To, p.Mode, p.DiffTime.Format(time.RFC3339))
	extra := fmt.Sprintf("keep %d item(s) only in %s (add --delete-extra to delete them)", p.Extra, p.To)
	deletes := int64(0)
	if p.DeleteExtra {
		extra = fmt.Sprintf("delete %d item(s) only in %s", p.Extra, p.To)
		deletes = p.Extra
	}
	if p.DeleteExtra && p.Scope != nil {
		extra = fmt.Sprintf("delete %d item(s) only in %s and written in the window, keep the other %d", p.Delete, p.To, p.Extra-p.Delete)
		deletes = p.Delete
	}
	if s := p.Scope; s != nil {
		fmt.Fprintf(out, "  the diff: %d missing item(s), %d changed item(s), %d only in %s\n", p.Missing, p.Changed, p.Extra, p.To)
		fmt.Fprintf(out, "  scope: the keys written in the damage window %s .. %s (%s): %d key(s)\n",
			s.Since.UTC().Format(time.RFC3339), s.Until.UTC().Format(time.RFC3339), s.Source, s.Damaged)
		fmt.Fprintf(out, "  copy back %d missing or changed item(s) written in the window\n", p.Copy)
		fmt.Fprintf(out, "  leave alone %d differing item(s) not written in the window: good writes since the restore point\n", p.OutOfScope)
		fmt.Fprintf(out, "  leave alone %d item(s) written in the window and again after it: conflicts, listed\n", p.WrittenAfter)
		if s.Undated > 0 {
			fmt.Fprintf(out, "  %d of the items to copy back were deleted, which %s cannot date: they may be good deletes made after the window\n", s.Undated, s.Source)
		}
		if !s.LaterKnown {
			fmt.Fprintf(out, "  (a key list cannot show writes after the window: a key changed since the diff is still left alone as a conflict)\n")
		}
	} else {
		fmt.Fprintf(out, "  copy back %d missing item(s)\n  copy back %d changed item(s)\n", p.Missing, p.Changed)
		if p.Unscoped != "" {
			fmt.Fprintf(out, "  not scoped to the damage window (--unscoped %q): %d of them may be good writes made after the restore point, and are reverted\n", p.Unscoped, p.MayBeGoodWrites)
		} else if p.MayBeGoodWrites > 0 {
			fmt.Fprintf(out, "  WARNING: not scoped to the damage window: %d of them may be good writes made after the restore point, which this repair would revert.\n"+
				"  --yes is refused until you scope it (--damage-until TIME with --damage-stream or --damage-keys FILE) or decide with --unscoped REASON.\n", p.MayBeGoodWrites)
		}
	}
	fmt.Fprintf(out, "  %s\n", extra)
	fmt.Fprintf(out, "  in all: %d item(s) written to %s, %d deleted\n", p.Copies(), p.To, deletes)
	if target != nil {
		fmt.Fprintf(out, "  target: %s\n", target)
	}
}

func printResult(f *factory.Factory, r *repair.Result, record string) {
	out := f.IOStreams.Out
	fmt.Fprintf(out, "Repaired %s from %s (%s writes) in %.1fs, %.0f items/s\n", r.To, r.From, r.Mode, r.Seconds, r.ItemsPerSec)
	rows := [][]string{
		{"copied", fmt.Sprint(r.Copied)},
		{"deleted", fmt.Sprint(r.Deleted)},
		{"already equal", fmt.Sprint(r.AlreadyEqual)},
		{"gone from source", fmt.Sprint(r.GoneFromSource)},
		{"kept extra", fmt.Sprint(r.KeptExtra)},
		{"left out of scope (good writes)", fmt.Sprint(r.LeftOutOfScope)},
		{"conflicts (left alone)", fmt.Sprint(r.Conflicts)},
	}
	if r.ChangedSinceRead > 0 {
		rows = append(rows, []string{"written over a change made since the read (conflicts)", fmt.Sprint(r.ChangedSinceRead)})
	}
	_ = f.IOStreams.Table([]string{"OUTCOME", "ITEMS"}, rows)
	for i, c := range r.ConflictSample {
		if i == terminalSample {
			fmt.Fprintf(out, "  ... and %d more\n", r.Conflicts+r.ChangedSinceRead-terminalSample)
			break
		}
		fmt.Fprintf(out, "  conflict %s: %s\n", c.Key, c.Reason)
	}
	if r.Conflicts > 0 {
		fmt.Fprintf(out, "\n%d key(s) written after the damage window or changed since the diff were left alone: decide them per key.\n", r.Conflicts)
	}
	if r.ChangedSinceRead > 0 {
		fmt.Fprintf(out, "%d key(s) were written, but another writer changed them between the read and the write: the write replaced the attributes listed; read them (dynops item get) and decide.\n", r.ChangedSinceRead)
	}
	if record != "" {
		fmt.Fprintf(out, "Every key's outcome (conflicts included): %s; check it with `dynops pitr verify --record %s`\n", record, record)
	}
}

// terminalSample is how many conflicts the terminal shows; the record and
// -o json have the rest.
const terminalSample = 10

// checkWriteFlags refuses what batch writes cannot honour (they read
// nothing of --to and carry no condition) and checks the --plan-out file.
// Unlike export revert, --plan-out goes with --yes too: the run writes each
// key's item before and after as it writes it.
func checkWriteFlags(opts *Options) error {
	r := opts.Repair
	switch {
	case r.Unconditional && r.VersionAttribute != "":
		return factory.UsageErrorf("--version-attribute %s makes each write conditional on the version; --unconditional writes without conditions: give one or the other", r.VersionAttribute)
	case r.Unconditional && opts.Yes && opts.Plan.File != "":
		return factory.UsageErrorf("--plan-out %s with --unconditional --yes: batch writes read nothing of --to, so there is no item before; write the plan with a dry run (without --yes), or drop --unconditional", opts.Plan.File)
	}
	return opts.Plan.Check(false)
}

// checkScopeFlags refuses a damage window without a key source, a source
// without the window's end, and a scope given with --unscoped.
func checkScopeFlags(cmd *cobra.Command, opts *Options) error {
	fl := cmd.Flags()
	sources := 0
	for _, given := range []bool{opts.DamageStream, opts.DamageKeys != "", opts.DamageAttribute != ""} {
		if given {
			sources++
		}
	}
	source := sources > 0
	switch {
	case sources > 1:
		return factory.UsageErrorf("--damage-stream, --damage-keys and --damage-attribute each name where the damaged keys come from: give one")
	case source && opts.DamageUntil == "":
		return factory.UsageErrorf("--damage-stream, --damage-keys and --damage-attribute need --damage-until TIME, the end of the damage window (the last bad write), e.g. --damage-until 2026-11-21T09:45:00Z")
	case !source && (opts.DamageUntil != "" || opts.DamageSince != ""):
		return factory.UsageErrorf("a damage window needs its keys: add --damage-stream (the table's stream), --damage-keys FILE or --damage-attribute NAME")
	case fl.Lookup("unscoped").Changed && strings.TrimSpace(opts.Repair.Unscoped) == "":
		return factory.UsageErrorf("--unscoped needs a REASON (it goes in the audit record), e.g. --unscoped \"INC-123: every change since the restore point is damage\"")
	case source && opts.Repair.Unscoped != "":
		return factory.UsageErrorf("--unscoped copies back every difference; with --damage-stream, --damage-keys or --damage-attribute the repair is scoped: give one or the other")
	}
	for _, name := range []string{"damage-since", "damage-until"} {
		if v := fl.Lookup(name).Value.String(); v != "" {
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				return factory.UsageErrorf("--%s %q is not an RFC3339 time: write it like 2026-11-21T09:45:00Z", name, v)
			}
		}
	}
	return nil
}

// buildScope reads the damage window's keys (nil without a source): from
// the stream of --to, or a key list. The window starts at --damage-since,
// else at --from's restore point.
func buildScope(ctx context.Context, f *factory.Factory, opts *Options, ro repair.Options, rel *repair.Relation) (*repair.Scope, error) {
	if !opts.DamageStream && opts.DamageKeys == "" && opts.DamageAttribute == "" {
		return nil, nil
	}
	until, _ := time.Parse(time.RFC3339, opts.DamageUntil)
	var since time.Time
	switch {
	case opts.DamageSince != "":
		since, _ = time.Parse(time.RFC3339, opts.DamageSince)
	case rel != nil && rel.RestoredToTime != "":
		t, err := time.Parse(time.RFC3339, rel.RestoredToTime)
		if err != nil {
			return nil, factory.UsageErrorf("--from %s has a %s tag %q that is not a time: give --damage-since TIME", rel.From, "restored-to-time", rel.RestoredToTime)
		}
		since = t
	}
	clients, err := f.AWS(ctx)
	if err != nil {
		return nil, err
	}
	var sc *repair.Scope
	switch {
	case opts.DamageStream:
		if since.IsZero() {
			return nil, factory.UsageErrorf("--damage-stream needs the window's start: --from has no restored-to-time tag, so give --damage-since TIME")
		}
		sc, err = repair.ScopeFromStream(ctx, clients.DynamoDB(), clients.Streams(), ro.To, since, until, f.Now())
	case opts.DamageAttribute != "":
		if ro.FromExport != nil {
			return nil, factory.UsageErrorf("--damage-attribute reads the restored table's items: with --from-export give --damage-stream or --damage-keys FILE")
		}
		sc, err = repair.ScopeFromAttribute(ctx, clients.DynamoDB(), ro.From, ro.To, ro.KeysFile, opts.DamageAttribute, since, until)
	default:
		sc, err = repair.ScopeFromKeyList(ctx, clients.DynamoDB(), ro.To, opts.DamageKeys, since, until)
	}
	if errors.Is(err, repair.ErrScope) {
		return nil, factory.UsageErrorf("%w; nothing was changed", err)
	}
	return sc, err
}
