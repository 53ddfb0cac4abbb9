// Package importcmd implements `dynops export import`: ImportTable from an
// export into a new table (another region for DR, DDB-DR-01), then the
// guideline settings an import does not set (DDB-PITR-02).
package importcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/awsconfig"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"
	"github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/export"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/guideline"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/tablesettings"
)

// Options of `dynops export import`.
type Options struct {
	Bucket       string
	BucketRegion string
	Prefix       string
	Table        string
	HashKey      string
	RangeKey     string
	SchemaFrom   string
	SourceRegion string
	Tags         map[string]string
	Yes          bool
	Confirm      []string
	// Unverified is the --unverified-exports reason ("": none).
	Unverified string
}

// Result is what the import did (or would do, in a dry run).
type Result struct {
	DryRun        bool                    `json:"dry_run"`
	Source        export.Source           `json:"source"`
	Table         string                  `json:"table"`
	Region        string                  `json:"region"`
	Schema        export.Schema           `json:"schema"`
	Settings      []tablesettings.Change  `json:"settings"`                     // planned (dry run) or to apply
	Import        *export.Import          `json:"import,omitempty"`             // as read back with DescribeImport
	Applied       []tablesettings.Change  `json:"applied"`                      // the steps that succeeded
	ReadBack      *tablesettings.Settings `json:"settings_read_back,omitempty"` // from the service after applying
	TableItems    *int64                  `json:"table_items,omitempty"`        // counted with a Scan; nil: not counted
	SourceItems   int64                   `json:"source_items"`                 // -1: no manifest to say
	SettingsError string                  `json:"settings_error,omitempty"`
	Verified      bool                    `json:"verified"` // the export passed exportverify before anything read it
	// Vouched is who vouched for the export (exportverify.Vouch).
	Vouched exportverify.Vouched `json:"vouched"`
}

// NewCmdImport returns `dynops export import`. runF replaces Run in tests of flag parsing.
func NewCmdImport(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "import --bucket B --prefix P --table NEW (--hash-key K:T [--range-key K:T] | --schema-from T) [--region R] [--yes]",
		Short: "Import a full export into a new table (e.g. in another region), then apply the guideline settings",
		Long: `Import first asks DynamoDB to vouch for the export (DescribeExport agrees
with its manifest; see 'dynops export revert'; an export it cannot answer
for, such as the local emulator's, only with --unverified-exports "REASON",
audited, and on a protected table only as the break-glass role), then
verifies it with the code of 'dynops export verify' (manifests, checksum
files, every data file's MD5, ETag, gzip and item count) and refuses on any
finding, before anything is created. It then creates
table NEW with ImportTable from the one full export under --prefix (matched
by path segment; its data/ folder), in the region of --region: the DR "backup &
restore" pattern (DDB-DR-01). The keys and GSIs come from --hash-key and
--range-key, or from the live table --schema-from (in --source-region).

An imported table has none of the guideline settings (DDB-PITR-02): after
the import, dynops enables the stream (NEW_AND_OLD_IMAGES), PITR (35 days),
TTL on ttl, the --tag tags, and deletion protection last.

It creates a table: without --yes it prints the plan and changes nothing;
a protected table (prod, or anything dynops cannot show is not prod, README
"Protected targets") also needs its name typed (or --confirm NAME).`,
		Example: `  dynops export import --bucket prod-hoge-exports --bucket-region eu-west-1 --prefix dr/prod-hoge-user/full \
      --table prod-hoge-user --schema-from prod-hoge-user --source-region eu-west-1 --region eu-central-1 \
      --tag env=prod --tag product=hoge --tag usage=user --yes --confirm prod-hoge-user`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, req := range []struct{ flag, value string }{{"--bucket", opts.Bucket}, {"--prefix", opts.Prefix}, {"--table", opts.Table}} {
				if req.value == "" {
					return factory.UsageErrorf("export import needs %s: give --bucket BUCKET, --prefix PREFIX (one full export's folder) and --table NEW", req.flag)
				}
			}
			if (opts.HashKey == "") == (opts.SchemaFrom == "") {
				return factory.UsageErrorf("give the new table's keys: --hash-key NAME:TYPE [--range-key NAME:TYPE], or --schema-from SOURCE_TABLE (not both)")
			}
			if opts.RangeKey != "" && opts.HashKey == "" {
				return factory.UsageErrorf("--range-key needs --hash-key")
			}
			for flag, v := range map[string]string{"--hash-key": opts.HashKey, "--range-key": opts.RangeKey} {
				if _, err := export.ParseKey(v); v != "" && err != nil {
					return factory.UsageErrorf("%s: %v", flag, err)
				}
			}
			if err := shared.CheckExportFlags(cmd, []string{opts.Prefix}, opts.Unverified); err != nil {
				return err
			}
			if !guideline.FollowsNamingRule(opts.Table, guideline.DefaultEnvs()) {
				return factory.UsageErrorf("--table %q: DDB-NAME-01 wants {env}-{product}-{usage}, e.g. dev-hoge-user", opts.Table)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Bucket, "bucket", "", "bucket holding the export")
	fl.StringVar(&opts.BucketRegion, "bucket-region", "", "region of the bucket (default: --source-region, else --region)")
	flagcheck.Region(fl, "bucket-region")
	fl.StringVar(&opts.Prefix, "prefix", "", "prefix of one full export")
	fl.StringVar(&opts.Table, "table", "", "the NEW table to create (must not exist)")
	fl.StringVar(&opts.HashKey, "hash-key", "", "partition key, NAME:TYPE (S, N or B)")
	fl.StringVar(&opts.RangeKey, "range-key", "", "sort key, NAME:TYPE")
	fl.StringVar(&opts.SchemaFrom, "schema-from", "", "copy keys and GSIs from this live table")
	fl.StringVar(&opts.SourceRegion, "source-region", "", "region of --schema-from (default: --region)")
	flagcheck.Region(fl, "source-region")
	fl.StringToStringVar(&opts.Tags, "tag", nil, "tag for the new table, KEY=VALUE (repeatable)")
	shared.AddUnverifiedFlag(fl, &opts.Unverified)
	fl.BoolVar(&opts.Yes, "yes", false, "do it (default: a dry run that prints the plan)")
	factory.AddConfirmFlag(fl, &opts.Confirm, "the table name of an import into a protected table")
	cmdfacts.Writes(cmd)
	cmdfacts.SetInterrupt(cmd, "an import already started goes on in AWS (the audit log lists what was done); follow it with `aws dynamodb list-imports`, then check the table with `dynops check`")
	cmdfacts.SetTimeout(cmd, awsconfig.DefaultTimeout)
	cmdfacts.SetTargets(cmd, "table", "bucket", "schema-from")
	return cmd
}

