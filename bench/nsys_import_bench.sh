#!/usr/bin/env bash
# Nsight Systems SQLite import: `opmap analyze FILE --format json` on the larger
# export in ../shared/nsys, printed beside `sqlite3 FILE 'select count(*) from
# CUPTI_ACTIVITY_KIND_KERNEL'` timed in the same run (the floor: opening the file and
# walking one table). Median of N runs each, interleaved, wall time of the whole command.
#   bench/nsys_import_bench.sh [FILE.sqlite] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=${1:-../shared/nsys/mfu_2gpu_before.sqlite}
RUNS=${2:-9}
OPMAP=build/bin/opmap
[[ -f "$FILE" ]] || { echo "unavailable: $FILE not found (../shared absent?)"; exit 0; }
command -v sqlite3 > /dev/null || { echo "unavailable: the sqlite3 CLI is not installed"; exit 0; }
[[ -x "$OPMAP" ]] || { echo "unavailable: $OPMAP not built"; exit 0; }

ms() {  # wall milliseconds of "$@", output discarded
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

kernels=$(sqlite3 "$FILE" 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL')
a=() b=()
for _ in $(seq "$RUNS"); do
  a+=("$(ms sqlite3 "$FILE" 'select count(*) from CUPTI_ACTIVITY_KIND_KERNEL')")
  b+=("$(ms "$OPMAP" analyze "$FILE" --format json --quiet)")
done
sq=$(printf '%s\n' "${a[@]}" | median)
op=$(printf '%s\n' "${b[@]}" | median)
echo "file: $FILE ($(stat -c %s "$FILE") bytes, $kernels kernels), median of $RUNS runs"
echo "sqlite3 count(*) of CUPTI_ACTIVITY_KIND_KERNEL: ${sq} ms"
echo "opmap analyze --format json (import, mapping, summary, JSON): ${op} ms"
awk -v o="$op" -v s="$sq" 'BEGIN { if (s > 0) printf "ratio: %.1fx the count(*) floor\n", o / s }'
