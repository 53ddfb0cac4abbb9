package dr

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/gruntwork-io/terratest/modules/terraform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynops/dynops/internal/audit"
	"github.com/dynops/dynops/internal/awsclients"
	"github.com/dynops/dynops/internal/failover"
	"github.com/dynops/dynops/test/helpers/drpair"
	"github.com/dynops/dynops/test/helpers/harness"
)

func putSession(table string) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
		"session_id": &types.AttributeValueMemberS{Value: "written-while-fenced"},
	}}
}

// applyDR applies the two-region example for the given global tables.
func applyDR(t *testing.T, vars map[string]any) *terraform.Options {
	t.Helper()
	all := map[string]any{"primary_region": target.Region, "secondary_region": drpair.Away, "env": "dev", "account_id": target.AccountID(t)}
	if target.OnEmulator() {
		all["backup_selection_enabled"] = false // moto: aws_backup_selection answers 500
	}
	for k, v := range vars {
		all[k] = v
	}
	opts := target.Options(t, example, all)
	target.Teardown(t, opts, false)
	terraform.InitAndApply(t, opts)
	return opts
}

// TestApplyTwoRegionExample applies modules/dr on the emulator, reads every
// part back, then drills `dynops dr` on the pointer and failover records
// Terraform made (stand-in tables, as moto has no global tables).
func TestApplyTwoRegionExample_DDB_DR_01(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pair := drpair.New(t, target, drpair.Options{NoPointer: true})
	opts := applyDR(t, map[string]any{"global_tables": []string{pair.Table}, "regional_tables": []string{"dev-" + pair.Table[4:11] + "-user"}})
	cfg := target.AWSConfig(t)
	// Every output in one `terraform output` run.
	outputs := terraform.OutputAll(t, opts)
	stringMap := func(name string) map[string]string {
		t.Helper()
		m := map[string]string{}
		raw, ok := outputs[name].(map[string]any)
		require.True(t, ok, "output %s is a map: %v", name, outputs[name])
		for k, v := range raw {
			m[k] = fmt.Sprint(v)
		}
		return m
	}

	t.Run("pointer in both regions names the primary", func(t *testing.T) {
		assert.Equal(t, map[string]string{pair.Table: pair.Target.Pointer}, stringMap("pointer_parameters"))
		assert.Equal(t, drpair.Home, pair.Pointer(t, drpair.Home))
		assert.Equal(t, drpair.Home, pair.Pointer(t, drpair.Away))
	})

	r53 := route53.NewFromConfig(cfg)
	hcs := stringMap("health_check_ids")
	t.Run("Route 53: a health check per region and PRIMARY/SECONDARY failover records", func(t *testing.T) {
		require.Len(t, hcs, 2)
		for region, id := range hcs {
			hc, err := r53.GetHealthCheck(ctx, &route53.GetHealthCheckInput{HealthCheckId: aws.String(id)})
			require.NoError(t, err)
			assert.Equal(t, "api."+region+".example.com", aws.ToString(hc.HealthCheck.HealthCheckConfig.FullyQualifiedDomainName))
		}
		zones, err := r53.ListHostedZonesByName(ctx, &route53.ListHostedZonesByNameInput{DNSName: aws.String("dev.dr.example.internal")})
		require.NoError(t, err)
		require.NotEmpty(t, zones.HostedZones)
		rrs, err := r53.ListResourceRecordSets(ctx, &route53.ListResourceRecordSetsInput{HostedZoneId: zones.HostedZones[0].Id})
		require.NoError(t, err)
		failovers := map[string]string{}
		for _, r := range rrs.ResourceRecordSets {
			if r.Failover != "" {
				failovers[string(r.Failover)] = aws.ToString(r.HealthCheckId)
			}
		}
		assert.Equal(t, map[string]string{"PRIMARY": hcs[drpair.Home], "SECONDARY": hcs[drpair.Away]}, failovers)
	})

	t.Run("DDB-SEC-01 the failover role may update only these health checks", func(t *testing.T) {
		// The policy as IAM holds it (module.dr.aws_iam_role_policy.failover[0]).
		roleARN := fmt.Sprint(outputs["failover_role_arn"])
		got, err := iam.NewFromConfig(cfg).GetRolePolicy(ctx, &iam.GetRolePolicyInput{
			RoleName: aws.String(roleARN[strings.LastIndex(roleARN, "/")+1:]), PolicyName: aws.String("dynops-dr")})
		require.NoError(t, err, "the failover role %s has its policy dynops-dr", roleARN)
		doc, err := url.QueryUnescape(aws.ToString(got.PolicyDocument)) // IAM returns it URL-encoded
		require.NoError(t, err)
		require.NotEmpty(t, doc)
		var pol struct{ Statement []statement }
		require.NoError(t, json.Unmarshal([]byte(doc), &pol))
		var records []string
		for _, s := range pol.Statement {
			if s.Sid == "FailoverRecords" {
				records = list(s.Resource)
			}
		}
		want := []string{"arn:aws:route53:::healthcheck/" + hcs[drpair.Home], "arn:aws:route53:::healthcheck/" + hcs[drpair.Away]}
		sort.Strings(records)
		sort.Strings(want)
		assert.Equal(t, want, records)
	})

	t.Run("backup plan and the copy vault in the secondary region", func(t *testing.T) {
		assert.NotEmpty(t, outputs["backup_plan_id"])
		assert.Regexp(t, `^arn:aws:backup:`+drpair.Away+`:\d{12}:backup-vault:dev-dynamodb-copy$`, outputs["backup_copy_vault_arn"])
	})

	auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
	flags := []string{"--table", pair.Table, "--regions", drpair.Home + "," + drpair.Away, "--allow-unreplicated",
		"--health-check", drpair.Home + "=" + hcs[drpair.Home], "--health-check", drpair.Away + "=" + hcs[drpair.Away]}

	t.Run("dynops dr failover flips what Terraform made, and Terraform leaves it", func(t *testing.T) {
		_, _, code := target.Dynops(t, auditLog, append([]string{"dr", "failover", "--to", drpair.Away, "--yes"}, flags...)...)
		require.Equal(t, 0, code)
		assert.Equal(t, drpair.Away, pair.Pointer(t, drpair.Home))
		assert.Equal(t, drpair.Away, pair.Pointer(t, drpair.Away))
		hc, err := r53.GetHealthCheck(ctx, &route53.GetHealthCheckInput{HealthCheckId: aws.String(hcs[drpair.Home])})
		require.NoError(t, err)
		assert.True(t, aws.ToBool(hc.HealthCheck.HealthCheckConfig.Inverted), "the primary's health check is inverted: Route 53 answers with the secondary")
		// A plan must not flip the pointer or the health check back. (moto does
		// not store AWS Backup tags, so the vaults and plan drift there.)
		popts := *opts
		popts.PlanFilePath = filepath.Join(t.TempDir(), "plan.out")
		plan := terraform.InitAndPlanAndShowWithStruct(t, &popts)
		checked := 0
		for addr, rc := range plan.ResourceChangesMap {
			if strings.Contains(addr, "aws_ssm_parameter.") || strings.Contains(addr, "aws_route53_health_check.") {
				assert.True(t, rc.Change.Actions.NoOp(), "%s: %v", addr, rc.Change.Actions)
				checked++
			}
		}
		assert.Equal(t, 4, checked, "two pointers and two health checks")
	})

	t.Run("dynops dr failback and drill, audited", func(t *testing.T) {
		_, _, code := target.Dynops(t, auditLog, append([]string{"dr", "failback", "--yes"}, flags...)...)
		require.Equal(t, 0, code)
		pair.AssertUnchanged(t)
		out, _, code := target.Dynops(t, auditLog, append([]string{"dr", "drill", "--yes", "-o", "json"}, flags...)...)
		require.Equal(t, 0, code)
		var d failover.DrillResult
		require.NoError(t, json.Unmarshal([]byte(out), &d))
		assert.True(t, d.OK)
		require.NotNil(t, d.Failback)
		assert.Positive(t, d.RTO)
		all, err := audit.Read(auditLog)
		require.NoError(t, err)
		recs := audit.Runs(all) // started + finished per run
		require.Len(t, recs, 3)
		assert.Equal(t, "dynops dr drill", recs[2].Command)
		assert.False(t, recs[2].DryRun)
		assert.Equal(t, "ok", recs[2].Result)
		var whats []string
		for _, a := range recs[2].Actions {
			whats = append(whats, a.What)
		}
		assert.Contains(t, whats, "dr failover: fence-old")
		assert.Contains(t, whats, "dr failback: unfence-old")
	})
}

