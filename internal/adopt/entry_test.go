package adopt

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	aastypes "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

func keys(name string, hash, rng string) (*string, []types.KeySchemaElement) {
	ks := []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}}
	if rng != "" {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange})
	}
	return aws.String(name), ks
}

func gsi(name, hash, rng string, p *types.Projection) types.GlobalSecondaryIndexDescription {
	n, ks := keys(name, hash, rng)
	return types.GlobalSecondaryIndexDescription{IndexName: n, KeySchema: ks, Projection: p}
}

// TestReadEntrySettings: each setting adopt reads lands in the entry with
// the live value, and is left out (the module's default) when it is the
// default; want is the entry's value for key, nil for "not in the entry".
func TestReadEntrySettings(t *testing.T) {
	provisioned := func(f *fakeDB) {
		f.t.BillingModeSummary.BillingMode = types.BillingModeProvisioned
		f.t.ProvisionedThroughput = &types.ProvisionedThroughputDescription{ReadCapacityUnits: aws.Int64(3), WriteCapacityUnits: aws.Int64(2)}
	}
	odt := func(r, w int64) *types.OnDemandThroughput {
		return &types.OnDemandThroughput{MaxReadRequestUnits: aws.Int64(r), MaxWriteRequestUnits: aws.Int64(w)}
	}
	gsisOf := func(e map[string]any) any { return e["global_secondary_indexes"] }
	cases := []struct {
		name string
		edit func(*fakeDB)
		key  string
		get  func(map[string]any) any // default: e[key]
		want any
	}{
		{"range key", func(f *fakeDB) { _, f.t.KeySchema = keys("", "user_id", "created_at") }, "range_key", nil, "created_at"},
		{"hash key only", func(f *fakeDB) {}, "range_key", nil, nil},
		{"GSI keys and sorted non-key attributes", func(f *fakeDB) {
			f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{gsi("gsi1", "org", "at", &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"b", "a"}})}
		}, "", gsisOf, []map[string]any{{"name": "gsi1", "hash_key": "org", "range_key": "at", "projection_type": "INCLUDE", "non_key_attributes": []string{"a", "b"}}}},
		{"GSI KEYS_ONLY has no non-key attributes", func(f *fakeDB) {
			f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{gsi("gsi1", "org", "", &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly, NonKeyAttributes: []string{}})}
		}, "", gsisOf, []map[string]any{{"name": "gsi1", "hash_key": "org", "projection_type": "KEYS_ONLY"}}},
		{"GSIs sorted by name", func(f *fakeDB) {
			f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{gsi("gsi2", "b", "", nil), gsi("gsi1", "a", "", nil)}
		}, "", gsisOf, []map[string]any{{"name": "gsi1", "hash_key": "a"}, {"name": "gsi2", "hash_key": "b"}}},
		{"provisioned GSI capacity", func(f *fakeDB) {
			provisioned(f)
			g := gsi("gsi1", "org", "", nil)
			g.ProvisionedThroughput = &types.ProvisionedThroughputDescription{ReadCapacityUnits: aws.Int64(7), WriteCapacityUnits: aws.Int64(8)}
			f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{g}
		}, "", gsisOf, []map[string]any{{"name": "gsi1", "hash_key": "org", "read_capacity": int64(7), "write_capacity": int64(8)}}},
		{"provisioned GSI without throughput", func(f *fakeDB) {
			provisioned(f)
			f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{gsi("gsi1", "org", "", nil)}
		}, "", gsisOf, []map[string]any{{"name": "gsi1", "hash_key": "org"}}},
		{"on-demand GSI: reported throughput is not capacity", func(f *fakeDB) {
			g := gsi("gsi1", "org", "", nil)
			g.ProvisionedThroughput = &types.ProvisionedThroughputDescription{ReadCapacityUnits: aws.Int64(0), WriteCapacityUnits: aws.Int64(0)}
			g.OnDemandThroughput = odt(40, -1)
			f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{g}
		}, "", gsisOf, []map[string]any{{"name": "gsi1", "hash_key": "org", "max_read_request_units": int64(40)}}},
		{"on-demand maximum read", func(f *fakeDB) { f.t.OnDemandThroughput = odt(100, -1) }, "on_demand_throughput", nil, map[string]any{"max_read_request_units": int64(100)}},
		{"on-demand maximum read, write 0", func(f *fakeDB) { f.t.OnDemandThroughput = odt(100, 0) }, "on_demand_throughput", nil, map[string]any{"max_read_request_units": int64(100)}},
		{"on-demand GSI maximum write only", func(f *fakeDB) {
			g := gsi("gsi1", "org", "", nil)
			g.OnDemandThroughput = odt(0, 30)
			f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{g}
		}, "", gsisOf, []map[string]any{{"name": "gsi1", "hash_key": "org", "max_write_request_units": int64(30)}}},
		{"on-demand GSI maximum read only", func(f *fakeDB) {
			g := gsi("gsi1", "org", "", nil)
			g.OnDemandThroughput = odt(25, 0)
			f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{g}
		}, "", gsisOf, []map[string]any{{"name": "gsi1", "hash_key": "org", "max_read_request_units": int64(25)}}},
		{"on-demand maximum write", func(f *fakeDB) { f.t.OnDemandThroughput = odt(0, 50) }, "on_demand_throughput", nil, map[string]any{"max_write_request_units": int64(50)}},
		{"on-demand both", func(f *fakeDB) { f.t.OnDemandThroughput = odt(1, 1) }, "on_demand_throughput", nil, map[string]any{"max_read_request_units": int64(1), "max_write_request_units": int64(1)}},
		{"on-demand without maximum (-1)", func(f *fakeDB) { f.t.OnDemandThroughput = odt(-1, -1) }, "on_demand_throughput", nil, nil},
		{"on-demand without maximum (0)", func(f *fakeDB) { f.t.OnDemandThroughput = odt(0, 0) }, "on_demand_throughput", nil, nil},
		{"infrequent access class", func(f *fakeDB) {
			f.t.TableClassSummary = &types.TableClassSummary{TableClass: types.TableClassStandardInfrequentAccess}
		}, "table_class", nil, "STANDARD_INFREQUENT_ACCESS"},
		{"standard class", func(f *fakeDB) {
			f.t.TableClassSummary = &types.TableClassSummary{TableClass: types.TableClassStandard}
		}, "table_class", nil, nil},
		{"TTL being enabled counts as on", func(f *fakeDB) { f.ttl.TimeToLiveStatus = types.TimeToLiveStatusEnabling }, "ttl_enabled", nil, nil},
		{"TTL being disabled is off", func(f *fakeDB) { f.ttl.TimeToLiveStatus = types.TimeToLiveStatusDisabling }, "ttl_enabled", nil, false},
		{"customer managed key", func(f *fakeDB) {
			f.t.SSEDescription = &types.SSEDescription{SSEType: types.SSETypeKms, KMSMasterKeyArn: aws.String("arn:aws:kms:eu-west-1:123456789012:key/k")}
		}, "kms_key_arn", nil, "arn:aws:kms:eu-west-1:123456789012:key/k"},
		{"KMS without a key ARN", func(f *fakeDB) { f.t.SSEDescription = &types.SSEDescription{SSEType: types.SSETypeKms} }, "kms_key_arn", nil, nil},
		{"AES256 with a key ARN", func(f *fakeDB) {
			f.t.SSEDescription = &types.SSEDescription{SSEType: types.SSETypeAes256, KMSMasterKeyArn: aws.String("arn:aws:kms:eu-west-1:123456789012:key/k")}
		}, "kms_key_arn", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := compliant("prod-hoge-user")
			c.edit(f)
			r, err := Read(context.Background(), f, fakeAAS{}, Options{Table: "prod-hoge-user", Region: "eu-west-1", AccountID: "123456789012"})
			if err != nil {
				t.Fatal(err)
			}
			var got any
			var present bool
			if c.get != nil {
				got = c.get(r.Entry)
				present = got != nil
			} else {
				got, present = r.Entry[c.key]
			}
			if c.want == nil {
				if present {
					t.Errorf("entry has %s = %v, want it left out", c.key, got)
				}
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("entry %s = %#v, want %#v", c.key, got, c.want)
			}
		})
	}
}

