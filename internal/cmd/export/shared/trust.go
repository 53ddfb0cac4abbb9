package shared

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
		by := "vouched for by DynamoDB (DescribeExport)"
		if !v.Verified {
			by = fmt.Sprintf("UNVERIFIED (%s), accepted by --%s %q", v.Unverified, UnverifiedFlag, unverified)
		}
		fmt.Fprintf(out, "export %s: %s\n", v.ExportArn, by)
	}
}
