package shared

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/exportverify"
)

// UnverifiedFlag is the flag that accepts exports DynamoDB cannot vouch for.
const UnverifiedFlag = "unverified-exports"

// AddUnverifiedFlag registers --unverified-exports REASON.
func AddUnverifiedFlag(fl *pflag.FlagSet, reason *string) {
	fl.StringVar(reason, UnverifiedFlag, "", `REASON: accept exports DynamoDB cannot vouch for (DescribeExport does not know them: copied from another account, or the local emulator, which keeps no export records); printed in the plan, audited, refused on a protected table unless run as the break-glass role`)
}

// CheckExportFlags refuses what no export command may take: an empty
// --prefix (it would read every export in the bucket) and an
// --unverified-exports without a reason.
func CheckExportFlags(cmd *cobra.Command, prefixes []string, unverified string) error {
	for _, p := range prefixes {
		if strings.Trim(p, "/ ") == "" {
			return factory.UsageErrorf("--prefix %q names no folder: it would read every export in the bucket; give the exports' prefix, e.g. --prefix incident/INC-1234", p)
		}
	}
	if cmd.Flags().Changed(UnverifiedFlag) {
		if err := exportverify.ValidReason(unverified); err != nil {
			return factory.UsageErrorf("--%s: %w", UnverifiedFlag, err)
		}
	}
	return nil
}

// Trust is whom an export command believes: DynamoDB in each export's
// region, and the operator's --unverified-exports reason.
func Trust(c awsclients.Set, unverified string) exportverify.Trust {
	return exportverify.Trust{
		Describer:  func(region string) exportverify.ExportDescriber { return c.In(region).DynamoDB() },
		Unverified: unverified,
	}
}

// Refusal makes a refusal of exportverify.Vouch (an export DynamoDB does
// not vouch for, or one that is not what it claims) the usage error it is
// (exit 2, nothing written); any other error (S3 unreachable, Ctrl-C) is
// returned as it is.
func Refusal(err error) error {
	if errors.Is(err, exportverify.ErrContradicted) || errors.Is(err, exportverify.ErrUnvouched) {
		return factory.UsageErrorf("%w", err)
	}
	return err
}

// ExportArns are the ARNs of the exports read.
func ExportArns(vs []exportverify.Vouched) []string {
	arns := make([]string, len(vs))
	for i, v := range vs {
		arns[i] = v.ExportArn
	}
	return arns
}

// PrintVouched prints the source table and each export read, with who
// vouched for it.
func PrintVouched(out io.Writer, sourceTable string, vs []exportverify.Vouched, unverified string) {
	if sourceTable != "" {
		fmt.Fprintf(out, "source table: %s\n", sourceTable)
	}
	for _, v := range vs {
		name := "export " + v.ExportArn
		if v.ExportArn == "" {
			name = "the data under " + v.Dir
		}
		by := "vouched for by DynamoDB (DescribeExport)"
		if !v.Verified {
			by = fmt.Sprintf("UNVERIFIED (%s), accepted by --%s %q", v.Unverified, UnverifiedFlag, unverified)
		}
		fmt.Fprintf(out, "%s: %s\n", name, by)
	}
}

// VouchExports is how a command reads exports: each claim is vouched for
// (exportverify.Vouch) before any of its data files is read, audited
// (export-vouched, on target) and printed on stderr with who vouched for it.
// A refusal is a usage error (exit 2): nothing was read or written.
func VouchExports(ctx context.Context, f *factory.Factory, clients awsclients.Set, store exportverify.Store, claims []exportverify.Claim,
	want exportverify.Expect, unverified, target string) ([]exportverify.Vouched, error) {
	t := Trust(clients, unverified)
	out := make([]exportverify.Vouched, 0, len(claims))
	for _, c := range claims {
		v, err := exportverify.Vouch(ctx, store, c, want, t)
		if err != nil {
			return out, Refusal(err)
		}
		out = append(out, audited(f, target, v, unverified))
	}
	PrintVouched(f.IOStreams.ErrOut, "", out, unverified)
	return out, nil
}

// VouchExport vouches for an export opened by URI (exportverify.OpenExport:
// table diff, pitr repair, migrate backfill) with VouchExports, and returns
// its summary.
func VouchExport(ctx context.Context, f *factory.Factory, clients awsclients.Set, ex *exportverify.Export, want exportverify.Expect,
	unverified, target string) (exportverify.Vouched, exportverify.Summary, error) {
	sum, key, err := ex.ExportSummary(ctx)
	if err != nil {
		return exportverify.Vouched{}, sum, err
	}
	want.Bucket = ""
	if s3s, ok := ex.Store.(exportverify.S3Store); ok {
		want.Bucket = s3s.Bucket
	}
	vs, err := VouchExports(ctx, f, clients, ex.Store, []exportverify.Claim{{SummaryKey: key, Summary: sum}}, want, unverified, target)
	if err != nil {
		return exportverify.Vouched{}, sum, err
	}
	return vs[0], sum, nil
}

// VouchUnnamed is VouchExports for data without manifests under dir (the
// local emulator's exports): accepted only with an --unverified-exports
// reason, and then audited and printed.
func VouchUnnamed(f *factory.Factory, store exportverify.Store, dir, unverified, target string) (exportverify.Vouched, error) {
	v, err := exportverify.VouchUnnamed(store, dir, exportverify.Trust{Unverified: unverified})
	if err != nil {
		return v, Refusal(err)
	}
	v = audited(f, target, v, unverified)
	PrintVouched(f.IOStreams.ErrOut, "", []exportverify.Vouched{v}, unverified)
	return v, nil
}

func audited(f *factory.Factory, target string, v exportverify.Vouched, unverified string) exportverify.Vouched {
	f.Audit.Act(audit.ActExportVouched, target, map[string]any{"export_arn": v.ExportArn, "source_table": v.TableArn, "dir": v.Dir,
		"verified": v.Verified, "unverified": v.Unverified, "unverified_exports": unverified})
	return v
}
