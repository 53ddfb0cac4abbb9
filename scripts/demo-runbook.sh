# shellcheck shell=bash
# demo-runbook.sh: the last demo step, sourced by scripts/demo.sh after
# every drill of scripts/demo.d: `dynops runbook run pitr-restore`
# on a damaged table, then `dynops audit timeline` of its incident.
# The emulator restores the CURRENT items whatever time is asked, so the run
# stops after the restore (--through restore), the damage is done, and the
# same command resumes: diff, repair, verify. On AWS the damage comes first
# and one run does it all, restoring to --time just before it.
RB_TABLE=local-hoge-user
RB_INCIDENT=INC-DEMO-$(date -u +%Y%m%d%H%M%S)
rb_aws() { # the AWS CLI on the emulator; prints the command, not its JSON
  printf '$ aws dynamodb %s\n' "$*"
  aws dynamodb --endpoint-url "$AWS_ENDPOINT_URL" --region "$AWS_REGION" "$@" >/dev/null
}
rb_user() { # id status: one user item
  printf '{"user_id":{"S":"user_%03d"},"email":{"S":"user%d@example.com"},"display_name":{"S":"User %d"},"status":{"S":"%s"}}' "$1" "$1" "$1" "$2"
}
rb_seed() { # 20 active users in one BatchWriteItem
  local reqs
  reqs=$(for i in $(seq 1 20); do printf '{"PutRequest":{"Item":%s}}\n' "$(rb_user "$i" active)"; done | paste -sd,)
  printf '$ aws dynamodb batch-write-item --request-items {"%s": [20 users]}\n' "$RB_TABLE"
  aws dynamodb --endpoint-url "$AWS_ENDPOINT_URL" --region "$AWS_REGION" batch-write-item \
    --request-items "{\"$RB_TABLE\":[$reqs]}" >/dev/null
}

step "Runbook 1/3: dynops runbook run pitr-restore on $RB_TABLE (incident $RB_INCIDENT): check, restore"
rb_seed
rc=0
dynops runbook run pitr-restore --incident "$RB_INCIDENT" --param table="$RB_TABLE" --yes --through restore || rc=$?
[ "$rc" -eq 5 ] || { echo "runbook run --through restore: exit $rc, want 5 (stopped on purpose)" >&2; exit 1; }

step "Runbook 2/3: the bad day on $RB_TABLE: 2 users deleted, 2 corrupted; the same command resumes"
rb_aws delete-item --table-name "$RB_TABLE" --key '{"user_id":{"S":"user_003"}}'
rb_aws delete-item --table-name "$RB_TABLE" --key '{"user_id":{"S":"user_004"}}'
rb_aws put-item --table-name "$RB_TABLE" --item "$(rb_user 7 corrupted)"
rb_aws put-item --table-name "$RB_TABLE" --item "$(rb_user 8 corrupted)"
# The damage window's end and its keys (on AWS: --damage-stream reads them from the table's stream).
for i in 3 4 7 8; do printf '{"user_id":{"S":"user_%03d"}}\n' "$i"; done >"$DEMO_DIR/rb-damaged.jsonl"
dynops runbook run pitr-restore --incident "$RB_INCIDENT" --yes \
  --param damage="--damage-until $(date -u +%Y-%m-%dT%H:%M:%SZ) --damage-keys $DEMO_DIR/rb-damaged.jsonl"

step "Runbook 3/3: the incident's timeline (dynops audit timeline --incident $RB_INCIDENT --format markdown)"
dynops audit timeline --incident "$RB_INCIDENT" --format markdown