// TestReadGSIAutoscalingTargets: a GSI's scalable targets set its capacity
// and maximum and are imported under the GSI's name.
func TestReadGSIAutoscalingTargets(t *testing.T) {
	f := compliant("prod-hoge-user")
	f.t.BillingModeSummary.BillingMode = types.BillingModeProvisioned
	f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{gsi("gsi1", "org", "", nil), gsi("gsi2", "team", "", nil)}
	as := fakeAAS{targets: []aastypes.ScalableTarget{
		{ResourceId: aws.String("table/prod-hoge-user/index/gsi2"), ScalableDimension: aastypes.ScalableDimensionDynamoDBIndexWriteCapacityUnits, MinCapacity: aws.Int32(2), MaxCapacity: aws.Int32(20)},
	}}
	r, err := Read(context.Background(), f, as, Options{Table: "prod-hoge-user"})
	if err != nil {
		t.Fatal(err)
	}
	gsis := r.Entry["global_secondary_indexes"].([]map[string]any)
	if gsis[1]["write_capacity"] != int32(2) || gsis[1]["write_max_capacity"] != int32(20) || gsis[0]["write_capacity"] != nil {
		t.Errorf("GSIs %v", gsis)
	}
	if _, ok := r.Entry["write_capacity"]; ok {
		t.Errorf("the GSI's target set the table's capacity: %v", r.Entry)
	}
	want := Import{To: `module.stack.module.table["user"].aws_appautoscaling_target.this["gsi2-write"]`, ID: "dynamodb/table/prod-hoge-user/index/gsi2/dynamodb:index:WriteCapacityUnits"}
	if !slices.Contains(r.Imports, want) {
		t.Errorf("imports %v lack %v", r.Imports, want)
	}
}

