// Package adopt turns a live DynamoDB table into what the Terraform modules
// need to manage it unchanged: its envs/tables.yaml entry (with an exception
// and a placeholder reason wherever it deviates from the guideline) and the
// `import` blocks for the table and everything modules/dynamodb-table
// manages around it. It reads only; `dynops table adopt` prints the result.
package adopt

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	aas "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	aastypes "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/dynops/dynops/internal/guideline"
)

// DynamoDB is the part of the DynamoDB API adopt reads.
type DynamoDB interface {
	guideline.DynamoDB
	DescribeContributorInsights(context.Context, *dynamodb.DescribeContributorInsightsInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeContributorInsightsOutput, error)
	GetResourcePolicy(context.Context, *dynamodb.GetResourcePolicyInput, ...func(*dynamodb.Options)) (*dynamodb.GetResourcePolicyOutput, error)
}

// AutoScaling is the part of the Application Auto Scaling API adopt reads.
type AutoScaling interface {
	DescribeScalableTargets(context.Context, *aas.DescribeScalableTargetsInput, ...func(*aas.Options)) (*aas.DescribeScalableTargetsOutput, error)
}

// Options say where the table goes: its env, product and usage (DDB-NAME-01)
// and the module address its resources are imported to.
type Options struct {
	Table   string
	Env     string
	Product string
	Usage   string
	// Address of the table's modules/dynamodb-table instance, default
	// module.stack.module.table["USAGE"] (an env root's stack).
	Address string
	// Region and account of the table, for import IDs.
	Region    string
	AccountID string
}

// Placeholder starts every reason adopt cannot know. The modules, the Rego
// policies and `dynops check` refuse it (guideline.ReasonSaysWhy) until a
// person replaces it with why the rule is relaxed.
const Placeholder = "TODO adopt: say why"

// Result is what adopt prints.
type Result struct {
	Table   string         `json:"table"`
	Usage   string         `json:"usage"`
	Entry   map[string]any `json:"entry"`   // the tables.yaml entry, keyed like the module's inputs
	Imports []Import       `json:"imports"` // terraform import blocks
	// Deviations lists, per rule, where the table differs from the guideline
	// (each expressed as an exception in Entry).
	Deviations []Deviation `json:"deviations"`
	// Warnings are what adopt could not read or express.
	Warnings []string `json:"warnings,omitempty"`
}

// Import is one terraform import block.
type Import struct {
	To string `json:"to"`
	ID string `json:"id"`
}

// Deviation is one difference from the guideline, kept as an exception.
type Deviation struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