// Run plans the import; with --yes (and the prod confirmation) it imports,
// waits, applies the settings and counts the items.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	src, vouched, err := verifiedSource(ctx, f, clients, opts)
	if err != nil {
		return err
	}
	sourceRegion := shared.FirstOf(opts.SourceRegion, clients.Region())
	res := Result{Source: src, Table: opts.Table, Region: clients.Region(), SourceItems: src.Items, Applied: []tablesettings.Change{}, Verified: true, Vouched: vouched}
	if res.Schema, err = schema(ctx, clients, sourceRegion, opts); err != nil {
		return err
	}
	want := wantSettings(src, opts.Tags)
	res.Settings = tablesettings.Plan(tablesettings.Settings{}, want)
	g, err := confirm(ctx, f, opts)
	if err != nil {
		return err
	}
	db := clients.DynamoDB()
	if err := targetAbsent(ctx, db, opts.Table, clients.Region(), src); err != nil {
		return err
	}
	if g.DryRun() {
		res.DryRun = true
		f.Audit.Act(audit.ActPlanImport, opts.Table, map[string]any{"source": src, "region": clients.Region()})
		if err := printResult(f, res); err != nil {
			return err
		}
		g.PrintDryRun("import")
		return nil
	}
	f.Audit.AddRegion(sourceRegion)
	if _, err := g.StartAudit(ctx, audit.Plan{Targets: []string{opts.Table, "s3://" + src.Bucket + "/" + src.DataPrefix},
		Counts: map[string]int64{"tables_to_create": 1, "export_items": src.Items, "settings_to_apply": int64(len(res.Settings))}}); err != nil {
		return err
	}
	out, err := importTable(ctx, f, db, want, &res)
	return finish(ctx, f, db, res, out, err)
}

// verifiedSource finds the export under --prefix, has it vouched for
// (exportverify.Vouch: whom to believe first) and verifies it with the code
// of `export verify`; any finding refuses the import, in the audit record.
func verifiedSource(ctx context.Context, f *factory.Factory, clients awsclients.Set, opts *Options) (export.Source, exportverify.Vouched, error) {
	bucketRegion := shared.FirstOf(opts.BucketRegion, opts.SourceRegion, clients.Region())
	store := exportverify.S3Store{Client: clients.In(bucketRegion).S3(), Bucket: opts.Bucket}
	src, err := export.FindSource(ctx, store, opts.Bucket, opts.Prefix)
	if err != nil {
		return src, exportverify.Vouched{}, err
	}
	var vouched exportverify.Vouched
	if c, ok := src.Claim(); ok {
		var vs []exportverify.Vouched
		vs, err = shared.VouchExports(ctx, f, clients, store, []exportverify.Claim{c}, exportverify.Expect{AnyTable: true, Bucket: opts.Bucket}, opts.Unverified, opts.Table)
		if err == nil {
			vouched = vs[0]
		}
	} else {
		vouched, err = shared.VouchUnnamed(f, store, src.DataPrefix, opts.Unverified, opts.Table)
	}
	if err == nil {
		f.IOStreams.Progress("verifying %s", store.Describe(src.DataPrefix))
		_, err = export.VerifySource(ctx, store, src)
		f.IOStreams.Done()
	}
	if err != nil {
		f.Audit.Act(audit.ActRefuseImport, opts.Table, map[string]any{"source": src, "reason": err.Error()})
		return src, vouched, err
	}
	return src, vouched, nil
}

