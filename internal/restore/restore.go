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

	"github.com/dynops/dynops/internal/ddbtags"
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
	// Resume finishes a restore into Target that a killed run left half
	// done (the table restored, its settings not all re-applied): only a
	// target that provably is that restore (Existing.Resumable).
	Resume bool
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
	// Resume is the half-done (or finished) restore found at Target that a
	// --resume run takes over; nil for a new restore.
	Resume *Existing `json:"resume,omitempty"`
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
	if err := CheckDynamoDBTableName(p.Target); err != nil {
		return nil, err
	}
	if dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &p.Target}); err == nil {
		e, err := inspect(ctx, db, dt.Table)
		if err != nil {
			return nil, err
		}
		if err := p.takeOver(e, req.Resume); err != nil {
			return nil, err
		}
		p.Resume = &e
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
	p.Changes = steps(tablesettings.Settings{}, want)
	return p, nil
}

// steps are the changes that bring a restored table with settings have to
// want, the restored-from tag (the marker of a finished restore) in a step
// of its own after every other: a table restored from the source without
// that tag is a restore whose settings are not all re-applied yet.
func steps(have, want tablesettings.Settings) []tablesettings.Change {
	marker, ok := want.Tags[TagRestoredFrom]
	rest := want
	rest.Tags = copyTags(want.Tags)
	delete(rest.Tags, TagRestoredFrom)
	cs := tablesettings.Plan(have, rest)
	if ok && have.Tags[TagRestoredFrom] != marker {
		cs = append(cs, tablesettings.TagStep(TagRestoredFrom, map[string]string{TagRestoredFrom: marker}))
	}
	return cs
}

// Existing is what is found at a restore's target name.
type Existing struct {
	Table string `json:"table"`
	Arn   string `json:"arn"`
	// RestoredFrom is the RestoreSummary's SourceTableArn ("" when the
	// table is not a restore of a table).
	RestoredFrom string     `json:"restored_from_arn,omitempty"`
	RestoreTime  *time.Time `json:"restore_time,omitempty"` // RestoreSummary's RestoreDateTime
	Created      *time.Time `json:"created,omitempty"`
	// Marker is the restored-from tag's value, written last by a finished
	// restore; "" when the tag is absent.
	Marker string `json:"restored_from_tag,omitempty"`
}

// Finished reports whether e carries the marker a finished restore writes last.
func (e Existing) Finished() bool { return e.Marker != "" }

// String says what e is, for a refusal.
func (e Existing) String() string {
	if e.RestoredFrom == "" {
		return "a table that is not a point-in-time restore (no RestoreSummary with a source table)"
	}
	s := "a restore of " + e.RestoredFrom
	if e.RestoreTime != nil {
		s += " to " + pitrtime.Format(*e.RestoreTime)
	}
	if e.Finished() {
		return s + ", finished (" + TagRestoredFrom + " tag " + e.Marker + ")"
	}
	return s + ", unfinished (no " + TagRestoredFrom + " tag: its settings were not all re-applied)"
}

// inspect reads what a restore needs to know of the table d: its
// RestoreSummary and its restored-from tag.
func inspect(ctx context.Context, db DynamoDB, d *types.TableDescription) (Existing, error) {
	e := Existing{Table: aws.ToString(d.TableName), Arn: aws.ToString(d.TableArn), Created: utc(d.CreationDateTime)}
	if rs := d.RestoreSummary; rs != nil {
		e.RestoredFrom = aws.ToString(rs.SourceTableArn)
		e.RestoreTime = utc(rs.RestoreDateTime)
	}
	tags, err := ddbtags.List(ctx, db, aws.ToString(d.TableArn))
	if err != nil {
		return e, fmt.Errorf("reading the tags of the existing target %s: %w", e.Table, err)
	}
	e.Marker = tags[TagRestoredFrom]
	return e, nil
}

