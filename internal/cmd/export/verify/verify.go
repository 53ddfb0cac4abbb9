// Package verify implements `dynops export verify`.
package verify

import (
	"context"
	"fmt"

	"github.com/dynops/dynops/internal/cmd/cmdfacts"

	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/cmd/export/shared"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/flagcheck"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/exportverify"
	"github.com/dynops/dynops/internal/iostreams"
)

// Options of `dynops export verify`.
type Options struct {
	Bucket   string
	Dir      string
	Prefix   string
	DataOnly bool
	Parallel int
	// Unverified is the --unverified-exports reason ("": none).
	Unverified string
}

// NewCmdVerify returns `dynops export verify`. runF replaces Run in tests of flag parsing.
func NewCmdVerify(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "verify (--bucket B | --dir D) --prefix P [--data-only]",
		Short: "Check an export against its manifests: every data file present, intact and counted",
		Long: `Verify reads every export under the prefix (each manifest-summary.json) and
checks that each data file listed in manifest-files.json exists, has the
listed MD5 and ETag, decodes as gzip DynamoDB JSON and holds the listed
number of items, and that the counts add up to the summary's itemCount.
A missing or corrupt file is reported with its key. Exit status 1 when
anything fails.

--data-only checks exports without manifests (the local emulator writes
none): every data/*.gz under the prefix must decode; items are counted, but
nothing can be compared with a manifest. --dir verifies a local copy
(e.g. after aws s3 sync) laid out like the bucket.

Before a data file is read, each export must be one DynamoDB vouches for
(DescribeExport agrees with its manifest, no data file written after the
export's end; see 'dynops export revert'). Exports it cannot answer for
(another account's, a local copy, the emulator's, --data-only) are refused
(exit 2) unless --unverified-exports "REASON" accepts them: printed and
audited.`,
		Example: `  dynops export verify --bucket dev-hoge-exports --prefix scheduled/dev-hoge-user/full
  dynops export verify --bucket local-hoge-exports --prefix demo --data-only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (opts.Bucket == "") == (opts.Dir == "") {
				return factory.UsageErrorf("export verify needs --bucket BUCKET (or --dir DIR for a local copy), not both")
			}
			if err := shared.CheckExportFlags(cmd, nil, opts.Unverified); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Bucket, "bucket", "", "bucket holding the export")
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "local copy of the bucket, instead of --bucket")
	cmd.Flags().StringVar(&opts.Prefix, "prefix", "", "prefix of the export(s) to verify")
	cmd.Flags().BoolVar(&opts.DataOnly, "data-only", false, "no manifests: decode and count every data file (emulator exports)")
	cmd.Flags().IntVar(&opts.Parallel, "parallel", 4, "files read at once")
	shared.AddUnverifiedFlag(cmd.Flags(), &opts.Unverified)
	flagcheck.Range(cmd.Flags(), "parallel", "1", "1024", "export data files read at once")
	cmdfacts.SetInterrupt(cmd, "nothing was changed; run the verify again")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd, "bucket")
	return cmd
}

func boolCount(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Run verifies and prints the report; ExitError{1} when a check fails.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx) // DynamoDB vouches for the exports of a local copy too
	if err != nil {
		return err
	}
	var store exportverify.Store = exportverify.DirStore{Root: opts.Dir}
	target := opts.Dir
	if opts.Bucket != "" {
		store, target = exportverify.S3Store{Client: clients.S3(), Bucket: opts.Bucket}, opts.Bucket
	}
	if opts.DataOnly {
		if _, err := shared.VouchUnnamed(f, store, opts.Prefix, opts.Unverified, target); err != nil {
			return err
		}
	} else {
		claims, err := exportverify.Claims(ctx, store, opts.Prefix)
		if err != nil {
			return err
		}
		// None: Verify says so, naming --data-only.
		if _, err := shared.VouchExports(ctx, f, clients, store, claims, exportverify.Expect{AnyTable: true, Bucket: opts.Bucket}, opts.Unverified, target); err != nil {
			return err
		}
	}
	rep, err := exportverify.Verify(ctx, store, opts.Prefix, exportverify.Options{
		DataOnly: opts.DataOnly, Parallel: opts.Parallel,
		Progress: func(done, total int) { f.IOStreams.Progress("verified %d/%d data files", done, total) },
	})
	f.IOStreams.Done()
	if err != nil {
		return err
	}
	f.Audit.Counts(map[string]int64{"exports": int64(len(rep.Exports)), "items": rep.Items, "bytes": rep.Bytes, "ok": boolCount(rep.OK)})
	if err := view.Results(f, func(rep exportverify.Report) error { return printReport(f.IOStreams, rep) }).Show(rep); err != nil {
		return err
	}
	if !rep.OK {
		return factory.ExitError{Code: 1}
	}
	return nil
}

func printReport(ios *iostreams.IOStreams, rep exportverify.Report) error {
	var rows [][]string
	for _, ex := range rep.Exports {
		for _, fr := range ex.Files {
			status := ios.Colour(iostreams.Green, fr.Status)
			if fr.Status != exportverify.StatusOK {
				status = ios.Colour(iostreams.Red, fr.Status)
			}
			listed := fmt.Sprint(fr.ListedItems)
			if rep.Mode == "data-only" {
				listed = "-"
			}
			rows = append(rows, []string{fr.Key, status, fmt.Sprint(fr.Bytes), fmt.Sprint(fr.Items), listed, fr.Detail})
		}
	}
	if err := ios.Table([]string{"DATA FILE", "STATUS", "BYTES", "ITEMS", "LISTED", "DETAIL"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(ios.Out)
	for _, ex := range rep.Exports {
		verdict := ios.Colour(iostreams.Green, "OK")
		if !ex.OK {
			verdict = ios.Colour(iostreams.Red, "FAILED")
		}
		good := 0
		for _, fr := range ex.Files {
			if fr.Status == exportverify.StatusOK {
				good++
			}
		}
		switch rep.Mode {
		case "data-only":
			fmt.Fprintf(ios.Out, "%s: %s, %d of %d data files decode, %d items (data-only: no manifest to compare with)\n", ex.Dir, verdict, good, len(ex.Files), ex.Items)
		default:
			fmt.Fprintf(ios.Out, "%s (%s %s): %s, %d items in %d files; manifest-summary says %d\n", ex.Dir, ex.ExportType, ex.ExportArn, verdict, ex.Items, len(ex.Files), ex.SummaryItems)
		}
		for _, p := range ex.Problems {
			fmt.Fprintf(ios.Out, "  - %s\n", p)
		}
	}
	return nil
}