// wantSettings is the guideline's settings for the new table, tagged with
// the export it was imported from and --tag.
func wantSettings(src export.Source, extra map[string]string) tablesettings.Settings {
	tags := map[string]string{export.TagImportedFrom: "s3://" + src.Bucket + "/" + src.DataPrefix}
	for k, v := range extra {
		tags[k] = v
	}
	return tablesettings.Guideline(tags)
}

// confirm is the guard of the import: the new table does not exist yet, so
// its name and the tags it will get decide. An export DynamoDB does not
// vouch for is read in a dry run; imported into a protected table only by
// the break-glass role.
func confirm(ctx context.Context, f *factory.Factory, opts *Options) (*guard.Confirmed, error) {
	decided, err := guard.Decide(f, protect.Target{Kind: protect.Table, Name: opts.Table, Tags: opts.Tags, TagsFrom: "--tag, to be written"})
	if err != nil {
		return nil, err
	}
	g, err := decided.Confirm(opts.Yes, opts.Confirm)
	if err != nil {
		return nil, err
	}
	if opts.Unverified != "" && !g.DryRun() {
		if err := decided.AllowException(ctx, "--"+shared.UnverifiedFlag); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// importTable imports the export and applies the settings (export.RunImport),
// with the items' progress and each step in the audit record, and puts in
// res what was read back.
func importTable(ctx context.Context, f *factory.Factory, db export.ImportTableDB, want tablesettings.Settings, res *Result) (export.ImportOutcome, error) {
	src, table, region := res.Source, res.Table, res.Region
	bar := f.IOStreams.StartProgress("import into "+table+" ("+region+"): items", src.Items)
	out, err := export.RunImport(ctx, db, export.ImportJob{Source: src, Table: table, Schema: res.Schema, Want: want,
		Started: func(imp export.Import, tookOver bool) error {
			detail := map[string]any{"import_arn": imp.Arn, "source": src, "region": region}
			if tookOver {
				// ImportTable's answer was lost (or it failed) after it landed:
				// the import it started, found by ListImports, is this run's.
				detail["taken_over"] = "an import into this table from this source, already " + imp.Status + ", found after ImportTable failed: taken as this run's instead of starting another"
				f.IOStreams.Progress("ImportTable failed after starting %s (%s): taking it as this run's", imp.Arn, imp.Status)
			}
			f.Audit.Act(audit.ActImportTable, table, detail)
			return nil
		},
		Waiting: func(i export.Import, waited time.Duration) {
			bar.Set(i.Imported)
			bar.Status("%s after %s", i.Status, waited.Round(time.Second))
		},
		Applied: func(c tablesettings.Change) {
			bar.Done() // the import is over: its bar ends before the settings' lines
			f.IOStreams.Progress("applied %s to %s", c.What, table)
			f.Audit.Act(audit.ActApplySetting, table, c)
		}})
	bar.Done()
	f.IOStreams.Done()
	if out.Import.Arn != "" {
		res.Import = &out.Import
	}
	if out.Imported {
		// Planned again against what the new table has: only what was missing is applied.
		if out.Settings != nil {
			res.Settings = out.Settings
		}
		res.ReadBack = out.ReadBack
		res.Applied = append(res.Applied, out.Applied...)
	}
	return out, err
}

// finish ends an import: on failure it shows what was done and says what
// is left; otherwise it counts the new table's items and shows the result.
func finish(ctx context.Context, f *factory.Factory, db export.Scanner, res Result, out export.ImportOutcome, err error) error {
	switch {
	case err != nil && !out.Imported:
		if res.Import != nil {
			_ = printResult(f, res)
		}
		return err
	case err != nil:
		res.SettingsError = err.Error()
		_ = printResult(f, res)
		return fmt.Errorf("%w; the table exists with the data: re-run the settings with the runbook's step", err)
	}
	n, err := export.CountTableItems(ctx, db, res.Table)
	if err != nil {
		_ = printResult(f, res)
		return err
	}
	res.TableItems = &n
	f.Audit.Counts(map[string]int64{"imported": out.Import.Imported, "table_items": n, "settings_applied": int64(len(res.Settings))})
	return printResult(f, res)
}

// targetDB is what targetAbsent reads.
type targetDB interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	export.ImportDB
}

// targetAbsent refuses an import into a table that exists: ImportTable only
// creates new tables, and a dry run must say so before --yes does. One
// exception: the table an import of this same export created (in progress
// or completed, found with ListImports), as a run killed after its
// ImportTable leaves it. The run goes on with that import (StartImport
// takes it over) instead of refusing its own table: the resumed runbook
// step finishes what the killed one started.
func targetAbsent(ctx context.Context, db targetDB, table, region string, src export.Source) error {
	_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return nil
	case err != nil:
		return fmt.Errorf("checking that --table %s does not exist yet: %w", table, err)
	}
	found, ferr := export.FindImport(ctx, db, table, src)
	switch {
	case ferr != nil:
		return factory.UsageErrorf("--table %s already exists in %s: an import creates a NEW table, and whether an earlier run's import of s3://%s/%s created it could not be read (%v): if a killed `export import` created it, follow that import with `aws dynamodb list-imports`; otherwise pass another --table (or delete the table first)",
			table, region, src.Bucket, src.DataPrefix, ferr)
	case found == nil:
		return factory.UsageErrorf("--table %s already exists in %s: an import creates a NEW table; pass another --table (or delete the table first)", table, region)
	}
	return nil
}

