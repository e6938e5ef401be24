#!/usr/bin/env bash
# Builds kineto_importer_fuzzer (clang, -DOPMAP_FUZZ=ON, in build-fuzz/) and fuzzes the
# Kineto importer -> mapping -> summary -> JSON report pipeline for SECONDS (default 60).
# It first replays tests/fuzz/regressions/kineto_importer_fuzzer/ (inputs of bugs found
# before; each must pass) and stops there if one fails. All targets: run_all.sh.
# Exit status: 0 when the run ended with no crash, leak, timeout or OOM; non-zero (the
# fuzzer's own status) otherwise, with the input saved under $OPMAP_FUZZ_WORK/artifacts/.
#
# usage: tests/fuzz/run_fuzz.sh [SECONDS] [extra libFuzzer flags...]
# env:   OPMAP_FUZZ_BUILD  build directory       (default: <repo>/build-fuzz)
#        OPMAP_FUZZ_WORK   corpus and artifacts  (default: /tmp/opmap-fuzz)
#        OPMAP_SHARED_DIR  real traces for seeds (default: <repo>/../shared)
#        JOBS              build parallelism     (default: 2)
#        OPMAP_FUZZ_NO_BUILD=1  run the fuzzer already in $OPMAP_FUZZ_BUILD, skip cmake
#        OPMAP_FUZZ_SKIP_REGRESSIONS=1  fuzz on although a known bug is not fixed yet
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
seconds="${1:-60}"
shift || true
build="${OPMAP_FUZZ_BUILD:-$repo/build-fuzz}"
work="${OPMAP_FUZZ_WORK:-/tmp/opmap-fuzz}"
export OPMAP_SHARED_DIR="${OPMAP_SHARED_DIR:-$repo/../shared}"

if [[ "${OPMAP_FUZZ_NO_BUILD:-0}" == 1 ]]; then
  :
elif [[ ! -f "$build/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -S "$repo" -B "$build" -G Ninja \
    -DOPMAP_FUZZ=ON -DOPMAP_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Release \
    -DOPMAP_SHARED_DIR="$OPMAP_SHARED_DIR"
fi
if [[ "${OPMAP_FUZZ_NO_BUILD:-0}" != 1 ]]; then
  cmake --build "$build" --target kineto_importer_fuzzer -j "${JOBS:-2}"
fi
fuzzer="$build/fuzz/kineto_importer_fuzzer"

mkdir -p "$work/corpus" "$work/artifacts"
# Replay the inputs of earlier bugs (files, not a corpus folder: each runs once).
shopt -s nullglob
regressions=("$here"/regressions/kineto_importer_fuzzer/*)
if (( ${#regressions[@]} )) && [[ "${OPMAP_FUZZ_SKIP_REGRESSIONS:-0}" != 1 ]]; then
  if ! "$fuzzer" -rss_limit_mb=2048 -timeout=10 "${regressions[@]}" \
       > "$work/regressions.log" 2>&1; then
    grep -E "^Running:|ERROR|SUMMARY|runtime error" "$work/regressions.log" | tail -20 >&2
    echo "run_fuzz.sh: a regression input fails (log: $work/regressions.log)" >&2
    exit 1
  fi
  echo "run_fuzz.sh: ${#regressions[@]} regression inputs pass"
fi

if [[ -d "$OPMAP_SHARED_DIR/traces" ]]; then
  "$here/make_seeds.sh" "$work/seeds"
else
  echo "run_fuzz.sh: no $OPMAP_SHARED_DIR/traces; fuzzing from an empty corpus" >&2
  mkdir -p "$work/seeds"
fi

# New inputs go to corpus/ (kept between runs); seeds/ is read only.
set +e
"$fuzzer" "$work/corpus" "$work/seeds" \
  -max_total_time="$seconds" -max_len=65536 -dict="$here/kineto.dict" \
  -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$@" 2>&1 | tee "$work/last_run.log"
rc=${PIPESTATUS[0]}
set -e
echo "run_fuzz.sh: fuzzer exit status $rc; corpus $(ls "$work/corpus" | wc -l) files;" \
     "log $work/last_run.log; artifacts in $work/artifacts/"
exit "$rc"