// mismatch says why e is not this plan's restore, "" when it is: restored
// (RestoreSummary) from the plan's source table, and, when the plan asks
// for a specific time, to that time (to the millisecond); when finished,
// its marker names the source. A plan for the latest restorable time
// accepts any restore time (the latest moved on since).
func (p *Plan) mismatch(e Existing) string {
	switch {
	case e.RestoredFrom == "":
		return "only a restore of " + p.Source + " can be resumed"
	case p.SourceArn == "" || e.RestoredFrom != p.SourceArn:
		return "it was restored from " + e.RestoredFrom + ", not from " + p.Source + " (" + p.SourceArn + ")"
	case !p.Latest && (e.RestoreTime == nil || pitrtime.Format(*e.RestoreTime) != pitrtime.Format(p.RestoreTime)):
		got := "no restore time"
		if e.RestoreTime != nil {
			got = pitrtime.Format(*e.RestoreTime)
		}
		return "it was restored to " + got + ", this run asks for " + pitrtime.Format(p.RestoreTime) +
			" (re-run with the time the killed run restored to, --time " + got + ", if that was the run)"
	case e.Finished() && e.Marker != p.Source:
		return "its " + TagRestoredFrom + " tag says " + e.Marker + ", not " + p.Source
	}
	return ""
}

// takeOver decides whether a run with this plan may use the existing
// target e: only with --resume, and only when e provably is this plan's
// restore (mismatch); anything else is refused, naming the target, what
// was found and the fix (fail closed).
func (p *Plan) takeOver(e Existing, resume bool) error {
	why := p.mismatch(e)
	switch {
	case why != "":
		return fmt.Errorf("%w: %s is %s, so it is not this restore: %s; pass another --target or delete it first",
			ErrTargetExists, p.Target, e, why)
	case !resume && !e.Finished():
		return fmt.Errorf("%w: %s is %s; re-run with --resume to finish it (re-applies the missing settings, then the %s tag), or pass another --target",
			ErrTargetExists, p.Target, e, TagRestoredFrom)
	case !resume:
		return fmt.Errorf("%w: %s is %s, so this restore is already done; pass another --target for a new one (or --resume to read it back)",
			ErrTargetExists, p.Target, e)
	}
	return nil
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
	// TookOver: the run takes the existing target as its own restore
	// (--resume, or its own request whose answer was lost), and why.
	TookOver func(e Existing, why string)
}

// Result is what a restore did.
type Result struct {
	Plan        *Plan                  `json:"plan"`
	TargetArn   string                 `json:"target_arn"`
	RestoreTime time.Time              `json:"restore_time"` // read back from the service
	Applied     []tablesettings.Change `json:"applied"`
	Settings    tablesettings.Settings `json:"settings_read_back"`
	Terraform   string                 `json:"terraform"`
	// Resumed: the restore was already there (a half-done or finished one
	// taken over with --resume); AlreadyDone: it was finished, nothing applied.
	Resumed     bool `json:"resumed,omitempty"`
	AlreadyDone bool `json:"already_done,omitempty"`
}

