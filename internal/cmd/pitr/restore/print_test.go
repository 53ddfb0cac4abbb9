package restore

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/cmd/guard"
	"github.com/dynops/dynops/internal/cmd/view/viewtest"
	"github.com/dynops/dynops/internal/iostreams"
	"github.com/dynops/dynops/internal/protect"
	"github.com/dynops/dynops/internal/restore"
	"github.com/dynops/dynops/internal/tablesettings"
)

// TestPrintPlan: the restore plan an on-call engineer confirms names the
// target, the point in time, the window, the indexes and the encryption the
// restore gets (the source's key, or AWS owned when the source has none),
// then the settings to re-apply in order (DDB-PITR-02).
func TestPrintPlan(t *testing.T) {
	at := time.Date(2026, 11, 22, 3, 4, 5, 6e6, time.UTC)
	earliest, latest := at.Add(-35*24*time.Hour), at.Add(time.Hour)
	window := restore.Window{Status: "ENABLED", Earliest: &earliest, Latest: &latest}
	for _, tc := range []struct {
		name string
		plan restore.Plan
		want []string
		not  []string
	}{
		{"a KMS key, two indexes, an explicit time", restore.Plan{Source: "prod-a-user", Target: "prod-a-user-restored", RestoreTime: at, Window: window,
			Input: &dynamodb.RestoreTableToPointInTimeInput{BillingModeOverride: types.BillingModePayPerRequest,
				GlobalSecondaryIndexOverride: []types.GlobalSecondaryIndex{{IndexName: aws.String("by-email")}},
				LocalSecondaryIndexOverride:  []types.LocalSecondaryIndex{{IndexName: aws.String("by-date")}},
				SSESpecificationOverride:     &types.SSESpecification{Enabled: aws.Bool(true), SSEType: types.SSETypeKms, KMSMasterKeyId: aws.String("arn:aws:kms:eu-west-1:123456789012:key/k1")}},
			Changes: []tablesettings.Change{{What: "deletion protection", Detail: "on"}, {What: "PITR", Detail: "35 days"}}},
			[]string{"  source             prod-a-user\n", "  target             prod-a-user-restored (new table)\n",
				"  restore time       2026-11-22T03:04:05.006Z\n", "  restorable window  2026-10-18T03:04:05.006Z .. 2026-11-22T04:04:05.006Z\n",
				"  billing mode       PAY_PER_REQUEST\n", "  indexes            by-email (GSI), by-date (LSI)\n",
				"  encryption         KMS arn:aws:kms:eu-west-1:123456789012:key/k1\n",
				"in this order:\nSTEP  SETTING", "1     deletion protection  on\n2     PITR                 35 days\n"},
			[]string{"AWS owned key", "  nothing"}},
		{"no SSE override, no index, latest, resumed", restore.Plan{Source: "dev-a-user", Target: "dev-a-user-r", Latest: true, RestoreTime: at, Window: window,
			Input:  &dynamodb.RestoreTableToPointInTimeInput{BillingModeOverride: types.BillingModeProvisioned},
			Resume: &restore.Existing{Table: "dev-a-user-r", RestoredFrom: "arn:aws:dynamodb:eu-west-1:123456789012:table/dev-a-user"}},
			[]string{"  target             dev-a-user-r (exists, --resume takes it over: a restore of arn:aws:dynamodb:eu-west-1:123456789012:table/dev-a-user",
				"  restore time       latest restorable (now 2026-11-22T03:04:05.006Z)\n", "  indexes            none\n",
				"  encryption         AWS owned key\n", "in this order:\n  nothing\n"},
			[]string{"(new table)", "KMS"}},
		{"SSE override present but off", restore.Plan{Source: "dev-a-user", Target: "t", RestoreTime: at, Window: window,
			Input: &dynamodb.RestoreTableToPointInTimeInput{SSESpecificationOverride: &types.SSESpecification{Enabled: aws.Bool(false)}}},
			[]string{"  encryption         AWS owned key\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			p := tc.plan
			printPlan(factory.New(ios), &p)
			for _, w := range tc.want {
				assert.Contains(t, out.String(), w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, out.String(), n)
			}
			assert.True(t, strings.HasPrefix(out.String(), "Restore plan\n"), out.String())
		})
	}
}

