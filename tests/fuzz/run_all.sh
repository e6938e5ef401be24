#!/usr/bin/env bash
# Builds every fuzz target (clang, -DOPMAP_FUZZ=ON, in build-fuzz/), replays each one's
# committed inputs (tests/fuzz/regressions/<fuzzer>/, tests/fuzz/seeds/<fuzzer>/), cuts
# seed corpora from the real data in $OPMAP_SHARED_DIR, fuzzes each target for SECONDS,
# and prints one summary line per target (docs/fuzzing.md).
#
# usage: tests/fuzz/run_all.sh SECONDS [--build] [--only NAME[,NAME...]] [-j N] [-- libFuzzer flags]
#        tests/fuzz/run_all.sh --short          all targets in under 3 minutes (15 s each)
#        tests/fuzz/run_all.sh --build-only     build the fuzzers and stop (no replay, no fuzzing)
#   --build   run the build even when every fuzzer binary exists (it is incremental)
#   --committed-seeds  fuzz from the committed seeds only, not from seeds cut from the
#             real data (whole traces: loading them is most of a short run's time)
#   --only    a subset, e.g. --only config,profile (names with or without _fuzzer)
#   -j N      fuzz N targets at once (default 1; each is one process on one core); the
#             summary lines then come in the order the targets finish
# env:  OPMAP_FUZZ_BUILD  build directory        (default: <repo>/build-fuzz)
#       OPMAP_FUZZ_WORK   corpora, logs, crashes (default: /tmp/opmap-fuzz-all)
#       OPMAP_SHARED_DIR  real data for seeds    (default: <repo>/../shared)
#       JOBS              build parallelism      (default: 2)
#       OPMAP_FUZZ_OPT    optimization of a newly configured build (default: -O2; test.sh
#                         uses -O0 in a folder of its own: 30 % less build CPU)
#       NICE              niceness of the build and the fuzzers (default: 19)
#       OPMAP_FUZZ_SKIP_REGRESSIONS=1  fuzz on although a committed input fails
# Exit status: 0 when no target found anything; 1 when one did (crash, leak, timeout,
# OOM: the input is under $OPMAP_FUZZ_WORK/artifacts/<fuzzer>/) or a committed input
# fails; 2 for usage or build errors.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${OPMAP_FUZZ_BUILD:-$repo/build-fuzz}"
work="${OPMAP_FUZZ_WORK:-/tmp/opmap-fuzz-all}"
export OPMAP_SHARED_DIR="${OPMAP_SHARED_DIR:-$repo/../shared}"
nice_n="${NICE:-19}"

# name  max_len  dictionary (tests/fuzz/, "-" = none)
targets=(
  "kineto_importer_fuzzer 65536 kineto.dict"
  "batch_ingest_fuzzer    65536 -"
  "ring_reader_fuzzer     32768 ring.dict"
  "capture_file_fuzzer    65536 ring.dict"
  "control_message_fuzzer 20000 ring.dict"
  "nsys_sqlite_fuzzer     65536 nsys.dict"
  "ncu_csv_fuzzer         65536 ncu.dict"
  "profile_fuzzer         4096  profile.dict"
  "config_fuzzer          4096  config.dict"
)

seconds="" force_build=0 build_only=0 only="" parallel=1 extra=() real_seeds=1
while (( $# )); do
  case "$1" in
    --short) seconds=15 ;;
    --build) force_build=1 ;;
    --committed-seeds) real_seeds=0 ;;
    --build-only) force_build=1 build_only=1 seconds=0 ;;
    --only) only="$2"; shift ;;
    -j) parallel="$2"; shift
        if [[ ! "$parallel" =~ ^[1-9][0-9]*$ ]]; then
          echo "run_all.sh: -j needs a positive count, not '$parallel'" >&2; exit 2
        fi ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) if [[ "$1" =~ ^[0-9]+$ ]]; then seconds="$1"; else echo "run_all.sh: bad argument '$1'" >&2; exit 2; fi ;;
  esac
  shift
done
[[ -n "$seconds" ]] || { sed -n '2,24p' "$0" >&2; exit 2; }

selected=()
for t in "${targets[@]}"; do
  read -r name _ _ <<<"$t"
  if [[ -z "$only" ]] || [[ ",$only," == *",$name,"* ]] || [[ ",$only," == *",${name%_fuzzer},"* ]]; then
    selected+=("$t")
  fi