func schema(ctx context.Context, clients awsclients.Set, sourceRegion string, opts *Options) (export.Schema, error) {
	if opts.SchemaFrom != "" {
		return export.SchemaOf(ctx, clients.In(sourceRegion).DynamoDB(), opts.SchemaFrom)
	}
	hash, err := export.ParseKey(opts.HashKey)
	if err != nil {
		return export.Schema{}, factory.UsageErrorf("--hash-key: %v", err)
	}
	var rng *types.AttributeDefinition
	if opts.RangeKey != "" {
		r, err := export.ParseKey(opts.RangeKey)
		if err != nil {
			return export.Schema{}, factory.UsageErrorf("--range-key: %v", err)
		}
		rng = &r
	}
	return export.KeySchema(hash, rng), nil
}

// printResult shows the result: showResult's lines, or the JSON document.
func printResult(f *factory.Factory, r Result) error {
	return view.Results(f, func(r Result) error { return showResult(f.IOStreams.Out, r) }).Show(r)
}

// showResult is the human view: the plan of a dry run, or what the import
// did as read back from the service.
func showResult(out io.Writer, r Result) error {
	src := fmt.Sprintf("s3://%s/%s", r.Source.Bucket, r.Source.DataPrefix)
	if r.DryRun {
		fmt.Fprintln(out, guard.DryRunHeader(""))
		fmt.Fprintf(out, "  1. ImportTable %s into NEW table %s in %s (on demand, %d key attribute(s), %d GSI(s))\n", src, r.Table, r.Region, len(r.Schema.KeySchema), len(r.Schema.GSIs))
		for i, c := range r.Settings {
			fmt.Fprintf(out, "  %d. %s: %s\n", i+2, c.What, c.Detail)
		}
		return nil
	}
	imp := r.Import
	if imp == nil {
		fmt.Fprintf(out, "import of %s into %s (%s) did not start\n", src, r.Table, r.Region)
		return nil
	}
	fmt.Fprintf(out, "import %s of %s into %s (%s): %s (read back with DescribeImport)\n", imp.Arn, src, r.Table, r.Region, imp.Status)
	if imp.Status != string(types.ImportStatusCompleted) {
		fmt.Fprintf(out, "  failure: %s\n  no setting was applied; the items read back: %d imported, %d errors\n", orNone(imp.Failure), imp.Imported, imp.Errors)
		return nil
	}
	for _, c := range r.Applied {
		fmt.Fprintf(out, "  applied %s: %s\n", c.What, c.Detail)
	}
	if b := r.ReadBack; b != nil {
		fmt.Fprintf(out, "read back from %s: PITR %s, deletion protection %s, TTL %s, stream %s, %d tag(s)\n",
			r.Table, onOff(b.PITR, fmt.Sprintf(" (%d days)", b.RecoveryPeriodInDays)), onOff(b.DeletionProtection, ""),
			orNone(b.TTLAttribute), orNone(b.StreamViewType), len(b.Tags))
	}
	source := "no manifest (count with dynops export verify --data-only)"
	if r.SourceItems >= 0 {
		source = fmt.Sprint(r.SourceItems)
	}
	counted := "not counted"
	if r.TableItems != nil {
		counted = fmt.Sprintf("holds %d (counted with a Scan)", *r.TableItems)
	}
	fmt.Fprintf(out, "items: export %s, imported %d (DescribeImport), table %s %s\n", source, imp.Imported, r.Table, counted)
	return nil
}

func onOff(on bool, detail string) string {
	if on {
		return "on" + detail
	}
	return "off"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
