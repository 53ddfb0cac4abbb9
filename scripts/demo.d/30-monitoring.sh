# 30-monitoring.sh: the alarms, dashboards and stream consumers of envs/local
# (DDB-MON-01, DDB-STREAM-04/05), then `dynops check` failing with the rule ID
# on a table created without alarms. Sourced by scripts/demo.sh (step, run,
# dynops, $DEMO_DIR, $DEMO_STATE, $AWS_ENDPOINT_URL, $AWS_REGION).
mon_aws() { # the AWS CLI on the emulator, printed as typed (on stderr: the output may be discarded)
  printf '$ aws %s\n' "$*" >&2
  aws --endpoint-url "$AWS_ENDPOINT_URL" --region "$AWS_REGION" "$@"
}

step "Monitoring 1/4: alarms and dashboard of each local table (DDB-MON-01)"
for t in $(terraform -chdir=envs/local output -state="$DEMO_STATE" -json table_names | jq -r '.[]'); do
  printf '\n-- %s: dashboard "%s"\n' "$t" \
    "$(aws --endpoint-url "$AWS_ENDPOINT_URL" --region "$AWS_REGION" cloudwatch get-dashboard --dashboard-name "$t" --query DashboardName --output text)"
  mon_aws cloudwatch describe-alarms --alarm-name-prefix "$t-" --output text \
    --query 'MetricAlarms[].[AlarmName, MetricName || Metrics[1].MetricStat.Metric.MetricName, Threshold, EvaluationPeriods, TreatMissingData]'
  [ "$(aws --endpoint-url "$AWS_ENDPOINT_URL" --region "$AWS_REGION" cloudwatch describe-alarms \
    --alarm-names "$t-throttled-requests" --query 'length(MetricAlarms)' --output text)" -eq 1 ] ||
    fail "monitoring: $t has no $t-throttled-requests alarm (DDB-MON-01)"
  MON_TABLES=$(( ${MON_TABLES:-0} + 1 ))
done
[ "${MON_TABLES:-0}" -gt 0 ] || fail "monitoring: envs/local lists no table (terraform output table_names)"
printf '\n-- account-level alarms, created once per env apart from any table\n'
mon_aws cloudwatch describe-alarms --alarm-name-prefix local-dynamodb-account- --output text \
  --query 'MetricAlarms[].[AlarmName, MetricName, Threshold, Period, EvaluationPeriods]'
MON_ACCOUNT=$(aws --endpoint-url "$AWS_ENDPOINT_URL" --region "$AWS_REGION" cloudwatch describe-alarms \
  --alarm-name-prefix local-dynamodb-account- --query 'length(MetricAlarms)' --output text)
[ "$MON_ACCOUNT" -eq 3 ] || fail "monitoring: $MON_ACCOUNT account-level alarms, expected 3 (UserErrors, provisioned read and write capacity utilization)"

step "Monitoring 2/4: the stream consumers (DDB-STREAM-04): bisect, bounded retries and age, SQS DLQ"
mon_aws lambda list-event-source-mappings --output text \
  --query 'EventSourceMappings[].[FunctionArn, BisectBatchOnFunctionError, MaximumRetryAttempts, MaximumRecordAgeInSeconds, DestinationConfig.OnFailure.Destination]'
MON_MAPPINGS=$(aws --endpoint-url "$AWS_ENDPOINT_URL" --region "$AWS_REGION" lambda list-event-source-mappings \
  --query 'length(EventSourceMappings[?BisectBatchOnFunctionError && DestinationConfig.OnFailure.Destination])' --output text)
[ "$MON_MAPPINGS" -gt 0 ] || fail "monitoring: no stream consumer with bisect and an on-failure DLQ (DDB-STREAM-04)"

step "Monitoring 3/4: dynops check passes the monitoring rules on every local table"
dynops check --env local --show-passing=false

step "Monitoring 4/4: a table created without alarms fails DDB-MON-01"
MON_BARE=local-hoge-unwatched
mon_aws dynamodb create-table --table-name "$MON_BARE" --billing-mode PAY_PER_REQUEST \
  --attribute-definitions AttributeName=job_id,AttributeType=S --key-schema AttributeName=job_id,KeyType=HASH \
  --stream-specification StreamEnabled=true,StreamViewType=NEW_AND_OLD_IMAGES --deletion-protection-enabled \
  --query TableDescription.TableName --output text
mon_aws dynamodb update-continuous-backups --table-name "$MON_BARE" \
  --point-in-time-recovery-specification PointInTimeRecoveryEnabled=true,RecoveryPeriodInDays=35 >/dev/null
mon_aws dynamodb update-time-to-live --table-name "$MON_BARE" \
  --time-to-live-specification Enabled=true,AttributeName=ttl >/dev/null
# Expected to fail: exit 1 with DDB-MON-01 in the report.
if dynops check --table "$MON_BARE" --show-passing=false; then
  echo "dynops check passed on $MON_BARE, which has no alarms: DDB-MON-01 is not enforced" >&2
  exit 1
else
  mon_rc=$?
fi
[ "$mon_rc" -eq 1 ] || { echo "dynops check exited $mon_rc, expected 1" >&2; exit 1; }
echo "dynops check exited 1 as expected: $MON_BARE has no ThrottledRequests alarm (DDB-MON-01)"
# Clean up the bare table (two-step delete, DDB-PROT-01), so later steps see envs/local only.
mon_aws dynamodb update-table --table-name "$MON_BARE" --no-deletion-protection-enabled >/dev/null
mon_aws dynamodb delete-table --table-name "$MON_BARE" >/dev/null
