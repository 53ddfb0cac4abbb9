# 60-dlq.sh: the DLQ drill (runbooks/dlq-redrive.md), sourced by scripts/demo.sh.
# A poison record makes the stream consumer fail; its batch lands in the DLQ as
# an on-failure record; the fix is deployed; dynops dlq redrive empties the DLQ.
#
# The emulator cannot run Lambda code (no Docker), and its event source
# mapping does not invoke functions. So the consumer's real handler runs
# in-process behind a local Lambda Invoke endpoint (test/tools/dlq-drill serve,
# started and stopped here by PID), and the drill does what the event source
# mapping would: read the stream, invoke, retry, and write the documented
# on-failure record from the real stream position of the failed batch.

# moto runs the event source mapping that envs/local gives each streamed
# table on every write: it cannot run the function (no Docker) and drops the
# stream's records, so a drill on local-hoge-user would read an empty stream.
# The drill has a table of its own, with the same key and stream, and no
# mapping; the poll waits (bounded) for the records written and fails if the
# stream never holds them: a drill that did nothing fails the demo.
DLQ_TABLE=local-hoge-dlq-drill
DLQ_NAME=local-hoge-dlq-drill-dlq
DLQ_DRILL="$DEMO_DIR/dlq-drill"
LAMBDA_PID=""
go build -o "$DLQ_DRILL" ./test/tools/dlq-drill

# start_consumer [ACCEPT_POISON]: (re)deploy the consumer on the local endpoint.
start_consumer() {
  rm -f "$DEMO_DIR/lambda.url"
  ACCEPT_POISON=${1:-false} "$DLQ_DRILL" serve --processed-table local-hoge-user-processed \
    --url-file "$DEMO_DIR/lambda.url" --log "$DEMO_DIR/invocations.jsonl" &
  LAMBDA_PID=$!
  for _ in $(seq 100); do [ -s "$DEMO_DIR/lambda.url" ] && break; sleep 0.1; done
  [ -s "$DEMO_DIR/lambda.url" ] || fail "DLQ drill: the local Lambda endpoint did not start"
  LAMBDA_URL=$(cat "$DEMO_DIR/lambda.url")
}
stop_consumer() {
  if [ -n "$LAMBDA_PID" ]; then kill "$LAMBDA_PID" 2>/dev/null || true; wait "$LAMBDA_PID" 2>/dev/null || true; fi
  LAMBDA_PID=""
}
# dlq_messages: the DLQ's message count, from dynops dlq inspect -o json (printed as typed).
dlq_messages() {
  printf '$ dynops dlq inspect --queue %s -o json | jq \x27.messages | length\x27\n' "$DLQ_URL" >&2
  "$DYNOPS" --audit-log "$DYNOPS_AUDIT_LOG" dlq inspect --queue "$DLQ_URL" -o json | jq '.messages | length'
}
trap 'stop_consumer; demo_exit' EXIT

step "DLQ drill 1/5: a poison record makes the stream consumer fail; its batch lands in the DLQ"
start_consumer false
echo "local Lambda endpoint (pid $LAMBDA_PID) at $LAMBDA_URL serves the example consumer's real handler"
run "$DLQ_DRILL" table --name "$DLQ_TABLE"
run "$DLQ_DRILL" write --table "$DLQ_TABLE" --items 3 --poison 1
echo "moto's event source mapping cannot invoke Lambda: the drill reads the stream like one, invokes the"
echo "consumer, retries, and writes the on-failure record Lambda would, from the real stream position:"
echo "\$ dlq-drill poll --table $DLQ_TABLE --dlq $DLQ_NAME --records 4 --batch-size 2 --retries 2 --expect-failed 1"
DLQ_URL=$("$DLQ_DRILL" poll --table "$DLQ_TABLE" --dlq "$DLQ_NAME" --records 4 --wait 60s --expect-failed 1 \
  --lambda-endpoint-url "$LAMBDA_URL" --batch-size 2 --retries 2) || fail "DLQ drill: the poll delivered nothing to the DLQ (above)"
echo "DLQ: $DLQ_URL"

step "DLQ drill 2/5: before: dynops dlq inspect (reads without consuming): one failed batch"
dynops dlq inspect --queue "$DLQ_URL"
DLQ_BEFORE=$(dlq_messages)
[ "$DLQ_BEFORE" -eq 1 ] || fail "DLQ drill: the DLQ holds $DLQ_BEFORE message(s), expected the 1 on-failure record of the poison batch"

step "DLQ drill 3/5: is the consumer fixed? A sample redrive says no: the message is kept"
if dynops dlq redrive --queue "$DLQ_URL" --lambda-endpoint-url "$LAMBDA_URL" --max 1 --yes; then
  fail "DLQ drill: the sample redrive succeeded while the consumer still refuses the poison record"
else
  dlq_rc=$?
fi
[ "$dlq_rc" -eq 1 ] || fail "DLQ drill: the sample redrive exited $dlq_rc, expected 1 (messages kept)"
DLQ_KEPT=$(dlq_messages)
[ "$DLQ_KEPT" -eq 1 ] || fail "DLQ drill: the DLQ holds $DLQ_KEPT message(s) after the refused redrive, expected 1 (kept)"
echo "exit 1 and the message is kept, as it should be while the consumer still refuses the poison record"

step "DLQ drill 4/5: deploy the fix (the consumer accepts the record), dry run, then redrive"
stop_consumer
start_consumer true
echo "consumer redeployed with ACCEPT_POISON=true (pid $LAMBDA_PID)"
dynops dlq redrive --queue "$DLQ_URL" --lambda-endpoint-url "$LAMBDA_URL"
dynops dlq redrive --queue "$DLQ_URL" --lambda-endpoint-url "$LAMBDA_URL" --yes

step "DLQ drill 5/5: after: the DLQ is empty and the consumer got the poison record"
dynops dlq inspect --queue "$DLQ_URL"
DLQ_AFTER=$(dlq_messages)
[ "$DLQ_AFTER" -eq 0 ] || fail "DLQ drill: the DLQ still holds $DLQ_AFTER message(s) after the redrive"
echo "the event the consumer received on the replay (as an event source mapping delivers it):"
tail -n1 "$DEMO_DIR/invocations.jsonl" | jq -c '.payload.Records[] | {eventID, eventName, eventSourceARN, keys: .dynamodb.Keys, poison: .dynamodb.NewImage.poison, seq: .dynamodb.SequenceNumber}'
DLQ_REPLAYED=$(tail -n1 "$DEMO_DIR/invocations.jsonl" | jq '[.payload.Records[] | select(.dynamodb.NewImage.poison.BOOL == true)] | length')
[ "$DLQ_REPLAYED" -ge 1 ] || fail "DLQ drill: the replay did not carry the poison record to the consumer"
stop_consumer
