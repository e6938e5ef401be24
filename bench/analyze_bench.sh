#!/usr/bin/env bash
# opmap analyze vs. the decompression floor (`zcat FILE > /dev/null`) and peak RSS vs. the
# uncompressed JSON size; see bench/analyze_bench.py and docs/benchmarks.md.
# usage: bench/analyze_bench.sh [--reps N] [--largest-only]
# env:   OPMAP_BIN (default <repo>/build/bin/opmap), OPMAP_SHARED_DIR (default <repo>/../shared)
# Exit status 0 whatever the figures (a benchmark, not a test).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export OPMAP_SHARED_DIR="${OPMAP_SHARED_DIR:-$here/../../shared}"
exec python3 "$here/analyze_bench.py" "$@"
