// Package adopt implements `dynops table adopt`.
package adopt

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/cmd/cmdfacts"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/dynops/dynops/internal/adopt"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/view"
	"github.com/dynops/dynops/internal/safefile"
)

// Options of `dynops table adopt`.
type Options struct {
	Adopt      adopt.Options
	EntryOut   string
	ImportsOut string
	Force      bool // --force: --entry-out and --imports-out may overwrite
}

// NewCmdAdopt returns `dynops table adopt`. runF replaces the run function in tests of flag parsing.
func NewCmdAdopt(f *factory.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{}
	a := &opts.Adopt
	cmd := &cobra.Command{
		Use:   "adopt --table NAME [--env ENV --product P --usage U]",
		Short: "Print the tables.yaml entry and terraform import blocks that bring an existing table under the modules",
		Long: `Adopt reads a live table (and its TTL, PITR, tags, auto scaling targets,
Contributor Insights and resource policy) and prints:

  - its envs/tables.yaml entry: every setting the table has, and wherever it
    deviates from the guideline (docs/guideline.md) an exception with a
    placeholder reason ("TODO adopt: say why ...") that a person replaces,
    or deletes to take the guideline's fix instead;
  - the terraform import blocks for the table and what modules/dynamodb-table
    manages around it, at module.stack.module.table["USAGE"] (--address).

After the import, the next plan changes nothing but the module's standard and
exception tags (and the guideline fixes the team chooses). A name that breaks
DDB-NAME-01 is kept through name_override with that exception; give --env,
--product and --usage for it. Adopt only reads.`,
		Example: `  dynops table adopt --table prod-hoge-user
  dynops table adopt --table LegacyUsers --env prod --product hoge --usage user --entry-out user.yaml --imports-out envs/prod/adopt.tf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.Table == "" {
				return factory.UsageErrorf("table adopt needs --table NAME (the live table to adopt)")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&a.Table, "table", "t", "", "the live table to adopt")
	fl.StringVar(&a.Env, "env", "", "environment (default: from a {env}-{product}-{usage} name)")
	fl.StringVar(&a.Product, "product", "", "product (default: from the name)")
	fl.StringVar(&a.Usage, "usage", "", "usage, the tables.yaml key (default: from the name)")
	fl.StringVar(&a.Address, "address", "", `module address of the table's modules/dynamodb-table (default module.stack.module.table["USAGE"])`)
	fl.StringVar(&opts.EntryOut, "entry-out", "", "also write the tables.yaml entry to FILE")
	fl.StringVar(&opts.ImportsOut, "imports-out", "", "also write the import blocks to FILE (e.g. envs/prod/adopt.tf)")
	fl.BoolVar(&opts.Force, "force", false, "let --entry-out and --imports-out overwrite existing files")
	cmdfacts.ReadOnly(cmd)
	cmdfacts.SetTargets(cmd, "table")
	return cmd
}

// Run reads the table and prints the entry and the import blocks.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	clients, err := f.AWS(ctx)
	if err != nil {
		return err
	}
	res, err := Read(ctx, clients, opts.Adopt)
	if err != nil {
		return err
	}
	return output(f, opts, res)
}

// output writes --entry-out and --imports-out (both checked before either
// is written) and shows the result.
func output(f *factory.Factory, opts *Options, res *adopt.Result) error {
	entry, err := Entry(res)
	if err != nil {
		return err
	}
	imports := Imports(res)
	outs := []struct{ path, what, text string }{{opts.EntryOut, "tables.yaml entry (--entry-out)", entry}, {opts.ImportsOut, "import blocks (--imports-out)", imports}}
	for _, w := range outs { // both checked before either is written
		if w.path != "" {
			if err := safefile.CheckNew(w.path, w.what, opts.Force); err != nil {
				return err
			}
		}
	}
	for _, w := range outs {
		if w.path != "" {
			if err := safefile.WriteFile(w.path, w.what, []byte(w.text), opts.Force); err != nil {
				return err
			}
		}
	}
	return view.Results(f, func(res *adopt.Result) error { return showAdopt(f.IOStreams.Out, res, entry, imports) }).Show(res)
}

// showAdopt is the human view: the tables.yaml entry, the import blocks and
// what differs from the module's defaults.
func showAdopt(out io.Writer, res *adopt.Result, entry, imports string) error {
	fmt.Fprintf(out, "# envs/tables.yaml entry for %s (dynops table adopt): add it under the product's tables.\n", res.Table)
	fmt.Fprint(out, entry)
	fmt.Fprintf(out, "\n# Terraform import blocks (in the env root, e.g. adopt.tf; remove them after the apply):\n%s", imports)
	printDeviations(out, res)
	return nil
}

// Read reads table o.Table in the clients' region and account (from STS, for the
// import IDs) and builds its entry and import blocks.
func Read(ctx context.Context, clients awsclients.Set, o adopt.Options) (*adopt.Result, error) {
	o.Region = clients.Region()
	id, err := clients.STS(0).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return nil, fmt.Errorf("reading the account ID (for import IDs) in %s: %w", clients.Region(), err)
	}
	o.AccountID = aws.ToString(id.Account)
	return adopt.Read(ctx, clients.DynamoDB(), clients.AutoScaling(), o)
}

// Entry renders the tables.yaml entry (keyed by the usage).
func Entry(res *adopt.Result) (string, error) {
	entry, err := yaml.Marshal(map[string]any{res.Usage: res.Entry})
	if err != nil {
		return "", fmt.Errorf("writing the tables.yaml entry: %w", err)
	}
	return string(entry), nil
}

// Imports renders the import blocks.
func Imports(res *adopt.Result) string {
	var b strings.Builder
	for _, i := range res.Imports {
		fmt.Fprintf(&b, "import {\n  to = %s\n  id = %q\n}\n\n", i.To, i.ID)
	}
	return b.String()
}

func printDeviations(out io.Writer, res *adopt.Result) {
	if len(res.Deviations) > 0 {
		fmt.Fprintf(out, "# %s deviates from the guideline here; each is an exception with a placeholder reason.\n# Replace the reason, or delete the lines to take the guideline's fix (docs/guideline.md):\n", res.Table)
		devs := append([]adopt.Deviation(nil), res.Deviations...)
		sort.SliceStable(devs, func(i, j int) bool { return devs[i].Rule < devs[j].Rule })
		for _, d := range devs {
			fmt.Fprintf(out, "#   %s: %s\n", d.Rule, d.Detail)
		}
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(out, "# warning: %s\n", w)
	}
}
