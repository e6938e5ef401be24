#!/usr/bin/env bash
# The README's test command: install what is needed, configure, build with -j2 and run
# every test, then a short run of every fuzz target. Tests that read ../shared (real GPU
# traces) skip with a message when it is absent.
#
# Stages (each prints how long it took):
#   1. scripts/setup.sh: the Debian packages (clang and its fuzzing runtime included);
#   2. build/ (gcc, Release: -O2, no debug info) and ctest, with the ClickHouse test
#      cluster started beside it unless OPMAP_NO_CLICKHOUSE=1;
#   3. build-fuzz/ (clang, ASan + UBSan, libFuzzer: tests/fuzz/run_all.sh): the committed
#      crash inputs and seeds replayed, then each of the 9 targets fuzzed for
#      OPMAP_FUZZ_SECONDS (default 10) from the committed seeds plus, where ../shared is
#      present, seeds cut from the real data. OPMAP_NO_FUZZ=1 skips this stage.
# env: OPMAP_BUILD_DIR (build), OPMAP_FUZZ_BUILD (build-fuzz), OPMAP_FUZZ_WORK (corpora
#      and findings, default /tmp/opmap-fuzz-all, kept between runs)
set -euo pipefail
cd "$(dirname "$0")/.."

stage() { echo "test.sh: $1 took $(( SECONDS - stage_start )) s"; stage_start=$SECONDS; }
stage_start=$SECONDS
scripts/setup.sh
stage setup

BUILD_DIR="${OPMAP_BUILD_DIR:-build}"
# The fuzz stage replays the committed fuzz inputs with the sanitizers on, so the gcc
# build does not build its own replay binary (OPMAP_FUZZ_REPLAY) unless that stage is off.
replay=OFF
[[ "${OPMAP_NO_FUZZ:-0}" == "1" ]] && replay=ON
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPMAP_FUZZ_REPLAY=$replay
cmake --build "$BUILD_DIR" -j2
stage build
# ClickHouse test cluster (issue 8): ZooKeeper + 3 servers on 127.0.0.1, free ports,
# stopped however the run ends. OPMAP_NO_CLICKHOUSE=1: not started, its tests skip.
if [[ "${OPMAP_NO_CLICKHOUSE:-0}" != "1" ]]; then
  CH_DIR=$(mktemp -d "${TMPDIR:-/tmp}/opmap-ch.XXXXXX")
  trap 'scripts/clickhouse_cluster.sh stop "$CH_DIR" >/dev/null; rm -rf "$CH_DIR"' EXIT
  scripts/clickhouse_cluster.sh start "$CH_DIR"
  export OPMAP_CLICKHOUSE_ENV="$CH_DIR/cluster.env"
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 --timeout 600
stage ctest
if [[ -n "${CH_DIR:-}" ]]; then
  scripts/clickhouse_cluster.sh stop "$CH_DIR" >/dev/null; rm -rf "$CH_DIR"; trap - EXIT
fi

if [[ "${OPMAP_NO_FUZZ:-0}" != "1" ]]; then
  # The fuzzers compete with nothing here: no nice. A finding fails the run; its input is
  # under $OPMAP_FUZZ_WORK/artifacts/ (docs/fuzzing.md says what to do with it).
  NICE=0 tests/fuzz/run_all.sh "${OPMAP_FUZZ_SECONDS:-10}" --build
  stage fuzz
fi
