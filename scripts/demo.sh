#!/usr/bin/env bash
# demo.sh: the end-to-end demo, run by `make demo` inside bin/with-emulator,
# which started a fresh emulator and set AWS_ENDPOINT_URL. Each step prints the
# command it runs, as an on-call engineer would type it.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${AWS_ENDPOINT_URL:?run through make demo (bin/with-emulator sets AWS_ENDPOINT_URL)}"
export AWS_REGION=${AWS_REGION:-eu-west-1}
DEMO_DIR=$(mktemp -d)
trap 'rm -rf "$DEMO_DIR"' EXIT
export TF_DATA_DIR="$DEMO_DIR/tf"
export DEMO_STATE="$DEMO_DIR/local.tfstate"
export DYNOPS_AUDIT_LOG="$DEMO_DIR/audit.jsonl"
DYNOPS="$PWD/bin/dynops"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
dynops() { run "$DYNOPS" --audit-log "$DYNOPS_AUDIT_LOG" "$@"; }

step "1. Apply envs/local on the emulator at $AWS_ENDPOINT_URL"
run terraform -chdir=envs/local init -input=false -no-color >/dev/null
run terraform -chdir=envs/local apply -input=false -no-color -auto-approve \
  -state="$DEMO_STATE" -var endpoint="$AWS_ENDPOINT_URL" -var consumer_zip="$PWD/bin/consumer.zip" | grep -E '^(Apply complete|Error)'
run terraform -chdir=envs/local output -state="$DEMO_STATE" table_names

step "2. dynops check: every local table against the guideline"
dynops check --env local

# Later drills (restore, export, DLQ redrive, DR) add scripts/demo.d/NN-*.sh.
for f in scripts/demo.d/*.sh; do
  [ -e "$f" ] || continue
  # shellcheck source=/dev/null
  source "$f"
done

step "Audit log of this demo ($DYNOPS_AUDIT_LOG)"
wc -l <"$DYNOPS_AUDIT_LOG" | xargs printf '%s audit records (a started and a finished record per run)\n'
dynops audit log --since 1h | tail -n 5

# The demo ends with the on-call path: runbooks/pitr-restore.md run by dynops
# itself on a damaged table, then the incident's timeline.
source scripts/demo-runbook.sh
