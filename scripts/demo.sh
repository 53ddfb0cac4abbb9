#!/usr/bin/env bash
# demo.sh: the end-to-end demo, run by `make demo` inside bin/with-emulator,
# which started a fresh emulator and set AWS_ENDPOINT_URL. Each step prints the
# command it runs, as an on-call engineer would type it.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${AWS_ENDPOINT_URL:?run through make demo (bin/with-emulator sets AWS_ENDPOINT_URL)}"
export AWS_REGION=${AWS_REGION:-eu-west-1}
DEMO_DIR=$(mktemp -d)
export TF_DATA_DIR="$DEMO_DIR/tf"
export DEMO_STATE="$DEMO_DIR/local.tfstate"
export DYNOPS_AUDIT_LOG="$DEMO_DIR/audit.jsonl"
DYNOPS="$PWD/bin/dynops"

# The whole output is also kept in a log the demo names at its start and end.
mkdir -p .cache
DEMO_LOG="$PWD/.cache/demo-$(date -u +%Y%m%dT%H%M%SZ).log"
exec > >(tee -a "$DEMO_LOG") 2>&1
printf 'make demo: the full log is %s\n' "$DEMO_LOG"

# Phases: every `step` of this script, the scripts/demo.d drills and the
# runbook drill, counted from their text. Each says its number, the time so
# far and, from the pace so far, about how long is left.
DEMO_START=$(date +%s)
DEMO_PHASES=$(cat scripts/demo.sh scripts/demo.d/*.sh scripts/demo-runbook.sh | grep -cE '^[[:space:]]*step ')
DEMO_PHASE=0
clock() { printf '%d:%02d' $(( $1 / 60 )) $(( $1 % 60 )); }
step() {
  local now elapsed left=""
  now=$(date +%s); elapsed=$(( now - DEMO_START ))
  DEMO_PHASE=$(( DEMO_PHASE + 1 ))
  # The pace is the drills' (phase 1, the apply, is slower than any other).
  [ "$DEMO_PHASE" -eq 2 ] && DEMO_APPLIED=$now
  if [ "$DEMO_PHASE" -gt 2 ]; then
    left=", about $(clock $(( (now - DEMO_APPLIED) * (DEMO_PHASES - DEMO_PHASE + 1) / (DEMO_PHASE - 2) ))) left"
  fi
  printf '\n\033[1m== [%d/%d, %s elapsed%s] %s\033[0m\n' "$DEMO_PHASE" "$DEMO_PHASES" "$(clock "$elapsed")" "$left" "$*"
}
# demo_exit ends every run, passed or failed (a drill that adds its own
# EXIT trap calls it too).
demo_exit() {
  rm -rf "$DEMO_DIR"
  printf '\nmake demo: %s in all; the full log is %s\n' "$(clock $(( $(date +%s) - DEMO_START )))" "$DEMO_LOG"
}
trap demo_exit EXIT
run() { printf '$ %s\n' "$*"; "$@"; }
# fail: a phase's check found that it did not do what it says; the demo stops, failed.
fail() { printf '\nmake demo: FAILED in phase %d: %s\n' "$DEMO_PHASE" "$*" >&2; exit 1; }
dynops() { run "$DYNOPS" --audit-log "$DYNOPS_AUDIT_LOG" "$@"; }

step "1. Apply envs/local on the emulator at $AWS_ENDPOINT_URL"
run terraform -chdir=envs/local init -input=false -no-color >/dev/null
# The apply's progress: one line per tenth of its resources, then its result.
run terraform -chdir=envs/local apply -input=false -no-color -auto-approve \
  -state="$DEMO_STATE" -var consumer_zip="$PWD/bin/consumer.zip" |
  awk '/^Plan: / { total = $2 } /: Creation complete/ { n++; if (total && n % (int(total / 10) + 1) == 0) printf "  created %d of %d resources\n", n, total; fflush() }
       /^(Apply complete|Error)/ { print; fflush() }'
run terraform -chdir=envs/local output -state="$DEMO_STATE" table_names
[ "$(terraform -chdir=envs/local output -state="$DEMO_STATE" -json table_names | jq length)" -gt 0 ] ||
  fail "the apply left no table (terraform output table_names)"

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
