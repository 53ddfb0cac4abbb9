#!/usr/bin/env bash
# tfsec-accepted.sh: every finding tfsec is told to accept (.tfsec/config.yml,
# `exclude`) carries its reason on the same line (`# reason: ...`, naming the
# guideline rule where there is one). Run by scripts/lint.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cfg=.tfsec/config.yml
bad=$(sed -n '/^exclude:/,/^[^ -]/p' "$cfg" | grep -E '^[[:space:]]*- ' | grep -vE '#[[:space:]]*reason:[[:space:]]*[^[:space:]]' || true)
if [ -n "$bad" ]; then
  echo "tfsec: accepted findings without a reason in $cfg (add '# reason: ...'):"
  echo "$bad"
  exit 1
fi
echo "tfsec: $(sed -n '/^exclude:/,/^[^ -]/p' "$cfg" | grep -cE '^[[:space:]]*- ') accepted findings, each with its reason"