// TestOptionsComplete: env, product and usage come from a DDB-NAME-01 name
// unless given; a given env must be the name's.
func TestOptionsComplete(t *testing.T) {
	cases := []struct {
		in      Options
		want    Options
		wantErr bool
	}{
		{Options{Table: "prod-hoge-user"}, Options{Table: "prod-hoge-user", Env: "prod", Product: "hoge", Usage: "user"}, false},
		{Options{Table: "prod-hoge-user-events"}, Options{Table: "prod-hoge-user-events", Env: "prod", Product: "hoge", Usage: "user-events"}, false},
		{Options{Table: "prod-hoge-user", Env: "prod"}, Options{Table: "prod-hoge-user", Env: "prod", Product: "hoge", Usage: "user"}, false},
		{Options{Table: "prod-hoge-user", Usage: "users"}, Options{Table: "prod-hoge-user", Env: "prod", Product: "hoge", Usage: "users"}, false},
		{Options{Table: "prod-hoge-user", Env: "dev"}, Options{}, true},
		{Options{Table: "Users"}, Options{}, true},
		{Options{Table: "Users", Env: "prod", Product: "hoge"}, Options{}, true},
		{Options{Table: "Users", Env: "prod", Product: "hoge", Usage: "user"}, Options{Table: "Users", Env: "prod", Product: "hoge", Usage: "user"}, false},
	}
	for _, c := range cases {
		o := c.in
		err := o.complete()
		if c.wantErr {
			if err == nil || !strings.Contains(err.Error(), "DDB-NAME-01") || !strings.Contains(err.Error(), "--env, --product and --usage") {
				t.Errorf("%+v: err = %v, want one asking for --env, --product and --usage", c.in, err)
			}
			continue
		}
		if err != nil || o != c.want {
			t.Errorf("%+v: got %+v, %v; want %+v", c.in, o, err, c.want)
		}
	}
}

