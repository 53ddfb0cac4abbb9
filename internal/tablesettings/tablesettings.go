// Package tablesettings captures the settings of a DynamoDB table that a
// restore or an import does not carry over (DDB-PITR-02: PITR and its
// period, deletion protection, TTL, stream, tags, resource policy), plans the
// changes that bring another table to them, and applies that plan.
package tablesettings

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynops/dynops/internal/ddbtags"
	"github.com/dynops/dynops/internal/permissions"
	"github.com/dynops/dynops/internal/poll"
)

// DynamoDB is the part of the API this package uses.
type DynamoDB interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	DescribeContinuousBackups(context.Context, *dynamodb.DescribeContinuousBackupsInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeContinuousBackupsOutput, error)
	DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
	ListTagsOfResource(context.Context, *dynamodb.ListTagsOfResourceInput, ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error)
	GetResourcePolicy(context.Context, *dynamodb.GetResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.GetResourcePolicyOutput, error)
	UpdateTable(context.Context, *dynamodb.UpdateTableInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
	UpdateContinuousBackups(context.Context, *dynamodb.UpdateContinuousBackupsInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateContinuousBackupsOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	TagResource(context.Context, *dynamodb.TagResourceInput, ...func(*dynamodb.Options)) (*dynamodb.TagResourceOutput, error)
	PutResourcePolicy(context.Context, *dynamodb.PutResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.PutResourcePolicyOutput, error)
}

// Settings are what DDB-PITR-02 says a restored table does not carry over.
type Settings struct {
	PITR                 bool              `json:"pitr"`
	RecoveryPeriodInDays int32             `json:"recovery_period_in_days,omitempty"`
	DeletionProtection   bool              `json:"deletion_protection"`
	TTLAttribute         string            `json:"ttl_attribute,omitempty"` // "" when TTL is off
	StreamViewType       string            `json:"stream_view_type,omitempty"`
	Tags                 map[string]string `json:"tags,omitempty"`
	ResourcePolicy       string            `json:"resource_policy,omitempty"`
}

// Guideline returns the settings the guideline wants on a table with no
// source to copy from (e.g. an import): PITR 35 days, deletion protection,
// TTL on `ttl`, stream NEW_AND_OLD_IMAGES.
func Guideline(tags map[string]string) Settings {
	return Settings{PITR: true, RecoveryPeriodInDays: 35, DeletionProtection: true, TTLAttribute: "ttl",
		StreamViewType: string(types.StreamViewTypeNewAndOldImages), Tags: tags}
}

// Capture reads table's settings.
func Capture(ctx context.Context, db DynamoDB, table string) (Settings, error) {
	var s Settings
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return s, fmt.Errorf("describing %s: %w", table, err)
	}
	t := dt.Table
	s.DeletionProtection = aws.ToBool(t.DeletionProtectionEnabled)
	if ss := t.StreamSpecification; ss != nil && aws.ToBool(ss.StreamEnabled) {
		s.StreamViewType = string(ss.StreamViewType)
	}
	cb, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: &table})
	if err != nil {
		return s, fmt.Errorf("describing continuous backups of %s: %w", table, err)
	}
	if d := cb.ContinuousBackupsDescription; d != nil && d.PointInTimeRecoveryDescription != nil &&
		d.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus == types.PointInTimeRecoveryStatusEnabled {
		s.PITR = true
		s.RecoveryPeriodInDays = aws.ToInt32(d.PointInTimeRecoveryDescription.RecoveryPeriodInDays)
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: &table})
	if err != nil {
		return s, fmt.Errorf("describing TTL of %s: %w", table, err)
	}
	if d := ttl.TimeToLiveDescription; d != nil && (d.TimeToLiveStatus == types.TimeToLiveStatusEnabled || d.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		s.TTLAttribute = aws.ToString(d.AttributeName)
	}
	if s.Tags, err = ddbtags.List(ctx, db, aws.ToString(t.TableArn)); err != nil {
		return s, fmt.Errorf("listing tags of %s: %w", table, err)
	}
	pol, err := db.GetResourcePolicy(ctx, &dynamodb.GetResourcePolicyInput{ResourceArn: t.TableArn})
	var notFound *types.PolicyNotFoundException
	var rnf *types.ResourceNotFoundException
	switch {
	case err == nil:
		s.ResourcePolicy = aws.ToString(pol.Policy)
	case errors.As(err, &notFound), errors.As(err, &rnf):
	default:
		return s, fmt.Errorf("reading resource policy of %s: %w", table, err)
	}
	return s, nil
}

// Change is one step of a plan: what it sets and to what.
type Change struct {
	What   string `json:"what"`
	Detail string `json:"detail"`
	apply  func(ctx context.Context, db DynamoDB, table, arn string) error
}

