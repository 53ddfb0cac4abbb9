# 50-export.sh: the export drill of runbooks/export-and-cross-region-restore.md
# on local-hoge-order: full export to the envs/local export bucket, verify,
# import into a second region with the guideline settings, item counts on
# both sides. Sourced by scripts/demo.sh (step, run, dynops, $DEMO_DIR,
# $DEMO_STATE, $AWS_ENDPOINT_URL, $AWS_REGION).
# The emulator writes export data files but no manifests, so verify runs in
# its documented --data-only mode here (decode and count every data file);
# on AWS, verify without --data-only checks the manifests, MD5s and ETags.
EXP_TABLE=local-hoge-order
EXP_DR_REGION=eu-central-1
EXP_BUCKET=$(terraform -chdir=envs/local output -state="$DEMO_STATE" -raw export_bucket)
EXP_PREFIX=exports/$EXP_TABLE/drill-$(date -u +%Y%m%dt%H%M%Sz)
exp_aws() { # the AWS CLI on the emulator, in region $1
  local region=$1
  shift
  aws dynamodb --endpoint-url "$AWS_ENDPOINT_URL" --region "$region" "$@"
}
exp_count() { # table region: items, by a COUNT scan
  exp_aws "$2" scan --table-name "$1" --select COUNT --query Count --output text
}

step "Export drill 1/5: $EXP_TABLE holds 30 orders of 3 tenants"
for i in $(seq 1 30); do
  printf '{"PutRequest":{"Item":{"tenant_key":{"S":"TENANT#t%d"},"order_key":{"S":"ORDER#%04d"},"tenant_status":{"S":"t%d#open"},"created_at":{"N":"%d"},"total":{"N":"%d"},"currency":{"S":"EUR"}}}}\n' \
    $((i % 3)) "$i" $((i % 3)) $((1772323200 + i)) $((i * 10))
done >"$DEMO_DIR/exp-orders"
split -l 25 "$DEMO_DIR/exp-orders" "$DEMO_DIR/exp-batch-"
for f in "$DEMO_DIR"/exp-batch-*; do
  printf '{"%s":[%s]}' "$EXP_TABLE" "$(paste -sd, "$f")" >"$f.json"
  printf '$ aws dynamodb batch-write-item --request-items file://%s\n' "$(basename "$f").json"
  exp_aws "$AWS_REGION" batch-write-item --request-items "file://$f.json" >/dev/null
done
EXP_SOURCE_COUNT=$(exp_count "$EXP_TABLE" "$AWS_REGION")
echo "$EXP_TABLE ($AWS_REGION): $EXP_SOURCE_COUNT items"

step "Export drill 2/5: full export to s3://$EXP_BUCKET/$EXP_PREFIX (from PITR, no read capacity)"
dynops export full --table "$EXP_TABLE" --bucket "$EXP_BUCKET" --prefix "$EXP_PREFIX" --wait
dynops export list --table "$EXP_TABLE"

# The emulator's exports have no manifests: DynamoDB cannot vouch for them,
# so they are read with --unverified-exports (printed, audited).
EXP_TRUST="demo: the emulator's exports have no manifests"
step "Export drill 3/5: verify the export (emulator: --data-only, it writes no manifests)"
dynops export verify --bucket "$EXP_BUCKET" --prefix "$EXP_PREFIX" --data-only --unverified-exports "$EXP_TRUST"

step "Export drill 4/5: import into a NEW table in $EXP_DR_REGION (dry run, then --yes)"
dynops export import --bucket "$EXP_BUCKET" --prefix "$EXP_PREFIX" --table "$EXP_TABLE" \
  --schema-from "$EXP_TABLE" --source-region "$AWS_REGION" --region "$EXP_DR_REGION" \
  --tag env=local --tag product=hoge --tag usage=order --unverified-exports "$EXP_TRUST"
dynops export import --bucket "$EXP_BUCKET" --prefix "$EXP_PREFIX" --table "$EXP_TABLE" \
  --schema-from "$EXP_TABLE" --source-region "$AWS_REGION" --region "$EXP_DR_REGION" \
  --tag env=local --tag product=hoge --tag usage=order --unverified-exports "$EXP_TRUST" --yes
# The import re-applied every table setting; alarms are Terraform's (apply the
# stack's monitoring in the DR region), so DDB-MON-01 is the one rule expected
# to fail here, and the demo insists it is the only one.
EXP_CHECK=$("$DYNOPS" --audit-log "$DYNOPS_AUDIT_LOG" check --table "$EXP_TABLE" --region "$EXP_DR_REGION" -o json || true)
printf '$ dynops check --table %s --region %s -o json
' "$EXP_TABLE" "$EXP_DR_REGION"
EXP_FAILING=$(jq -r '[.findings[] | select(.status == "fail" and .severity == "error") | .rule] | unique | join(",")' <<<"$EXP_CHECK")
jq -r '.summary | "\(.pass) pass, \(.fail) fail, \(.exception) exception"' <<<"$EXP_CHECK"
if [ "$EXP_FAILING" != "DDB-MON-01" ]; then
  echo "export drill: the imported table fails $EXP_FAILING; only DDB-MON-01 (alarms, applied by Terraform) was expected" >&2
  exit 1
fi
echo "only DDB-MON-01 fails: alarms for the imported table come from Terraform (modules/dynamodb-alarms in $EXP_DR_REGION)"

step "Export drill 5/5: item counts on both sides"
EXP_DR_COUNT=$(exp_count "$EXP_TABLE" "$EXP_DR_REGION")
echo "$EXP_TABLE in $AWS_REGION (source):   $EXP_SOURCE_COUNT items"
echo "$EXP_TABLE in $EXP_DR_REGION (import): $EXP_DR_COUNT items"
if [ "$EXP_SOURCE_COUNT" != "$EXP_DR_COUNT" ]; then
  echo "export drill: item counts differ" >&2
  exit 1
fi
printf '$ aws dynamodb update-table --table-name %s --no-deletion-protection-enabled --region %s && aws dynamodb delete-table ...\n' "$EXP_TABLE" "$EXP_DR_REGION"
exp_aws "$EXP_DR_REGION" update-table --table-name "$EXP_TABLE" --no-deletion-protection-enabled >/dev/null
exp_aws "$EXP_DR_REGION" delete-table --table-name "$EXP_TABLE" >/dev/null
echo "deleted the $EXP_DR_REGION copy of $EXP_TABLE"