// Read reads the table and builds its entry and import blocks.
func Read(ctx context.Context, db DynamoDB, as AutoScaling, o Options) (*Result, error) {
	st, err := guideline.Gather(ctx, db, o.Table)
	if err != nil {
		return nil, err
	}
	if err := o.complete(); err != nil {
		return nil, err
	}
	t := st.Table
	r := &Result{Table: o.Table, Usage: o.Usage, Entry: map[string]any{}}
	e := r.Entry
	dev := func(rule, detail string) { r.Deviations = append(r.Deviations, Deviation{rule, detail}) }
	reason := func(rule, what string) string {
		dev(rule, what)
		return fmt.Sprintf("%s (%s)", Placeholder, what)
	}
	addr := o.Address
	if addr == "" {
		addr = fmt.Sprintf("module.stack.module.table[%q]", o.Usage)
	}
	imp := func(res, id string) { r.Imports = append(r.Imports, Import{To: addr + "." + res, ID: id}) }
	imp("aws_dynamodb_table.this", o.Table)

	// DDB-NAME-01
	if o.Table != fmt.Sprintf("%s-%s-%s", o.Env, o.Product, o.Usage) {
		e["name_override"] = o.Table
		e["name_override_reason"] = reason(guideline.Name01, fmt.Sprintf("legacy name %s, not %s-%s-%s", o.Table, o.Env, o.Product, o.Usage))
	}

	// Keys and indexes
	for _, k := range t.KeySchema {
		if k.KeyType == types.KeyTypeHash {
			e["hash_key"] = aws.ToString(k.AttributeName)
		} else {
			e["range_key"] = aws.ToString(k.AttributeName)
		}
	}
	var attrs []map[string]any
	for _, a := range t.AttributeDefinitions {
		attrs = append(attrs, map[string]any{"name": aws.ToString(a.AttributeName), "type": string(a.AttributeType)})
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i]["name"].(string) < attrs[j]["name"].(string) })
	e["attributes"] = attrs

	provisioned := t.BillingModeSummary == nil || t.BillingModeSummary.BillingMode == types.BillingModeProvisioned
	projectionAll := false
	var badIndexes []string // names outside gsi1.. / lsi1.. (DDB-NAME-02)
	var gsis []map[string]any
	for _, g := range t.GlobalSecondaryIndexes {
		m := index(g.IndexName, g.KeySchema, g.Projection)
		if m["projection_type"] == "ALL" {
			projectionAll = true
		}
		if provisioned && g.ProvisionedThroughput != nil {
			m["read_capacity"] = aws.ToInt64(g.ProvisionedThroughput.ReadCapacityUnits)
			m["write_capacity"] = aws.ToInt64(g.ProvisionedThroughput.WriteCapacityUnits)
		}
		if odt := g.OnDemandThroughput; !provisioned && odt != nil {
			if v := aws.ToInt64(odt.MaxReadRequestUnits); v > 0 {
				m["max_read_request_units"] = v
			}
			if v := aws.ToInt64(odt.MaxWriteRequestUnits); v > 0 {
				m["max_write_request_units"] = v
			}
		}
		if !validIndexName("gsi", m["name"].(string)) {
			badIndexes = append(badIndexes, m["name"].(string))
		}
		gsis = append(gsis, m)
	}
	if len(gsis) > 0 {
		sort.Slice(gsis, func(i, j int) bool { return gsis[i]["name"].(string) < gsis[j]["name"].(string) })
		e["global_secondary_indexes"] = gsis
	}
	var lsis []map[string]any
	for _, l := range t.LocalSecondaryIndexes {
		m := index(l.IndexName, l.KeySchema, l.Projection)
		delete(m, "hash_key")
		if !validIndexName("lsi", m["name"].(string)) {
			badIndexes = append(badIndexes, m["name"].(string))
		}
		if m["projection_type"] == "ALL" {
			projectionAll = true
		}
		lsis = append(lsis, m)
	}
	if len(lsis) > 0 {
		e["local_secondary_indexes"] = lsis
	}
	// DDB-NAME-02: renaming an index means building a new one, so an adopted
	// table keeps its names under an exception a person must explain.
	if len(badIndexes) > 0 {
		sort.Strings(badIndexes)
		e["index_naming_reason"] = reason(guideline.Name02, "index names "+strings.Join(badIndexes, ", ")+" kept; renaming means a new index")
	}
	// DDB-NAME-03: generic key attributes (PK, SK, GSI1PK, ...) of a
	// single-table design; the module excepts the key attributes only.
	var badKeys []string
	for _, a := range attrs {
		if n := a["name"].(string); !snakeCase.MatchString(n) {
			badKeys = append(badKeys, n)
		}
	}
	if len(badKeys) > 0 {
		e["key_naming_reason"] = reason(guideline.Name03, "key attributes "+strings.Join(badKeys, ", ")+" kept; renaming means a new table")
	}
	if projectionAll {
		e["allow_projection_all"] = true
		e["projection_all_reason"] = reason(guideline.Idx02, "an index projects ALL")
	}

	// DDB-CAP-01/02
	if provisioned {
		e["billing_mode"] = "PROVISIONED"
		e["provisioned_reason"] = reason(guideline.Cap01, "billing mode PROVISIONED")
		if pt := t.ProvisionedThroughput; pt != nil {
			e["read_capacity"] = aws.ToInt64(pt.ReadCapacityUnits)
			e["write_capacity"] = aws.ToInt64(pt.WriteCapacityUnits)
		}
		if err := autoscaling(ctx, as, o.Table, e, gsis, imp, reason, r); err != nil {
			return nil, err
		}
	} else if odt := t.OnDemandThroughput; odt != nil && (aws.ToInt64(odt.MaxReadRequestUnits) > 0 || aws.ToInt64(odt.MaxWriteRequestUnits) > 0) {
		m := map[string]any{}
		if v := aws.ToInt64(odt.MaxReadRequestUnits); v > 0 {
			m["max_read_request_units"] = v
		}
		if v := aws.ToInt64(odt.MaxWriteRequestUnits); v > 0 {
			m["max_write_request_units"] = v
		}
		e["on_demand_throughput"] = m
	}
	if c := t.TableClassSummary; c != nil && c.TableClass == types.TableClassStandardInfrequentAccess {
		e["table_class"] = string(c.TableClass)
	}

	// DDB-PROT-01
	if !aws.ToBool(t.DeletionProtectionEnabled) {
		e["deletion_protection_enabled"] = false
		e["deletion_protection_disabled_reason"] = reason(guideline.Prot01, "deletion protection off; or take the fix: delete these two lines")
	}
	// DDB-PITR-01
	switch p := st.PITR; {
	case p == nil || p.PointInTimeRecoveryStatus != types.PointInTimeRecoveryStatusEnabled:
		e["point_in_time_recovery"] = map[string]any{"enabled": false}
		e["point_in_time_recovery_reason"] = reason(guideline.Pitr01, "PITR off; or take the fix: delete these two lines")
	case p.RecoveryPeriodInDays != nil && *p.RecoveryPeriodInDays != 35:
		e["point_in_time_recovery"] = map[string]any{"recovery_period_in_days": *p.RecoveryPeriodInDays}
		e["point_in_time_recovery_reason"] = reason(guideline.Pitr01, fmt.Sprintf("PITR period %d days", *p.RecoveryPeriodInDays))
	}
	// DDB-STREAM-01
	if ss := t.StreamSpecification; ss == nil || !aws.ToBool(ss.StreamEnabled) {
		e["stream_enabled"] = false
	} else if ss.StreamViewType != types.StreamViewTypeNewAndOldImages {
		e["stream_view_type"] = string(ss.StreamViewType)
		e["stream_view_type_reason"] = reason(guideline.Stream01, "stream view type "+string(ss.StreamViewType))
	}
	// DDB-NAME-03: TTL
	ttl := st.TTL
	ttlOn := ttl != nil && (ttl.TimeToLiveStatus == types.TimeToLiveStatusEnabled || ttl.TimeToLiveStatus == types.TimeToLiveStatusEnabling)
	switch {
	case !ttlOn:
		e["ttl_enabled"] = false
		e["ttl_reason"] = reason(guideline.Name03, "TTL off")
	case aws.ToString(ttl.AttributeName) != "ttl":
		e["ttl_attribute_name"] = aws.ToString(ttl.AttributeName)
		e["ttl_reason"] = reason(guideline.Name03, "TTL on attribute "+aws.ToString(ttl.AttributeName))
	}
	// DDB-SEC-04
	if sse := t.SSEDescription; sse != nil && sse.SSEType == types.SSETypeKms && sse.KMSMasterKeyArn != nil {
		e["kms_key_arn"] = aws.ToString(sse.KMSMasterKeyArn)
	}
	// Global tables: replicas are modules/dynamodb-table-replica instances,
	// one per table in an env root (module.replica[usage], the secondary
	// region's provider): one import address, so one replica region.
	var regions []string
	for _, rep := range t.Replicas {
		if reg := aws.ToString(rep.RegionName); reg != "" && reg != o.Region {
			regions = append(regions, reg)
		}
	}
	switch {
	case len(regions) == 1:
		r.Imports = append(r.Imports, Import{To: fmt.Sprintf("module.replica[%q].aws_dynamodb_table_replica.this", o.Usage), ID: o.Table + ":" + o.Region})
	case len(regions) > 1:
		r.Warnings = append(r.Warnings, fmt.Sprintf("DDB-DR-01: %s has replicas in %d regions (%s): an env root manages one replica region per table (module.replica[%q] with the secondary region's provider), so no replica import is written and the plan refuses these replica_regions; add a provider and a modules/dynamodb-table-replica call per extra region, then import each replica (ID %s:%s)",
			o.Table, len(regions), strings.Join(regions, ", "), o.Usage, o.Table, o.Region))
	}
	if len(regions) > 0 {
		e["replica_regions"] = regions
	}

	// Tags other than the ones the module writes.
	tags := map[string]string{}
	for k, v := range st.Tags {
		switch k {
		case "env", "product", "usage", "managed-by":
			continue
		}
		if strings.HasPrefix(k, "dynops:") {
			continue
		}
		tags[k] = v
	}
	if len(tags) > 0 {
		e["tags"] = tags
	}

	// Contributor Insights and the resource policy, imported when present.
	// A best-effort read (an error is a warning): two attempts, not the
	// ten a call that must succeed gets (an endpoint that cannot answer it,
	// such as the local emulator, costs seconds per table otherwise).
	ci, err := db.DescribeContributorInsights(ctx, &dynamodb.DescribeContributorInsightsInput{TableName: &o.Table},
		func(o *dynamodb.Options) { o.RetryMaxAttempts = 2 })
	switch {
	case err != nil:
		r.Warnings = append(r.Warnings, fmt.Sprintf("Contributor Insights of %s could not be read (%v): contributor_insights_enabled is left to the stack's setting; import it by hand if it is on", o.Table, err))
	case ci.ContributorInsightsStatus == types.ContributorInsightsStatusEnabled:
		imp("aws_dynamodb_contributor_insights.table[0]", fmt.Sprintf("name:%s/%s", o.Table, o.AccountID))
		for _, g := range gsis {
			imp(fmt.Sprintf("aws_dynamodb_contributor_insights.gsi[%q]", g["name"]), fmt.Sprintf("name:%s/index:%s/%s", o.Table, g["name"], o.AccountID))
		}
	default:
		e["contributor_insights_enabled"] = false
	}
	rp, err := db.GetResourcePolicy(ctx, &dynamodb.GetResourcePolicyInput{ResourceArn: t.TableArn})
	var apiErr smithy.APIError
	switch {
	case err != nil && errors.As(err, &apiErr) && (apiErr.ErrorCode() == "PolicyNotFoundException" || apiErr.ErrorCode() == "ResourceNotFoundException"):
	case err != nil:
		r.Warnings = append(r.Warnings, fmt.Sprintf("the resource policy of %s could not be read (%v); add resource_policy and its import by hand if it has one", o.Table, err))
	case aws.ToString(rp.Policy) != "":
		e["resource_policy"] = aws.ToString(rp.Policy)
		imp("aws_dynamodb_resource_policy.this[0]", aws.ToString(t.TableArn))
	}
	return r, nil
}

