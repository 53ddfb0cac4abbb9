#!/usr/bin/env bash
# make test: runs each stage, then prints its wall time and the CPU time of
# the processes it waited for (user+sys, from the shell's `times`), and the
# ratio of the two: the cores the stage kept busy on average. Processes a
# stage does not wait for (an emulator stopped by a signal) are not counted.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .cache
# cpu sets CPU to the CPU seconds of the waited-for children so far. `times`
# must run in this shell: in a command substitution (a subshell) it would
# report the subshell's own children, none.
cpu() {
  times >.cache/times
  CPU=$(awk 'NR==2 { t=0; for (i=1;i<=2;i++) { split($i,a,"m"); sub("s","",a[2]); t+=a[1]*60+a[2] } printf "%.0f", t }' .cache/times)
}
start=$(date +%s); cpu; cpu0=$CPU
# A new machine (the lint tools not built yet: tflint's aws ruleset alone is
# most of a cold setup): those tools build in the background, niced, in the
# cores the tests leave idle (the go test stage keeps ~1.4 of 2 busy), while
# setup builds only what the tests need (DYNOPS_SETUP_TOOLS=test); lint runs
# last, once they are built. With the tools built (every later run) nothing
# changes: the stages run in the order given.
stages=("$@")
bg=""
if [[ " $* " == *" setup "* && " $* " == *" lint "* ]] && [ -n "$(scripts/setup.sh --missing-lint-tools)" ]; then
  echo "== lint tools not built yet ($(scripts/setup.sh --missing-lint-tools | paste -sd ' ')): building them in the background (.cache/setup-lint-tools.log); lint runs last"
  DYNOPS_SETUP_TOOLS=lint nice -n 10 scripts/setup.sh >.cache/setup-lint-tools.log 2>&1 &
  bg=$!
  bg_start=$(date +%s)
  export DYNOPS_SETUP_TOOLS=test
  stages=()
  for stage in "$@"; do [ "$stage" = lint ] || stages+=("$stage"); done
  stages+=(lint)
fi
for stage in "${stages[@]}"; do
  if [ "$stage" = lint ] && [ -n "$bg" ]; then
    t=$(date +%s); cpu; c=$CPU
    bg_rc=0
    wait "$bg" || bg_rc=$?
    cpu
    echo "== lint tools (background, started $(( t - bg_start )) s before lint): waited $(( $(date +%s) - t )) s for them, $(( CPU - c )) s CPU in all; exit $bg_rc"
    [ "$bg_rc" = 0 ] || tail -5 .cache/setup-lint-tools.log
    unset DYNOPS_SETUP_TOOLS
  fi
  t=$(date +%s); cpu; c=$CPU
  if ! make --no-print-directory "$stage"; then
    echo "== make $stage: FAILED after $(( $(date +%s) - t )) s"
    exit 1
  fi
  w=$(( $(date +%s) - t )); cpu; u=$(( CPU - c ))
  echo "== make $stage: $w s wall, $u s CPU ($(awk -v u="$u" -v w="$w" 'BEGIN { printf "%.2f", (w ? u/w : 0) }') cores)"
done
w=$(( $(date +%s) - start )); cpu; u=$(( CPU - cpu0 ))
echo "== make test: $w s wall, $u s CPU on $(getconf _NPROCESSORS_ONLN) cores"
