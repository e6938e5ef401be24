#!/usr/bin/env bash
# The README's test command: install what is needed, configure, build with -j2 and run
# every test, then a short run of every fuzz target. Tests that read ../shared (real GPU
# traces) skip with a message when it is absent.
#
# Stages (each prints how long it took):
#   1. scripts/setup.sh: the Debian packages (clang and its fuzzing runtime included);
#   2. build/ (gcc, Release: -O2, no debug info);
#   3. ctest, with the ClickHouse test cluster unless OPMAP_NO_CLICKHOUSE=1, then the
#      tests that can take the cluster's DDL down (label clickhouse_alone), one at a time;
#      build-fuzz-O0/ (clang, ASan + UBSan, libFuzzer, -O0: 233 core-s against 336 at
#      -O2; the short runs here need coverage, not speed) builds from here on beside
#      stages 3-5 at the idle scheduling class;
#   4. tests/framework/run.sh: real PyTorch workloads under the library with a real agent
#      and collector (about 60 s); skipped with "framework tests: skipped: <why>" where
#      the venv scripts/setup_frameworks.sh makes is absent;
#   5. the tests labelled needs_idle_cpu (they time live processes), with none of the
#      other tests beside them (the light tail tests beside each other);
#   6. tests/fuzz/run_all.sh: the committed crash inputs and seeds replayed, then each of
#      the 9 targets fuzzed for OPMAP_FUZZ_SECONDS (default 5: a smoke run; the long runs
#      are docs/fuzzing.md's), two at a time, from the committed seeds.
#      OPMAP_NO_FUZZ=1 skips the fuzz build and this stage.
# env: OPMAP_BUILD_DIR (build), OPMAP_FUZZ_BUILD (build-fuzz-O0), OPMAP_FUZZ_WORK (corpora
#      and findings; default a fresh folder, removed when nothing was found)
set -euo pipefail
cd "$(dirname "$0")/.."

stage() { echo "test.sh: $1 took $(( SECONDS - stage_start )) s"; stage_start=$SECONDS; }
stage_start=$SECONDS
scripts/setup.sh
stage setup

BUILD_DIR="${OPMAP_BUILD_DIR:-build}"
fuzz=1
[[ "${OPMAP_NO_FUZZ:-0}" == "1" ]] && fuzz=0
# Long fuzz runs use tests/fuzz/run_all.sh's own -O2 build-fuzz/; this one is for CI.
export OPMAP_FUZZ_BUILD="${OPMAP_FUZZ_BUILD:-$PWD/build-fuzz-O0}" OPMAP_FUZZ_OPT=-O0
# The background fuzz build and the ClickHouse cluster are stopped however the run ends.
fuzz_build_pid=""
cleanup() {
  if [[ -n "$fuzz_build_pid" ]]; then
    pkill -TERM -P "$fuzz_build_pid" 2>/dev/null || true
    kill "$fuzz_build_pid" 2>/dev/null || true
  fi
  if [[ -n "${CH_DIR:-}" ]]; then
    scripts/clickhouse_cluster.sh stop "$CH_DIR" >/dev/null 2>&1 || true
    rm -rf "$CH_DIR"
  fi
}
trap cleanup EXIT

# The fuzz stage replays the committed fuzz inputs with the sanitizers on, so the gcc
# build does not build its own replay binary (OPMAP_FUZZ_REPLAY) unless that stage is off.
replay=OFF
(( fuzz )) || replay=ON
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPMAP_FUZZ_REPLAY=$replay
cmake --build "$BUILD_DIR" -j2
stage build

# ClickHouse test cluster: ZooKeeper + 3 servers on 127.0.0.1, free ports,
# stopped however the run ends. OPMAP_NO_CLICKHOUSE=1: not started, its tests skip.
if [[ "${OPMAP_NO_CLICKHOUSE:-0}" != "1" ]]; then
  CH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/opmap-ch.XXXXXX")
  scripts/clickhouse_cluster.sh start "$CH_DIR"
  export OPMAP_CLICKHOUSE_ENV="$CH_DIR/cluster.env"