// complete fills env, product and usage from a DDB-NAME-01 name, or says what is missing.
func (o *Options) complete() error {
	if o.Env != "" && o.Product != "" && o.Usage != "" {
		return nil
	}
	if guideline.FollowsNamingRule(o.Table, guideline.DefaultEnvs()) && (o.Env == "" || o.Env == guideline.EnvOf(o.Table)) {
		parts := strings.SplitN(o.Table, "-", 3)
		if o.Env == "" {
			o.Env = parts[0]
		}
		if o.Product == "" {
			o.Product = parts[1]
		}
		if o.Usage == "" {
			o.Usage = strings.TrimPrefix(o.Table, o.Env+"-"+o.Product+"-")
		}
		return nil
	}
	return fmt.Errorf("table %s does not follow {env}-{product}-{usage} (DDB-NAME-01): give --env, --product and --usage, and it is adopted under its own name with a name_override", o.Table)
}

func index(name *string, keys []types.KeySchemaElement, p *types.Projection) map[string]any {
	m := map[string]any{"name": aws.ToString(name)}
	for _, k := range keys {
		if k.KeyType == types.KeyTypeHash {
			m["hash_key"] = aws.ToString(k.AttributeName)
		} else {
			m["range_key"] = aws.ToString(k.AttributeName)
		}
	}
	if p != nil {
		m["projection_type"] = string(p.ProjectionType)
		if len(p.NonKeyAttributes) > 0 {
			nka := append([]string(nil), p.NonKeyAttributes...)
			sort.Strings(nka)
			m["non_key_attributes"] = nka
		}
	}
	return m
}

