package shared

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/spf13/cobra"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/capacity"
	"github.com/dynops/dynops/internal/cmd/budget"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/migrate"
)

// Budgets are a migration step's capacity budgets (capacity units per
// second, per table, as DynamoDB reports them): reads on the tables it
// scans, writes on the destinations it writes.
type Budgets struct {
	MaxReadUnits, MaxWriteUnits float64
	resolved                    []capacity.Budget
}

// AddBudgetFlags registers --max-read-units (when the step scans tables)
// and --max-write-units (when it writes destinations) on cmd.
func AddBudgetFlags(cmd *cobra.Command, b *Budgets, reads, writes string) {
	if reads != "" {
		budget.AddFlag(cmd.Flags(), &b.MaxReadUnits, capacity.Read, reads)
	}
	if writes != "" {
		budget.AddFlag(cmd.Flags(), &b.MaxWriteUnits, capacity.Write, writes)
	}
}

// Hold resolves the budgets of the scanned and written tables (the flag,
// else 25 % of a provisioned table's capacity, else none), says them on
// stderr (not with -o json) and holds c.DB's Scans and writes to them,
// each table to its own bucket shared by all workers.
func (b *Budgets) Hold(ctx context.Context, f *factory.Factory, c *migrate.Clients, scanned, written []string) error {
	reads, writes := map[string]*capacity.Bucket{}, map[string]*capacity.Bucket{}
	for _, set := range []struct {
		tables []string
		kind   capacity.Kind
		flag   float64
		into   map[string]*capacity.Bucket
	}{{scanned, capacity.Read, b.MaxReadUnits, reads}, {written, capacity.Write, b.MaxWriteUnits, writes}} {
		for _, t := range set.tables {
			bu, err := capacity.Resolve(ctx, c.DB, t, set.kind, set.flag)
			var nf *types.ResourceNotFoundException
			if errors.As(err, &nf) {
				// A missing table has no budget to hold: the step's own
				// check refuses it, naming every missing one.
				continue
			}
			if err != nil {
				return err
			}
			b.resolved = append(b.resolved, bu)
			set.into[t] = bu.Bucket
			if !f.JSON() {
				fmt.Fprintln(f.IOStreams.ErrOut, bu.String())
			}
		}
	}
	c.DB = budgetedDB{DynamoDB: c.DB, scans: capacity.Scans(c.DB, reads), writes: writes}
	return nil
}

// Status is the units per second used of each budget, for the progress line.
func (b *Budgets) Status() string {
	s := ""
	for _, bu := range b.resolved {
		if bu.Bucket != nil {
			u := bu.Bucket.Usage()
			s += fmt.Sprintf(", %s %.1f %sCU/s of %.1f", bu.Table, u.PerSecond, map[capacity.Kind]string{capacity.Read: "R", capacity.Write: "W"}[bu.Kind], u.Budget)
		}
	}
	return s
}

// Record says what each budget used: in the audit (capacity-budget) and,
// without -o json, on stderr.
func (b *Budgets) Record(f *factory.Factory) {
	for _, bu := range b.resolved {
		detail := map[string]any{"budget": bu}
		if bu.Bucket != nil {
			u := bu.Bucket.Usage()
			detail["used"] = u
			if !f.JSON() {
				fmt.Fprintf(f.IOStreams.ErrOut, "%s capacity on %s: %.1f units used, %.1f units/s on average, budget %.1f units/s (as DynamoDB reported)\n",
					bu.Kind, bu.Table, u.Used, u.PerSecond, u.Budget)
			}
		}
		f.Audit.Act(audit.ActCapacityBudget, bu.Table, detail)
	}
}

// Uses lists each budget and what the step used of it, for -o json.
func (b *Budgets) Uses() []capacity.Use {
	uses := []capacity.Use{}
	for _, bu := range b.resolved {
		use := capacity.Use{Budget: bu}
		if bu.Bucket != nil {
			u := bu.Bucket.Usage()
			use.Used = &u
		}
		uses = append(uses, use)
	}
	return uses
}

// budgetedDB holds a migration's Scans and writes to per-table budgets.
type budgetedDB struct {
	migrate.DynamoDB
	scans  capacity.Scanner
	writes map[string]*capacity.Bucket
}

func (d budgetedDB) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return d.scans.Scan(ctx, in, o...)
}

// BatchWriteItem: the migration's batches each write one table
// (batchwrite.Split).
func (d budgetedDB) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if len(in.RequestItems) == 1 {
		for t := range in.RequestItems {
			return capacity.Writes(d.DynamoDB, t, d.writes[t]).BatchWriteItem(ctx, in, o...)
		}
	}
	return d.DynamoDB.BatchWriteItem(ctx, in, o...)
}

func (d budgetedDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	t := aws.ToString(in.TableName)
	return capacity.Items(d.DynamoDB, t, d.writes[t]).PutItem(ctx, in, o...)
}

func (d budgetedDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	t := aws.ToString(in.TableName)
	return capacity.Items(d.DynamoDB, t, d.writes[t]).DeleteItem(ctx, in, o...)
}
