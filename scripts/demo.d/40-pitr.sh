# 40-pitr.sh: the PITR drill of runbooks/pitr-restore.md on local-hoge-user:
# restore to a new table, damage the original, diff, repair, diff again.
# Sourced by scripts/demo.sh (step, run, dynops, $DEMO_DIR, $AWS_ENDPOINT_URL).
# The emulator restores the CURRENT items whatever time is asked, so the
# "bad day" writes come after the restore here; on AWS they come before it
# and the restore goes back in time.
PITR_TABLE=local-hoge-user
PITR_RESTORED=$PITR_TABLE-restored-$(date -u +%Y%m%dt%H%M%Sz)
PITR_KEYS=$DEMO_DIR/pitr-keys.jsonl
ddb() { # the AWS CLI on the emulator; prints the command, not its JSON
  printf '$ aws dynamodb %s\n' "$*"
  aws dynamodb --endpoint-url "$AWS_ENDPOINT_URL" --region "$AWS_REGION" "$@" >/dev/null
}
pitr_user() { # id status: one PutRequest line
  printf '{"PutRequest":{"Item":{"user_id":{"S":"user_%03d"},"email":{"S":"user%d@example.com"},"display_name":{"S":"User %d"},"status":{"S":"%s"}}}}\n' "$1" "$1" "$1" "$2"
}
pitr_put() { # file of PutRequest lines: one BatchWriteItem (at most 25)
  printf '{"%s":[%s]}' "$PITR_TABLE" "$(paste -sd, "$1")" >"$1.json"
  ddb batch-write-item --request-items "file://$1.json"
}

step "PITR drill 1/7: $PITR_TABLE holds 20 users; its PITR window"
for i in $(seq 1 20); do pitr_user "$i" active; done >"$DEMO_DIR/pitr-users"
pitr_put "$DEMO_DIR/pitr-users"
dynops pitr status --table "$PITR_TABLE"

step "PITR drill 2/7: plan the restore (dry run), then restore to the latest restorable time"
dynops pitr restore --table "$PITR_TABLE" --latest --target "$PITR_RESTORED"
dynops pitr restore --table "$PITR_TABLE" --latest --target "$PITR_RESTORED" --yes

step "PITR drill 3/7: the bad day: 2 users deleted, 3 corrupted"
ddb delete-item --table-name "$PITR_TABLE" --key '{"user_id":{"S":"user_001"}}'
ddb delete-item --table-name "$PITR_TABLE" --key '{"user_id":{"S":"user_002"}}'
for i in 10 11 12; do pitr_user "$i" corrupted; done >"$DEMO_DIR/pitr-corrupt"
pitr_put "$DEMO_DIR/pitr-corrupt"
# The damage window's end and its keys (on AWS: from the stream, --damage-stream).
PITR_UNTIL=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for i in 1 2 10 11 12; do printf '{"user_id":{"S":"user_%03d"}}\n' "$i"; done >"$DEMO_DIR/pitr-damaged.jsonl"

step "PITR drill 4/7: diff the restored table against the original"
dynops table diff --source "$PITR_RESTORED" --target "$PITR_TABLE" --segments 4 --keys-out "$PITR_KEYS"
PITR_DIFFS=$(jq -s '[.[] | select(.key)] | length' "$PITR_KEYS") # the first line is the diff's header
[ "$PITR_DIFFS" -eq 5 ] || fail "PITR drill: the diff found $PITR_DIFFS differing key(s), expected the 5 damaged (2 deleted, 3 corrupted)"

step "PITR drill 5/7: repair the damaged keys from the restored table (dry run, then --yes)"
dynops pitr repair --from "$PITR_RESTORED" --to "$PITR_TABLE" --keys "$PITR_KEYS" --damage-until "$PITR_UNTIL" --damage-keys "$DEMO_DIR/pitr-damaged.jsonl"
dynops pitr repair --from "$PITR_RESTORED" --to "$PITR_TABLE" --keys "$PITR_KEYS" --damage-until "$PITR_UNTIL" --damage-keys "$DEMO_DIR/pitr-damaged.jsonl" --yes
dynops pitr verify --record "$PITR_KEYS.repair.jsonl"

step "PITR drill 6/7: diff again: no difference left (--exit-code fails the demo otherwise)"
dynops table diff --source "$PITR_RESTORED" --target "$PITR_TABLE" --exit-code
echo "PITR drill result: 2 deleted and 3 corrupted users are back in $PITR_TABLE; 0 differences"

step "PITR drill 7/7: clean up the restored table (deletion protection first: it was re-applied)"
ddb update-table --table-name "$PITR_RESTORED" --no-deletion-protection-enabled
ddb delete-table --table-name "$PITR_RESTORED"
echo "deleted $PITR_RESTORED"