done
(( ${#selected[@]} )) || { echo "run_all.sh: --only '$only' names no fuzzer" >&2; exit 2; }

# ---- build ------------------------------------------------------------------------------
need_build=$force_build
for t in "${selected[@]}"; do
  read -r name _ _ <<<"$t"
  [[ -x "$build/fuzz/$name" ]] || need_build=1
done
[[ -x "$build/fuzz/fuzz_seed_tool" ]] || need_build=1
if (( need_build )); then
  if [[ ! -f "$build/build.ninja" ]]; then
    CC=clang CXX=clang++ nice -n "$nice_n" cmake -S "$repo" -B "$build" -G Ninja \
      -DOPMAP_FUZZ=ON -DOPMAP_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_FLAGS_RELEASE="${OPMAP_FUZZ_OPT:--O2} -DNDEBUG" \
      -DCMAKE_C_FLAGS_RELEASE="${OPMAP_FUZZ_OPT:--O2} -DNDEBUG" \
      -DOPMAP_SHARED_DIR="$OPMAP_SHARED_DIR" > /dev/null || exit 2
  fi
  start=$SECONDS
  nice -n "$nice_n" cmake --build "$build" --target opmap_fuzzers -j "${JOBS:-2}" || exit 2
  echo "run_all.sh: build took $((SECONDS - start)) s"
fi
(( build_only )) && exit 0

mkdir -p "$work"/{corpus,artifacts,logs,seeds}
# ---- committed inputs ---------------------------------------------------------------------
failed_replay=0
for t in "${selected[@]}"; do
  read -r name _ _ <<<"$t"
  # Top-level files only: regressions/<fuzzer>/open/ holds findings not fixed yet.
  mapfile -t inputs < <(find "$here/regressions/$name" "$here/seeds/$name" -maxdepth 1 \
                        -type f ! -name README.md ! -name '.*' 2>/dev/null | sort)
  open_inputs=$(find "$here/regressions/$name/open" -type f 2>/dev/null | wc -l || true)
  (( open_inputs )) && echo "run_all.sh: $name: $open_inputs open finding(s) in regressions/$name/open/ (not replayed)"
  (( ${#inputs[@]} )) || continue
  if ! nice -n "$nice_n" "$build/fuzz/$name" -rss_limit_mb=2048 -timeout=10 "${inputs[@]}" \
       > "$work/logs/$name.replay.log" 2>&1; then
    grep -E "^Running:|ERROR|SUMMARY|runtime error|INVARIANT" "$work/logs/$name.replay.log" | tail -8 >&2
    echo "run_all.sh: $name: a committed input fails (log: $work/logs/$name.replay.log)" >&2
    failed_replay=1
  fi
done
if (( failed_replay )) && [[ "${OPMAP_FUZZ_SKIP_REGRESSIONS:-0}" != 1 ]]; then exit 1; fi
echo "run_all.sh: committed inputs replay clean"

# ---- seeds from real data (cut once; delete $work/seeds to cut again) -----------------------
if (( real_seeds )) && [[ ! -f "$work/seeds/.done" ]]; then
  if [[ -d "$OPMAP_SHARED_DIR" ]]; then
    [[ -d "$OPMAP_SHARED_DIR/traces" ]] && \
      nice -n "$nice_n" "$here/make_seeds.sh" "$work/seeds/kineto_importer_fuzzer" > /dev/null
    nice -n "$nice_n" "$build/fuzz/fuzz_seed_tool" "$OPMAP_SHARED_DIR" "$work/seeds" > /dev/null || true
    nice -n "$nice_n" python3 "$here/make_seeds_real.py" "$OPMAP_SHARED_DIR" "$repo" "$work/seeds" > /dev/null
    touch "$work/seeds/.done"
  else
    echo "run_all.sh: no $OPMAP_SHARED_DIR; fuzzing from the committed seeds only" >&2
  fi
fi

# ---- fuzz ---------------------------------------------------------------------------------
# One target: fuzz it, print its summary line (one write, so lines of targets fuzzed at
# once never interleave) and return 1 when it found something.
fuzz_one() {
  local name=$1 max_len=$2 dict=$3
  local corpus="$work/corpus/$name" artifacts="$work/artifacts/$name/" log="$work/logs/$name.log"
  mkdir -p "$corpus" "$artifacts" "$work/seeds/$name"
  local before; before=$(ls "$artifacts" | wc -l)
  local args=(-max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048
              -print_final_stats=1 -artifact_prefix="$artifacts")
  [[ "$dict" != - && -f "$here/$dict" ]] && args+=(-dict="$here/$dict")
  local seed_dirs=()
  (( real_seeds )) && seed_dirs+=("$work/seeds/$name")
  [[ -d "$here/seeds/$name" ]] && seed_dirs+=("$here/seeds/$name")
  local start; start=$(date +%s.%N)
  local rc=0
  nice -n "$nice_n" "$build/fuzz/$name" "$corpus" "${seed_dirs[@]}" "${args[@]}" ${extra[@]+"${extra[@]}"} \
    > "$log" 2>&1 || rc=$?
  local wall; wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.0f", e - s }')
  local execs rate last cov ft files bytes crashes
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")
  files=$(find "$corpus" -type f | wc -l)
  bytes=$(find "$corpus" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  crashes=$(( $(ls "$artifacts" | wc -l) - before ))
  (( rc != 0 && crashes == 0 )) && crashes="rc=$rc"
  printf '%-24s %12s %9s %7s %7s %8s %10s %6ss %s\n' "$name" "${execs:-?}" "${rate:-?}" \
    "${cov:-?}" "${ft:-?}" "$files" "$bytes" "$wall" "$crashes"
  [[ "$crashes" == 0 ]]
}

printf '%-24s %12s %9s %7s %7s %8s %10s %7s %s\n' fuzzer execs execs/s cov ft corpus bytes wall crashes
# Waiting on a given pid, not `wait -n`: bash forgets to report a job that ended before
# `wait -n` was called, and its finding would be lost.
found=0 pids=()
reap_oldest() {
  wait "${pids[0]}" || found=1
  pids=("${pids[@]:1}")
}
for t in "${selected[@]}"; do
  read -r name max_len dict <<<"$t"
  if (( ${#pids[@]} >= parallel )); then reap_oldest; fi
  fuzz_one "$name" "$max_len" "$dict" &
  pids+=("$!")
done
while (( ${#pids[@]} )); do reap_oldest; done
echo "run_all.sh: logs in $work/logs/, corpora in $work/corpus/, findings in $work/artifacts/"
exit "$found"