// snakeCase is the modules' attribute name rule (DDB-NAME-03).
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

func validIndexName(kind, name string) bool {
	rest, ok := strings.CutPrefix(name, kind)
	if !ok || rest == "" || rest[0] == '0' {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// autoscaling reads the table's and GSIs' scalable targets: with targets,
// auto scaling stays on with their min and max (and they are imported);
// without, it is off with a placeholder reason.
func autoscaling(ctx context.Context, as AutoScaling, table string, e map[string]any, gsis []map[string]any,
	imp func(res, id string), reason func(rule, what string) string, r *Result) error {
	ids := []string{"table/" + table}
	for _, g := range gsis {
		ids = append(ids, fmt.Sprintf("table/%s/index/%s", table, g["name"]))
	}
	out, err := as.DescribeScalableTargets(ctx, &aas.DescribeScalableTargetsInput{ServiceNamespace: aastypes.ServiceNamespaceDynamodb, ResourceIds: ids})
	if err != nil {
		return fmt.Errorf("reading the auto scaling targets of %s: %w", table, err)
	}
	if len(out.ScalableTargets) == 0 {
		e["autoscaling"] = map[string]any{"enabled": false}
		e["autoscaling_disabled_reason"] = reason(guideline.Cap01, "PROVISIONED without auto scaling")
		return nil
	}
	as2 := map[string]any{}
	for _, st := range out.ScalableTargets {
		id, dim := aws.ToString(st.ResourceId), string(st.ScalableDimension)
		read := strings.Contains(dim, "Read")
		key := "table"
		if i := strings.Index(id, "/index/"); i >= 0 {
			key = id[i+len("/index/"):]
		}
		d := "write"
		if read {
			d = "read"
		}
		imp(fmt.Sprintf("aws_appautoscaling_target.this[%q]", key+"-"+d), "dynamodb/"+id+"/"+dim)
		if key == "table" {
			e[d+"_capacity"] = aws.ToInt32(st.MinCapacity)
			as2[d+"_max_capacity"] = aws.ToInt32(st.MaxCapacity)
			continue
		}
		for _, g := range gsis {
			if g["name"] == key {
				g[d+"_capacity"] = aws.ToInt32(st.MinCapacity)
				g[d+"_max_capacity"] = aws.ToInt32(st.MaxCapacity)
			}
		}
	}
	e["autoscaling"] = as2
	r.Warnings = append(r.Warnings, "auto scaling policies are not imported: the module creates its own target-tracking policies (named TABLE-table-read, ...); remove the old ones after the apply")
	return nil
}