func TestValidIndexName(t *testing.T) {
	for name, want := range map[string]bool{
		"gsi1": true, "gsi2": true, "gsi9": true, "gsi10": true, "gsi109": true,
		"gsi": false, "gsi0": false, "gsi01": false, "gsiA": false, "gsi1a": false, "gsi/1": false, "gsi:1": false, "gsi1:": false,
		"byUser": false, "lsi1": false, "xgsi1": false, "GSI1": false,
	} {
		if got := validIndexName("gsi", name); got != want {
			t.Errorf("validIndexName(gsi, %q) = %v, want %v", name, got, want)
		}
	}
	if !validIndexName("lsi", "lsi3") || validIndexName("lsi", "gsi3") {
		t.Error("lsi names")
	}
	// An index outside the sequence gets an exception naming it (DDB-NAME-02),
	// with adopt's placeholder reason for a person to replace.
	f := compliant("prod-hoge-user")
	f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{gsi("gsi1", "a", "", nil), gsi("byOrg", "org", "", nil)}
	r, err := Read(context.Background(), f, fakeAAS{}, Options{Table: "prod-hoge-user"})
	if err != nil {
		t.Fatal(err)
	}
	reason, _ := r.Entry["index_naming_reason"].(string)
	if !strings.HasPrefix(reason, Placeholder) || !strings.Contains(reason, "byOrg") || strings.Contains(reason, "gsi1,") {
		t.Errorf("index_naming_reason %q, want adopt's placeholder naming byOrg only", reason)
	}
	if !slices.ContainsFunc(r.Deviations, func(d Deviation) bool { return d.Rule == "DDB-NAME-02" }) {
		t.Errorf("deviations %v lack DDB-NAME-02", r.Deviations)
	}
}

