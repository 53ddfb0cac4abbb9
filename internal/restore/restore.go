// Package restore restores a DynamoDB table to a point in time into a new
// table and re-applies what a restore does not carry over (DDB-PITR-02).
//
// Prepare checks the request (the time against the restorable window, the
// target name, that the target does not exist) and builds the plan: the
// RestoreTableToPointInTime input, with the source's billing mode, indexes
// and encryption, and the settings to re-apply, captured from the source
// with internal/tablesettings plus the restored-from and restored-to-time
// tags. Run carries the plan out: restore, wait until ACTIVE, then plan the
// settings against what the new table has and apply them.
package restore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/pitrtime"
	"github.com/dynops/dynops/internal/tablesettings"
)

// DynamoDB is the part of the API a restore uses.
type DynamoDB interface {
	tablesettings.DynamoDB
	RestoreTableToPointInTime(context.Context, *dynamodb.RestoreTableToPointInTimeInput, ...func(*dynamodb.Options)) (*dynamodb.RestoreTableToPointInTimeOutput, error)
}

// Tags added to the restored table.
const (
	TagRestoredFrom   = "restored-from"
	TagRestoredToTime = "restored-to-time"
)

// Errors a caller may want to tell apart (bad input rather than a failure).
var (
	ErrOutsideWindow = errors.New("restore time outside the restorable window")
	ErrPITROff       = errors.New("point-in-time recovery is off")
	ErrTargetExists  = errors.New("target table already exists")
	ErrBadTarget     = errors.New("invalid target table name")
)

// Window is a table's point-in-time recovery state.
type Window struct {
	Table                string     `json:"table"`
	Status               string     `json:"status"` // ENABLED, DISABLED, ...
	RecoveryPeriodInDays int32      `json:"recovery_period_in_days,omitempty"`
	Earliest             *time.Time `json:"earliest_restorable_time,omitempty"`
	Latest               *time.Time `json:"latest_restorable_time,omitempty"`
}

// Enabled reports whether the table can be restored to a point in time.
func (w Window) Enabled() bool {
	return w.Status == string(types.PointInTimeRecoveryStatusEnabled) && w.Earliest != nil && w.Latest != nil
}

// String is the window in UTC to the millisecond, e.g.
// "2026-11-01T10:00:00.000Z .. 2026-11-21T21:40:00.250Z".
func (w Window) String() string {
	if !w.Enabled() {
		return "none (PITR " + strings.ToLower(w.Status) + ")"
	}
	return pitrtime.Format(*w.Earliest) + " .. " + pitrtime.Format(*w.Latest)
}

// Status reads table's point-in-time recovery state.
func Status(ctx context.Context, db tablesettings.DynamoDB, table string) (Window, error) {
	out, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: &table})
	if err != nil {
		return Window{}, fmt.Errorf("describing continuous backups of %s: %w", table, err)
	}
	w := Window{Table: table, Status: string(types.PointInTimeRecoveryStatusDisabled)}
	if d := out.ContinuousBackupsDescription; d != nil && d.PointInTimeRecoveryDescription != nil {
		p := d.PointInTimeRecoveryDescription
		w.Status = string(p.PointInTimeRecoveryStatus)
		w.RecoveryPeriodInDays = aws.ToInt32(p.RecoveryPeriodInDays)
		w.Earliest, w.Latest = utc(p.EarliestRestorableDateTime), utc(p.LatestRestorableDateTime)
	}
	return w, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Check returns the time to restore to for t, or an error naming the window
// when t cannot be restored to. Both bounds are accepted exactly as printed
// (milliseconds): a bound copied from `pitr status` resolves to the bound.
func (w Window) Check(t time.Time) (time.Time, error) {
	if !w.Enabled() {
		return t, fmt.Errorf("%w on %s (DDB-PITR-01): there is no point in time to restore to", ErrPITROff, w.Table)
	}
	r, ok := pitrtime.Resolve(t, *w.Earliest, *w.Latest)
	if !ok {
		return t, fmt.Errorf("%w: --time %s is outside the restorable window of %s, %s (UTC); pick a time inside it or use --latest",
			ErrOutsideWindow, pitrtime.Format(t), w.Table, w)
	}
	return r.UTC(), nil
}