// TestPrintResult: the result says what the service reports (the restore
// time read back, a shift from the asked time, the settings read back), and
// which of a new, resumed or already finished restore it was.
func TestPrintResult(t *testing.T) {
	asked := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	settings := tablesettings.Settings{PITR: true, RecoveryPeriodInDays: 35, DeletionProtection: true, TTLAttribute: "ttl",
		StreamViewType: "NEW_AND_OLD_IMAGES", Tags: map[string]string{"env": "prod", "product": "a"}, ResourcePolicy: "{}"}
	for _, tc := range []struct {
		name   string
		latest bool
		res    restore.Result
		want   []string
		not    []string
	}{
		{"new, restored later than asked", false, restore.Result{RestoreTime: asked.Add(90 * time.Second), Settings: settings, Terraform: "TF",
			Applied: []tablesettings.Change{{What: "TTL", Detail: "ttl"}}},
			[]string{"Restored src to dst (point in time 2026-11-22T03:01:30.000Z, read back from the service).\n",
				"NOTE: asked for 2026-11-22T03:00:00.000Z, the service restored to 2026-11-22T03:01:30.000Z (1m30s later)",
				"Applied:\nSTEP", "1     TTL      ttl\n",
				"Read back from dst: PITR on (35 days), deletion protection on, TTL ttl, stream NEW_AND_OLD_IMAGES, 2 tag(s), resource policy on.\n",
				"\nTF\nNext: compare with the original:\n  dynops table diff --source dst --target src --keys-out keys.jsonl\n"}, nil},
		{"resumed, restored earlier than asked", false, restore.Result{Resumed: true, RestoreTime: asked.Add(-2 * time.Second)},
			[]string{"Resumed the restore of src to dst", "(2s earlier)", "Applied:\n  nothing\n",
				"PITR off, deletion protection off, TTL off, stream off, 0 tag(s), resource policy off."}, []string{"Restored src"}},
		{"already done, at the asked time", false, restore.Result{AlreadyDone: true, RestoreTime: asked},
			[]string{"dst is already a finished restore of src (point in time 2026-11-22T03:00:00.000Z, read back from the service): nothing changed.\n"},
			[]string{"NOTE:", "Resumed", "Restored src"}},
		{"latest: no shift to report", true, restore.Result{RestoreTime: asked.Add(time.Hour)}, []string{"Restored src to dst"}, []string{"NOTE:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			res := tc.res
			res.Plan = &restore.Plan{Source: "src", Target: "dst", RestoreTime: asked, Latest: tc.latest}
			printResult(factory.New(ios), &res)
			for _, w := range tc.want {
				assert.Contains(t, out.String(), w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, out.String(), n)
			}
		})
	}
}

// TestShowBothForms: the finished restore and the dry run, each in both
// forms: the human lines, and the JSON document with the plan's fields.
func TestShowBothForms(t *testing.T) {
	at := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	plan := &restore.Plan{Source: "dev-hoge-user", Target: "dev-hoge-user-restored", RestoreTime: at, Input: &dynamodb.RestoreTableToPointInTimeInput{}}
	human, doc := viewtest.Forms[map[string]any](t, nil, func(f *factory.Factory) error {
		return show(f, &restore.Result{Plan: plan, RestoreTime: at, Terraform: "TF"})
	})
	assert.Contains(t, human, "Restored dev-hoge-user to dev-hoge-user-restored")
	assert.Contains(t, human, "Applied:\n")
	assert.Equal(t, "TF", doc["terraform"], "JSON: %v", doc)
	assert.NotNil(t, doc["plan"], "JSON: %v", doc)

	setup := func(f *factory.Factory) {
		f.Audit = audit.NewRecorder(filepath.Join(t.TempDir(), "audit.jsonl"), time.Now)
	}
	human, doc = viewtest.Forms[map[string]any](t, setup, func(f *factory.Factory) error {
		d, err := guard.Decide(f, protect.Target{Kind: protect.Table, Name: "dev-hoge-user", Tags: map[string]string{"env": "dev"}, TagsFrom: "test"})
		if err != nil {
			return err
		}
		g, err := d.Confirm(false, nil)
		if err != nil {
			return err
		}
		return showDryRun(f, g, plan)
	})
	assert.Contains(t, human, "Restore plan\n")
	assert.Contains(t, human, "Dry run: nothing was changed. Add --yes to restore.")
	assert.Equal(t, true, doc["dry_run"], "JSON: %v", doc)
	assert.NotNil(t, doc["plan"], "JSON: %v", doc)
	assert.Contains(t, doc["terraform"], "dev-hoge-user-restored", "JSON: %v", doc)
}
