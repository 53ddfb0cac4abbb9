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
for stage in "$@"; do
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