// Request is what to restore.
type Request struct {
	Source string
	Target string    // "" for DefaultTarget(Source, Now)
	Time   time.Time // ignored when Latest
	Latest bool
	Now    time.Time
}

// Plan is a checked restore, ready to run.
type Plan struct {
	Source      string                                   `json:"source"`
	SourceArn   string                                   `json:"source_arn"`
	Target      string                                   `json:"target"`
	Latest      bool                                     `json:"latest"`
	RestoreTime time.Time                                `json:"restore_time"` // the asked time, or the latest restorable when planned
	Window      Window                                   `json:"window"`
	Input       *dynamodb.RestoreTableToPointInTimeInput `json:"restore_input"`
	// Settings are what the restored table gets after the restore (from the source, plus tags).
	Settings tablesettings.Settings `json:"settings"`
	// Changes are the settings steps as planned against a table that has none of them.
	Changes []tablesettings.Change `json:"changes"`
}

// Prepare checks req and returns the plan. It changes nothing.
func Prepare(ctx context.Context, db DynamoDB, req Request) (*Plan, error) {
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &req.Source})
	if err != nil {
		return nil, fmt.Errorf("describing source table %s: %w", req.Source, err)
	}
	src := dt.Table
	w, err := Status(ctx, db, req.Source)
	if err != nil {
		return nil, err
	}
	p := &Plan{Source: req.Source, SourceArn: aws.ToString(src.TableArn), Target: req.Target, Latest: req.Latest, Window: w}
	if req.Latest {
		if !w.Enabled() {
			return nil, fmt.Errorf("%w on %s (DDB-PITR-01): there is no point in time to restore to", ErrPITROff, req.Source)
		}
		p.RestoreTime = *w.Latest
	} else {
		if p.RestoreTime, err = w.Check(req.Time); err != nil {
			return nil, err
		}
	}
	if p.Target == "" {
		if p.Target, err = DefaultTarget(req.Source, req.Now); err != nil {
			return nil, err
		}
	}
	if err := ValidTableName(p.Target); err != nil {
		return nil, err
	}
	if _, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.Target}); err == nil {
		return nil, fmt.Errorf("%w: %s; pass another --target or delete it first", ErrTargetExists, p.Target)
	} else if rnf := (*types.ResourceNotFoundException)(nil); !errors.As(err, &rnf) {
		return nil, fmt.Errorf("checking target table %s: %w", p.Target, err)
	}
	p.Input = restoreInput(src, p)

	want, err := tablesettings.Capture(ctx, db, req.Source)
	if err != nil {
		return nil, err
	}
	want.Tags[TagRestoredFrom] = req.Source
	want.Tags[TagRestoredToTime] = pitrtime.Format(p.RestoreTime)
	want.ResourcePolicy = retarget(want.ResourcePolicy, aws.ToString(src.TableArn), p.Target)
	p.Settings = want
	p.Changes = tablesettings.Plan(tablesettings.Settings{}, want)
	return p, nil
}