// TestApplyGlobalTableDrill_DDB_DR_01 drills a real global table: the fence
// refusing writes, replication of the canary, and failback.
func TestApplyGlobalTableDrill_DDB_DR_01(t *testing.T) {
	target.RequireAWS(t, "has no global tables (replica creation never completes) and does not evaluate resource policies (a fenced table still takes writes)")
	t.Parallel()
	ctx := context.Background()
	tbl := target.Options(t, "modules/dynamodb-table/examples/global-table", map[string]any{"env": "dev", "product": harness.UniqueID()})
	target.Teardown(t, tbl, true)
	terraform.InitAndApply(t, tbl)
	name := terraform.Output(t, tbl, "table_name")
	applyDR(t, map[string]any{"global_tables": []string{name}, "regional_tables": []string{}, "route53_enabled": false})

	auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
	flags := []string{"--table", name, "--regions", target.Region + "," + drpair.Away}
	status, _, code := target.Dynops(t, auditLog, append([]string{"dr", "status", "-o", "json"}, flags...)...)
	require.Equal(t, 0, code, status)

	_, _, code = target.Dynops(t, auditLog, append([]string{"dr", "failover", "--to", drpair.Away, "--yes"}, flags...)...)
	require.Equal(t, 0, code)
	t.Run("the fence refuses writes in the old region", func(t *testing.T) {
		db := drpair.Clients(target.AWSConfig(t))(target.Region).DynamoDB
		_, err := db.PutItem(ctx, putSession(name))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "AccessDenied")
	})
	_, _, code = target.Dynops(t, auditLog, append([]string{"dr", "failback", "--yes"}, flags...)...)
	require.Equal(t, 0, code)

	out, _, code := target.Dynops(t, auditLog, append([]string{"dr", "drill", "--yes", "-o", "json"}, flags...)...)
	require.Equal(t, 0, code)
	var d failover.DrillResult
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	require.NotNil(t, d.Failback)
	for _, res := range []failover.Result{d.Failover, *d.Failback} {
		for _, st := range res.Steps {
			if st.Name == "replication-check" {
				assert.Equal(t, failover.StepDone, st.Status, "%s: %s", res.Mode, st.Detail)
			}
		}
	}
	pointer, err := ssm.NewFromConfig(awsclients.ForRegion(target.AWSConfig(t), drpair.Away)).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(failover.DefaultPointer(name))})
	require.NoError(t, err)
	assert.Equal(t, target.Region, aws.ToString(pointer.Parameter.Value))
}