// Plan returns the changes that bring a table with settings have to want.
// Deletion protection comes last, so a failed step leaves the table deletable
// for clean-up; the stream comes first, since it needs the table ACTIVE.
func Plan(have, want Settings) []Change {
	var cs []Change
	if want.StreamViewType != "" && have.StreamViewType != want.StreamViewType {
		view := types.StreamViewType(want.StreamViewType)
		cs = append(cs, Change{What: "stream", Detail: "enable stream " + want.StreamViewType,
			apply: func(ctx context.Context, db DynamoDB, table, _ string) error {
				if have.StreamViewType != "" { // the view type of a live stream cannot change in place
					if _, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &table,
						StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}}); err != nil {
						return permissions.Explain(err, "dynamodb:UpdateTable")
					}
					if err := WaitActive(ctx, db, table, nil); err != nil {
						return err
					}
				}
				_, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &table,
					StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: view}})
				if err != nil {
					return permissions.Explain(err, "dynamodb:UpdateTable")
				}
				return WaitActive(ctx, db, table, nil)
			}})
	}
	if want.PITR && (!have.PITR || have.RecoveryPeriodInDays != want.RecoveryPeriodInDays) {
		spec := &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)}
		detail := "enable PITR"
		if want.RecoveryPeriodInDays > 0 {
			spec.RecoveryPeriodInDays = aws.Int32(want.RecoveryPeriodInDays)
			detail = fmt.Sprintf("enable PITR, %d-day recovery period", want.RecoveryPeriodInDays)
		}
		cs = append(cs, Change{What: "pitr", Detail: detail,
			apply: func(ctx context.Context, db DynamoDB, table, _ string) error {
				_, err := db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{TableName: &table, PointInTimeRecoverySpecification: spec})
				return permissions.Explain(err, "dynamodb:UpdateContinuousBackups")
			}})
	}
	if want.TTLAttribute != "" && have.TTLAttribute != want.TTLAttribute {
		attr := want.TTLAttribute
		cs = append(cs, Change{What: "ttl", Detail: "enable TTL on " + attr,
			apply: func(ctx context.Context, db DynamoDB, table, _ string) error {
				_, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: &table,
					TimeToLiveSpecification: &types.TimeToLiveSpecification{Enabled: aws.Bool(true), AttributeName: &attr}})
				return err
			}})
	}
	var missing []types.Tag
	for _, k := range sortedKeys(want.Tags) {
		if v, ok := have.Tags[k]; !ok || v != want.Tags[k] {
			missing = append(missing, types.Tag{Key: aws.String(k), Value: aws.String(want.Tags[k])})
		}
	}
	if len(missing) > 0 {
		cs = append(cs, tagChange("tags", missing))
	}
	if want.ResourcePolicy != "" && have.ResourcePolicy != want.ResourcePolicy {
		policy := want.ResourcePolicy
		cs = append(cs, Change{What: "resource-policy", Detail: "put the source's resource policy",
			apply: func(ctx context.Context, db DynamoDB, _, arn string) error {
				_, err := db.PutResourcePolicy(ctx, &dynamodb.PutResourcePolicyInput{ResourceArn: &arn, Policy: &policy})
				return permissions.Explain(err, "dynamodb:PutResourcePolicy")
			}})
	}
	if want.DeletionProtection && !have.DeletionProtection {
		cs = append(cs, Change{What: "deletion-protection", Detail: "enable deletion protection",
			apply: func(ctx context.Context, db DynamoDB, table, _ string) error {
				_, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &table, DeletionProtectionEnabled: aws.Bool(true)})
				if err != nil {
					return permissions.Explain(err, "dynamodb:UpdateTable")
				}
				return WaitActive(ctx, db, table, nil)
			}})
	}
	return cs
}

// TagStep is one step that sets tags, for a caller that needs tags written
// at a point of its own choosing: a restore writes its restored-from tag
// as a separate last step, the marker of a finished restore.
func TagStep(what string, tags map[string]string) Change {
	var ts []types.Tag
	for _, k := range sortedKeys(tags) {
		ts = append(ts, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return tagChange(what, ts)
}

func tagChange(what string, tags []types.Tag) Change {
	return Change{What: what, Detail: fmt.Sprintf("set %d tag(s): %s", len(tags), tagList(tags)),
		apply: func(ctx context.Context, db DynamoDB, _, arn string) error {
			for i := 0; i < len(tags); i += 50 { // TagResource takes at most 50 tags
				end := min(i+50, len(tags))
				if _, err := db.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: &arn, Tags: tags[i:end]}); err != nil {
					return err
				}
			}
			return nil
		}}
}

// Apply runs the plan on table in order, calling done after each change. It
// stops at the first failure and says which change failed; the changes
// before it stay applied.
func Apply(ctx context.Context, db DynamoDB, table string, plan []Change, done func(Change)) error {
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return fmt.Errorf("describing %s: %w", table, err)
	}
	arn := aws.ToString(dt.Table.TableArn)
	for i, c := range plan {
		if err := c.apply(ctx, db, table, arn); err != nil {
			return fmt.Errorf("applying %s to %s (step %d of %d, %d done): %w", c.What, table, i+1, len(plan), i, err)
		}
		if done != nil {
			done(c)
		}
	}
	return nil
}

// WaitActive polls until table is ACTIVE (and its indexes too), calling
// progress with the status and time waited. It ends at the context's
// --wait-timeout (internal/poll) and returns ctx's error on cancel.
func WaitActive(ctx context.Context, db DynamoDB, table string, progress func(status string, waited time.Duration)) error {
	var status types.TableStatus
	o := poll.Options{Interval: 500 * time.Millisecond, MaxInterval: 10 * time.Second, What: "table " + table + " to become ACTIVE"}
	if progress != nil {
		o.Progress = func(waited time.Duration) { progress(string(status), waited) }
	}
	return poll.Until(ctx, o, func(ctx context.Context) (bool, string, error) {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
		if err != nil {
			return false, "", fmt.Errorf("waiting for %s: %w", table, err)
		}
		status = out.Table.TableStatus
		ready := status == types.TableStatusActive
		for _, g := range out.Table.GlobalSecondaryIndexes {
			if g.IndexStatus != "" && g.IndexStatus != types.IndexStatusActive {
				ready = false
			}
		}
		return ready, string(status), nil
	})
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func tagList(tags []types.Tag) string {
	s := ""
	for i, t := range tags {
		if i > 0 {
			s += ", "
		}
		s += aws.ToString(t.Key) + "=" + aws.ToString(t.Value)
	}
	return s
}