// restoreInput restores with the source's billing mode, indexes and
// encryption, so the new table matches the original apart from its name.
func restoreInput(src *types.TableDescription, p *Plan) *dynamodb.RestoreTableToPointInTimeInput {
	in := &dynamodb.RestoreTableToPointInTimeInput{SourceTableName: &p.Source, TargetTableName: &p.Target}
	if p.Latest {
		in.UseLatestRestorableTime = aws.Bool(true)
	} else {
		t := p.RestoreTime
		in.RestoreDateTime = &t
	}
	provisioned := src.BillingModeSummary != nil && src.BillingModeSummary.BillingMode == types.BillingModeProvisioned ||
		src.BillingModeSummary == nil && src.ProvisionedThroughput != nil && aws.ToInt64(src.ProvisionedThroughput.ReadCapacityUnits) > 0
	if provisioned {
		in.BillingModeOverride = types.BillingModeProvisioned
		in.ProvisionedThroughputOverride = throughput(src.ProvisionedThroughput)
	} else {
		in.BillingModeOverride = types.BillingModePayPerRequest
	}
	for _, g := range src.GlobalSecondaryIndexes {
		gsi := types.GlobalSecondaryIndex{IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection}
		if provisioned {
			gsi.ProvisionedThroughput = throughput(g.ProvisionedThroughput)
		}
		in.GlobalSecondaryIndexOverride = append(in.GlobalSecondaryIndexOverride, gsi)
	}
	for _, l := range src.LocalSecondaryIndexes {
		in.LocalSecondaryIndexOverride = append(in.LocalSecondaryIndexOverride,
			types.LocalSecondaryIndex{IndexName: l.IndexName, KeySchema: l.KeySchema, Projection: l.Projection})
	}
	// No SSEDescription means the AWS owned key (DDB-SEC-04 default).
	sse := &types.SSESpecification{Enabled: aws.Bool(false)}
	if d := src.SSEDescription; d != nil && d.Status == types.SSEStatusEnabled {
		sse = &types.SSESpecification{Enabled: aws.Bool(true), SSEType: d.SSEType}
		if d.SSEType == types.SSETypeKms && d.KMSMasterKeyArn != nil {
			sse.KMSMasterKeyId = d.KMSMasterKeyArn
		}
	}
	in.SSESpecificationOverride = sse
	return in
}

func throughput(d *types.ProvisionedThroughputDescription) *types.ProvisionedThroughput {
	if d == nil {
		return nil
	}
	return &types.ProvisionedThroughput{ReadCapacityUnits: d.ReadCapacityUnits, WriteCapacityUnits: d.WriteCapacityUnits}
}

// retarget rewrites a resource policy written for the source table so it
// names the target table (and its indexes and streams) instead: a table's
// policy may only name that table.
func retarget(policy, sourceArn, target string) string {
	if policy == "" || sourceArn == "" {
		return policy
	}
	prefix, _, ok := strings.Cut(sourceArn, ":table/")
	if !ok {
		return policy
	}
	targetArn := prefix + ":table/" + target
	for _, end := range []string{`"`, "/"} {
		policy = strings.ReplaceAll(policy, sourceArn+end, targetArn+end)
	}
	return policy
}

// Hooks report a running restore.
type Hooks struct {
	Restoring func(status string, waited time.Duration) // while waiting for ACTIVE
	Restored  func(arn string, restoreTime time.Time)   // the new table exists
	Applied   func(tablesettings.Change)                // a setting was applied
}

// Result is what a restore did.
type Result struct {
	Plan        *Plan                  `json:"plan"`
	TargetArn   string                 `json:"target_arn"`
	RestoreTime time.Time              `json:"restore_time"` // read back from the service
	Applied     []tablesettings.Change `json:"applied"`
	Settings    tablesettings.Settings `json:"settings_read_back"`
	Terraform   string                 `json:"terraform"`
}