// TestApplyPauseReplicationDrill_DDB_DR_01 breaks replication on purpose on
// AWS: modules/dr's FIS template pauses replication into the secondary
// region of a real global table, `dynops dr drill --pause-replication` sees
// the pause in the replica's resource policy, has the failover preflight
// into that region refuse it, stops the experiment and sees the pause gone.
func TestApplyPauseReplicationDrill_DDB_DR_01(t *testing.T) {
	target.RequireAWS(t, "has no AWS FIS (StartExperiment answers 404) and no global tables")
	t.Parallel()
	tbl := target.Options(t, "modules/dynamodb-table/examples/global-table", map[string]any{"env": "dev", "product": harness.UniqueID()})
	target.Teardown(t, tbl, true)
	terraform.InitAndApply(t, tbl)
	name := terraform.Output(t, tbl, "table_name")
	dr := applyDR(t, map[string]any{"global_tables": []string{name}, "regional_tables": []string{}, "route53_enabled": false, "fis_pause_replication_enabled": true})
	template := terraform.Output(t, dr, "fis_pause_replication_template_id")
	require.NotEmpty(t, template)

	auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
	out, errOut, code := target.Dynops(t, auditLog, "dr", "drill", "--table", name, "--regions", target.Region+","+drpair.Away, "--to", drpair.Away,
		"--pause-replication", template, "--pause-timeout", "10m", "--yes", "-o", "json")
	require.Equal(t, 0, code, errOut)
	var res failover.PauseDrillResult
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.True(t, res.OK)
	assert.NotEmpty(t, res.Experiment)
	assert.Contains(t, strings.Join(res.Refused, "\n"), "replication-paused", "the failover preflight refused while paused")
	for _, st := range res.Steps {
		assert.Equal(t, failover.StepDone, st.Status, st.Name)
	}
}
