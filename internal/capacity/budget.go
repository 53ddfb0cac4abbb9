package capacity

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Kind is which capacity a budget holds: read or write units.
type Kind string

const (
	Read  Kind = "read"
	Write Kind = "write"
)

// Flag is the name of the flag that sets a budget of this kind.
func (k Kind) Flag() string { return "max-" + string(k) + "-units" }

// Describer reads a table's provisioned throughput.
type Describer interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// Budget is the budget a run holds to and where it came from.
type Budget struct {
	Bucket *Bucket `json:"-"`
	Kind   Kind    `json:"kind"`
	Table  string  `json:"table"`
	// UnitsPerSecond is 0 when the run has no budget.
	UnitsPerSecond float64 `json:"budget_units_per_second"`
	// Source says where the budget came from: the flag, the provisioned
	// default, or none (on-demand).
	Source string `json:"source"`
	// Provisioned is the table's provisioned capacity of this kind when the
	// budget is the default share of it (0 otherwise).
	Provisioned int64 `json:"provisioned_units,omitempty"`
}

// Use is a budget as -o json reports it: the budget, the estimate made
// before the run (when one was) and what the run used of it (when it had a
// bucket to count in).
type Use struct {
	Budget
	Estimate *Estimate `json:"estimate,omitempty"`
	Used     *Usage    `json:"used,omitempty"`
}

// String is the budget as the plan shows it.
func (b Budget) String() string {
	if b.Bucket == nil {
		return fmt.Sprintf("%s budget on %s: none (%s)", b.Kind, b.Table, b.Source)
	}
	return fmt.Sprintf("%s budget on %s: %g units/s (%s)", b.Kind, b.Table, b.UnitsPerSecond, b.Source)
}

// Resolve is the budget of kind k on table: flag when it is more than 0;
// otherwise DefaultFraction of the table's provisioned capacity read with
// DescribeTable, or none for an on-demand table. A table whose capacity
// cannot be read is an error naming the flag that sets the budget instead.
func Resolve(ctx context.Context, db Describer, table string, k Kind, flag float64) (Budget, error) {
	b := Budget{Kind: k, Table: table}
	if flag > 0 {
		bk, err := NewBucket(flag, nil)
		if err != nil {
			return b, err
		}
		b.Bucket, b.UnitsPerSecond, b.Source = bk, flag, "--"+k.Flag()
		return b, nil
	}
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return b, fmt.Errorf("reading the provisioned capacity of %s for the default %s budget (give --%s N to set it): %w", table, k, k.Flag(), err)
	}
	var prov int64
	if t := out.Table; t != nil {
		if t.BillingModeSummary != nil && t.BillingModeSummary.BillingMode == types.BillingModePayPerRequest {
			b.Source = "on-demand table: no budget unless --" + k.Flag() + " is given"
			return b, nil
		}
		if p := t.ProvisionedThroughput; p != nil {
			if k == Read {
				prov = aws.ToInt64(p.ReadCapacityUnits)
			} else {
				prov = aws.ToInt64(p.WriteCapacityUnits)
			}
		}
	}
	if prov <= 0 {
		b.Source = "on-demand table: no budget unless --" + k.Flag() + " is given"
		return b, nil
	}
	d := Default(prov)
	bk, err := NewBucket(d, nil)
	if err != nil {
		return b, err
	}
	b.Bucket, b.UnitsPerSecond, b.Provisioned = bk, d, prov
	b.Source = fmt.Sprintf("default: %d %% of the table's %d provisioned %s units; --%s to change", int(DefaultFraction*100), prov, k, k.Flag())
	return b, nil
}

// DescribeOnce is db with each table's DescribeTable read once per run: a
// command that checks the tables' keys, resolves their budgets and
// estimates their size before it scans (table diff) asks DynamoDB once per
// table, not once per question. Only successful answers are kept (a failed
// call is made again when asked again). It is safe for concurrent use.
func DescribeOnce(db Describer) Describer {
	return &describeOnce{db: db, tables: map[string]*dynamodb.DescribeTableOutput{}}
}

type describeOnce struct {
	db     Describer
	mu     sync.Mutex
	tables map[string]*dynamodb.DescribeTableOutput
}

func (d *describeOnce) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, o ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	name := aws.ToString(in.TableName)
	d.mu.Lock()
	out, ok := d.tables[name]
	d.mu.Unlock()
	if ok {
		return out, nil
	}
	out, err := d.db.DescribeTable(ctx, in, o...)
	if err != nil {
		return out, err
	}
	d.mu.Lock()
	d.tables[name] = out
	d.mu.Unlock()
	return out, nil
}
