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

DLQ_TABLE=local-hoge-user
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
  [ -s "$DEMO_DIR/lambda.url" ] || { echo "the local Lambda endpoint did not start"; return 1; }
  LAMBDA_URL=$(cat "$DEMO_DIR/lambda.url")
}
stop_consumer() {
  if [ -n "$LAMBDA_PID" ]; then kill "$LAMBDA_PID" 2>/dev/null || true; wait "$LAMBDA_PID" 2>/dev/null || true; fi
  LAMBDA_PID=""
}
trap 'stop_consumer; demo_exit' EXIT

step "DLQ drill 1/5: a poison record in $DLQ_TABLE makes the stream consumer fail"
start_consumer false
echo "local Lambda endpoint (pid $LAMBDA_PID) at $LAMBDA_URL serves the example consumer's real handler"
run "$DLQ_DRILL" write --table "$DLQ_TABLE" --items 3 --poison 1
echo "moto's event source mapping cannot invoke Lambda: the drill reads the stream like one, invokes the"
echo "consumer, retries, and writes the on-failure record Lambda would, from the real stream position:"
echo "\$ dlq-drill poll --table $DLQ_TABLE --dlq local-hoge-user-drill-dlq --batch-size 2 --retries 2"
DLQ_URL=$("$DLQ_DRILL" poll --table "$DLQ_TABLE" --dlq local-hoge-user-drill-dlq \
  --lambda-endpoint-url "$LAMBDA_URL" --batch-size 2 --retries 2)
echo "DLQ: $DLQ_URL"

step "DLQ drill 2/5: before: dynops dlq inspect (reads without consuming)"
dynops dlq inspect --queue "$DLQ_URL"

step "DLQ drill 3/5: is the consumer fixed? A sample redrive says no: the message is kept"
dynops dlq redrive --queue "$DLQ_URL" --lambda-endpoint-url "$LAMBDA_URL" --max 1 --yes \
  || echo "(exit $?: kept, as it should be while the consumer still refuses the poison record)"

step "DLQ drill 4/5: deploy the fix (the consumer accepts the record), dry run, then redrive"
stop_consumer
start_consumer true
echo "consumer redeployed with ACCEPT_POISON=true (pid $LAMBDA_PID)"
dynops dlq redrive --queue "$DLQ_URL" --lambda-endpoint-url "$LAMBDA_URL"
dynops dlq redrive --queue "$DLQ_URL" --lambda-endpoint-url "$LAMBDA_URL" --yes

step "DLQ drill 5/5: after: the DLQ is empty"
dynops dlq inspect --queue "$DLQ_URL"
if command -v jq >/dev/null; then
  echo "the event the consumer received on the replay (as an event source mapping delivers it):"
  tail -n1 "$DEMO_DIR/invocations.jsonl" | jq -c '.payload.Records[] | {eventID, eventName, eventSourceARN, keys: .dynamodb.Keys, poison: .dynamodb.NewImage.poison, seq: .dynamodb.SequenceNumber}'
fi
stop_consumer