// Run restores the plan's table, waits until it is ACTIVE and applies the settings.
func Run(ctx context.Context, db DynamoDB, p *Plan, h Hooks) (*Result, error) {
	start := time.Now()
	var out *dynamodb.RestoreTableToPointInTimeOutput
	var err error
	if p.Resume != nil {
		// Prepare found the target and showed it is this restore: read it
		// back again (it is what the run acts on), and check it still is.
		d, e, rerr := reinspect(ctx, db, p.Target)
		if rerr != nil {
			return nil, rerr
		}
		if err := p.takeOver(e, true); err != nil {
			return nil, err
		}
		if h.TookOver != nil {
			h.TookOver(e, "--resume: "+e.String())
		}
		out = &dynamodb.RestoreTableToPointInTimeOutput{TableDescription: d}
		if e.Finished() {
			return readBack(ctx, db, p, out.TableDescription, h)
		}
	} else {
		out, err = db.RestoreTableToPointInTime(ctx, p.Input)
	}
	var exists *types.TableAlreadyExistsException
	if errors.As(err, &exists) {
		d, e, rerr := reinspect(ctx, db, p.Target)
		if rerr != nil {
			return nil, rerr
		}
		if why := ownRestore(p, e, start); why != "" {
			return nil, fmt.Errorf("%w: %s is %s, so it is not this run's restore: %s; pass another --target or delete it first", ErrTargetExists, p.Target, e, why)
		}
		if h.TookOver != nil {
			h.TookOver(e, "TableAlreadyExistsException on a retry: this run's own restore, whose answer was lost")
		}
		out, err = &dynamodb.RestoreTableToPointInTimeOutput{TableDescription: d}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("restoring %s to %s: %w", p.Source, p.Target, err)
	}
	res := &Result{Plan: p, RestoreTime: p.RestoreTime, Applied: []tablesettings.Change{}, Resumed: p.Resume != nil}
	if d := out.TableDescription; d != nil {
		res.TargetArn = aws.ToString(d.TableArn)
		if d.RestoreSummary != nil && d.RestoreSummary.RestoreDateTime != nil {
			res.RestoreTime = d.RestoreSummary.RestoreDateTime.UTC()
		}
	}
	if h.Restored != nil && p.Resume == nil {
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
	err = tablesettings.Apply(ctx, db, p.Target, steps(have, want), func(c tablesettings.Change) {
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

// reinspect reads the target back (DescribeTable, its tags).
func reinspect(ctx context.Context, db DynamoDB, target string) (*types.TableDescription, Existing, error) {
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &target})
	if err != nil {
		return nil, Existing{}, fmt.Errorf("reading back the existing target %s: %w", target, err)
	}
	e, err := inspect(ctx, db, dt.Table)
	return dt.Table, e, err
}

// ownRestore says why e, found after RestoreTableToPointInTime answered
// TableAlreadyExistsException, is not this run's own restore ("" when it
// is): when the run's request landed and its answer was lost, the SDK's
// retry finds the table the first attempt created. It is ours when it was
// restored from the plan's source (RestoreSummary), created since this Run
// began (a minute's leeway for clock skew; Prepare saw no such table) and
// carries no restored-from tag yet (a finished restore of the same plan
// has it: refused). Anything else is someone else's table: refused, fail
// closed. The restore time is not compared: the service may restore to
// another time than asked, and the creation time already shows the table
// is this run's.
func ownRestore(p *Plan, e Existing, start time.Time) string {
	switch {
	case e.RestoredFrom == "":
		return "it is not a point-in-time restore"
	case p.SourceArn == "" || e.RestoredFrom != p.SourceArn:
		return "it was restored from " + e.RestoredFrom + ", not from " + p.Source
	case e.Created == nil || e.Created.Before(start.Add(-time.Minute)):
		return "it was created before this run began"
	case e.Finished():
		return "it is a finished restore"
	}
	return ""
}

// readBack is the Result of a --resume run that found the restore
// finished: nothing applied, the settings read back.
func readBack(ctx context.Context, db DynamoDB, p *Plan, d *types.TableDescription, h Hooks) (*Result, error) {
	res := &Result{Plan: p, TargetArn: aws.ToString(d.TableArn), RestoreTime: p.RestoreTime, Applied: []tablesettings.Change{}, Resumed: true, AlreadyDone: true}
	if rs := d.RestoreSummary; rs != nil && rs.RestoreDateTime != nil {
		res.RestoreTime = rs.RestoreDateTime.UTC()
	}
	if err := tablesettings.WaitActive(ctx, db, p.Target, h.Restoring); err != nil {
		return res, err
	}
	var err error
	if res.Settings, err = tablesettings.Capture(ctx, db, p.Target); err != nil {
		return res, err
	}
	res.Terraform = Adoption(p.Source, p.Target)
	return res, nil
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

// CheckDynamoDBTableName returns an error saying how name breaks DynamoDB's
// rule for table names (3-255 characters of a-z, A-Z, 0-9, _, -, .); it says
// nothing of the naming guideline (guideline.FollowsNamingRule).
func CheckDynamoDBTableName(name string) error {
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