// Run restores the plan's table, waits until it is ACTIVE and applies the settings.
func Run(ctx context.Context, db DynamoDB, p *Plan, h Hooks) (*Result, error) {
	start := time.Now()
	out, err := db.RestoreTableToPointInTime(ctx, p.Input)
	var exists *types.TableAlreadyExistsException
	if errors.As(err, &exists) {
		d, ours, rerr := ownRestore(ctx, db, p, start)
		if rerr != nil {
			return nil, rerr
		}
		if !ours {
			return nil, fmt.Errorf("%w: %s; pass another --target or delete it first", ErrTargetExists, p.Target)
		}
		out, err = &dynamodb.RestoreTableToPointInTimeOutput{TableDescription: d}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("restoring %s to %s: %w", p.Source, p.Target, err)
	}
	res := &Result{Plan: p, RestoreTime: p.RestoreTime, Applied: []tablesettings.Change{}}
	if d := out.TableDescription; d != nil {
		res.TargetArn = aws.ToString(d.TableArn)
		if d.RestoreSummary != nil && d.RestoreSummary.RestoreDateTime != nil {
			res.RestoreTime = d.RestoreSummary.RestoreDateTime.UTC()
		}
	}
	if h.Restored != nil {
		h.Restored(res.TargetArn, res.RestoreTime)
	}
	if err := tablesettings.WaitActive(ctx, db, p.Target, h.Restoring); err != nil {
		return res, err
	}
	// Read back the point in time the service restored to: it may differ
	// from the one asked (the caller says so).
	if dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.Target}); err != nil {
		return res, fmt.Errorf("reading back the restore of %s: %w", p.Target, err)
	} else if rs := dt.Table.RestoreSummary; rs != nil && rs.RestoreDateTime != nil {
		res.RestoreTime = rs.RestoreDateTime.UTC()
	}
	have, err := tablesettings.Capture(ctx, db, p.Target)
	if err != nil {
		return res, err
	}
	want := p.Settings
	want.Tags = copyTags(p.Settings.Tags)
	want.Tags[TagRestoredToTime] = pitrtime.Format(res.RestoreTime)
	err = tablesettings.Apply(ctx, db, p.Target, tablesettings.Plan(have, want), func(c tablesettings.Change) {
		res.Applied = append(res.Applied, c)
		if h.Applied != nil {
			h.Applied(c)
		}
	})
	if err != nil {
		return res, err
	}
	if res.Settings, err = tablesettings.Capture(ctx, db, p.Target); err != nil {
		return res, err
	}
	res.Terraform = Adoption(p.Source, p.Target)
	return res, nil
}

// ownRestore reads back the target after RestoreTableToPointInTime answered
// TableAlreadyExistsException: when this run's own request landed and its
// answer was lost, the SDK's retry finds the table the first attempt
// created. It is ours when it was restored from the plan's source
// (RestoreSummary), created since this Run began (a minute's leeway for
// clock skew; Prepare saw no such table) and carries no restored-from tag
// yet (a finished restore of the same plan has it: refused). Anything else is
// someone else's table: refused, fail closed.
func ownRestore(ctx context.Context, db DynamoDB, p *Plan, start time.Time) (*types.TableDescription, bool, error) {
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.Target})
	if err != nil {
		return nil, false, fmt.Errorf("reading back %s after TableAlreadyExistsException: %w", p.Target, err)
	}
	d := dt.Table
	rs := d.RestoreSummary
	if rs == nil || p.SourceArn == "" || aws.ToString(rs.SourceTableArn) != p.SourceArn ||
		d.CreationDateTime == nil || d.CreationDateTime.Before(start.Add(-time.Minute)) {
		return d, false, nil
	}
	var next *string
	for {
		out, err := db.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: d.TableArn, NextToken: next})
		if err != nil {
			return nil, false, fmt.Errorf("reading the tags of %s after TableAlreadyExistsException: %w", p.Target, err)
		}
		for _, tag := range out.Tags {
			if aws.ToString(tag.Key) == TagRestoredFrom {
				return d, false, nil
			}
		}
		if next = out.NextToken; next == nil {
			return d, true, nil
		}
	}
}

func copyTags(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// tableName is DynamoDB's rule for table names.
var tableName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

// ValidTableName returns an error saying what is wrong with a target name.
func ValidTableName(name string) error {
	if !tableName.MatchString(name) {
		return fmt.Errorf("%w %q: DynamoDB table names are 3-255 characters of a-z, A-Z, 0-9, '_', '-', '.'", ErrBadTarget, name)
	}
	return nil
}

// DefaultTarget is `{source}-restored-{UTC timestamp}`, e.g.
// prod-hoge-user-restored-20261121t214700z: lower case, so it still follows
// the naming rule (DDB-NAME-01) and sorts by time.
func DefaultTarget(source string, now time.Time) (string, error) {
	name := source + "-restored-" + strings.ToLower(now.UTC().Format("20060102T150405Z"))
	if len(name) > 255 {
		return "", fmt.Errorf("%w: %s is too long to add -restored-<time> (255 characters at most): pass --target", ErrBadTarget, source)
	}
	return name, nil
}