// TestReadAroundTheTable: replicas, tags, Contributor Insights and the
// resource policy: what is imported, what is kept, what is only a warning.
func TestReadAroundTheTable(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/prod-hoge-user"
	read := func(t *testing.T, f *fakeDB) *Result {
		t.Helper()
		r, err := Read(context.Background(), f, fakeAAS{}, Options{Table: "prod-hoge-user", Region: "eu-west-1", AccountID: "123456789012"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	imported := func(r *Result, to string) (string, bool) {
		for _, i := range r.Imports {
			if strings.HasSuffix(i.To, to) {
				return i.ID, true
			}
		}
		return "", false
	}
	t.Run("replicas other than home", func(t *testing.T) {
		f := compliant("prod-hoge-user")
		for _, reg := range []string{"eu-west-1", "us-west-2", ""} {
			f.t.Replicas = append(f.t.Replicas, types.ReplicaDescription{RegionName: aws.String(reg)})
		}
		r := read(t, f)
		if got := r.Entry["replica_regions"]; !reflect.DeepEqual(got, []string{"us-west-2"}) {
			t.Errorf("replica_regions = %v", got)
		}
		if id, ok := imported(r, `module.replica["user"].aws_dynamodb_table_replica.this`); !ok || id != "prod-hoge-user:eu-west-1" {
			t.Errorf("replica import %q %v in %v", id, ok, r.Imports)
		}
		if _, ok := read(t, compliant("prod-hoge-user")).Entry["replica_regions"]; ok {
			t.Error("a table without replicas has replica_regions")
		}
	})
	t.Run("DDB-DR-01 replicas in two regions: no duplicate import, a warning", func(t *testing.T) {
		f := compliant("prod-hoge-user")
		for _, reg := range []string{"eu-west-1", "us-west-2", "ap-northeast-1"} {
			f.t.Replicas = append(f.t.Replicas, types.ReplicaDescription{RegionName: aws.String(reg)})
		}
		r := read(t, f)
		if got := r.Entry["replica_regions"]; !reflect.DeepEqual(got, []string{"us-west-2", "ap-northeast-1"}) {
			t.Errorf("replica_regions = %v", got)
		}
		if id, ok := imported(r, "aws_dynamodb_table_replica.this"); ok {
			t.Errorf("a replica import (%s) for two regions: one address cannot take both (%v)", id, r.Imports)
		}
		want := "DDB-DR-01: prod-hoge-user has replicas in 2 regions (us-west-2, ap-northeast-1)"
		if !slices.ContainsFunc(r.Warnings, func(w string) bool {
			return strings.HasPrefix(w, want) && strings.Contains(w, "prod-hoge-user:eu-west-1")
		}) {
			t.Errorf("no warning %q in %q", want, r.Warnings)
		}
	})
	t.Run("tags the module does not write", func(t *testing.T) {
		f := compliant("prod-hoge-user")
		f.tags = []types.Tag{tag("env", "prod"), tag("product", "hoge"), tag("usage", "user"), tag("managed-by", "terraform"),
			tag("dynops:exception:DDB-CAP-01", "x"), tag("owner", "team-a"), tag("cost-center", "42")}
		if got := read(t, f).Entry["tags"]; !reflect.DeepEqual(got, map[string]string{"owner": "team-a", "cost-center": "42"}) {
			t.Errorf("tags = %v", got)
		}
		f.tags = f.tags[:5]
		if got, ok := read(t, f).Entry["tags"]; ok {
			t.Errorf("only module tags, yet tags = %v", got)
		}
	})
	t.Run("Contributor Insights on: imported for the table and each GSI", func(t *testing.T) {
		f := compliant("prod-hoge-user")
		f.ci = types.ContributorInsightsStatusEnabled
		f.t.GlobalSecondaryIndexes = []types.GlobalSecondaryIndexDescription{gsi("gsi1", "org", "", nil)}
		r := read(t, f)
		if _, ok := r.Entry["contributor_insights_enabled"]; ok {
			t.Error("contributor_insights_enabled set although it is on")
		}
		if id, ok := imported(r, "aws_dynamodb_contributor_insights.table[0]"); !ok || id != "name:prod-hoge-user/123456789012" {
			t.Errorf("table import %q %v", id, ok)
		}
		if id, ok := imported(r, `aws_dynamodb_contributor_insights.gsi["gsi1"]`); !ok || id != "name:prod-hoge-user/index:gsi1/123456789012" {
			t.Errorf("GSI import %q %v", id, ok)
		}
	})
	t.Run("Contributor Insights off or unreadable", func(t *testing.T) {
		f := compliant("prod-hoge-user")
		if got := read(t, f).Entry["contributor_insights_enabled"]; got != false {
			t.Errorf("off: contributor_insights_enabled = %v", got)
		}
		f.ci = "" // the fake fails the read
		r := read(t, f)
		if _, ok := r.Entry["contributor_insights_enabled"]; ok {
			t.Error("unreadable: contributor_insights_enabled set")
		}
		if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "Contributor Insights of prod-hoge-user could not be read") {
			t.Errorf("warnings %q", r.Warnings)
		}
	})
	t.Run("resource policy", func(t *testing.T) {
		f := compliant("prod-hoge-user")
		f.t.TableArn = aws.String(arn)
		f.policy = `{"Version":"2012-10-17"}`
		r := read(t, f)
		if r.Entry["resource_policy"] != f.policy {
			t.Errorf("resource_policy = %v", r.Entry["resource_policy"])
		}
		if id, ok := imported(r, "aws_dynamodb_resource_policy.this[0]"); !ok || id != arn {
			t.Errorf("policy import %q %v", id, ok)
		}
		for code, warn := range map[string]bool{"PolicyNotFoundException": false, "ResourceNotFoundException": false, "AccessDeniedException": true} {
			f.policyErr = &smithy.GenericAPIError{Code: code}
			r := read(t, f)
			if _, ok := r.Entry["resource_policy"]; ok {
				t.Errorf("%s: resource_policy set", code)
			}
			if got := len(r.Warnings) == 1 && strings.Contains(r.Warnings[0], "resource policy of prod-hoge-user could not be read"); got != warn {
				t.Errorf("%s: warnings %q, want a warning: %v", code, r.Warnings, warn)
			}
		}
		f.policyErr, f.policy = nil, ""
		if _, ok := read(t, f).Entry["resource_policy"]; ok {
			t.Error("no policy: resource_policy set")
		}
	})
}

func tag(k, v string) types.Tag { return types.Tag{Key: aws.String(k), Value: aws.String(v)} }