fi
# The fuzzers build (clang, ASan) beside everything that follows, at the idle scheduling
# class where the kernel offers it (SCHED_IDLE: it runs only on a CPU nothing else wants and
# yields the moment a test's process wakes; plain nice 19 otherwise): most tests wait on
# sockets, child processes and the clock, and the build takes what they leave.
if (( fuzz )); then
  fuzz_build_log=$(mktemp "${TMPDIR:-/tmp}/opmap-fuzz-build.XXXXXX")
  idle_class=()
  chrt -i 0 true 2>/dev/null && idle_class=(chrt -i 0)
  NICE=19 "${idle_class[@]}" tests/fuzz/run_all.sh --build-only > "$fuzz_build_log" 2>&1 &
  fuzz_build_pid=$!
fi
# -j5 under the resource file tests/CMakeLists.txt writes: two tests that use CPU at a
# time (as -j2 did), and beside them up to three that mostly wait on the ClickHouse
# cluster's ON CLUSTER DDL.
ctest_rc=0
# A clean clone has no timings for ctest to start the longest tests first (they would
# start in test order and finish last): it gets the committed ones of a test.sh run.
costs="$BUILD_DIR/Testing/Temporary/CTestCostData.txt"
[[ -f "$costs" ]] || { mkdir -p "$(dirname "$costs")" && cp tests/ctest_cost_seed.txt "$costs"; }
resources="$(cd "$BUILD_DIR" && pwd)/ctest_resources.json"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j5 --resource-spec-file "$resources" \
  --timeout 600 -LE "needs_idle_cpu|clickhouse_alone" || ctest_rc=$?
# The tests that kill a replica or ALTER replicated tables ON CLUSTER, one at a time with
# nothing else on the cluster (tests/CMakeLists.txt says why).
ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 600 -L clickhouse_alone || ctest_rc=$?
# The ClickHouse cluster goes (its merges run on after the tests that wrote to it): nothing
# after this uses it.
if [[ -n "${CH_DIR:-}" ]]; then
  # A failed run says what the cluster was doing: its queue and its servers' last errors.
  (( ctest_rc == 0 )) || scripts/clickhouse_cluster.sh diagnose "$CH_DIR" || true
  scripts/clickhouse_cluster.sh stop "$CH_DIR" >/dev/null; rm -rf "$CH_DIR"; CH_DIR=""
fi
stage "ctest (the fuzz build beside it)"

# Beside what is left of the fuzz build: the framework tests check counts, clocks and
# outputs against the workloads' own logs, no latency bound.
OPMAP_BUILD_DIR="$BUILD_DIR" tests/framework/run.sh
stage framework
# The tests that time live processes: nothing of ours beside them but the idle-class fuzz
# build (measured here: the stage took 110 s with it as without it, and the build finished
# inside it). -j4: the light timed tests (tail_e2e_test) run beside each other; the
# RUN_SERIAL ones (release_ab_test) alone all the same.
ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 600 -L needs_idle_cpu -j4 ||
  ctest_rc=$?
stage "needs_idle_cpu tests (the fuzz build beside them)"
if (( fuzz )); then
  if ! wait "$fuzz_build_pid"; then
    echo "test.sh: building the fuzzers failed:" >&2
    cat "$fuzz_build_log" >&2
    exit 2
  fi
  fuzz_build_pid=""
  stage "the rest of the fuzz build"
fi
(( ctest_rc == 0 )) || exit "$ctest_rc"

if (( fuzz )); then
  # Nothing else runs now: two targets at once, no nice, from the committed seeds in a
  # fresh folder (the seeds cut from ../shared are whole traces: loading them took most of
  # the stage). A finding fails the run and keeps the folder: the input is under its
  # artifacts/ (docs/fuzzing.md says what to do with it).
  fuzz_work="${OPMAP_FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/opmap-fuzz-smoke.XXXXXX")}"
  OPMAP_FUZZ_WORK="$fuzz_work" NICE=0 tests/fuzz/run_all.sh "${OPMAP_FUZZ_SECONDS:-5}" -j 2 \
    --committed-seeds
  [[ -n "${OPMAP_FUZZ_WORK:-}" ]] || rm -rf "$fuzz_work"
  stage fuzz
fi
