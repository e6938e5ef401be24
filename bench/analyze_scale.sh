#!/usr/bin/env bash
# opmap analyze on 1x/8x/32x/128x copies of a shared trace: time vs. zcat and peak RSS vs.
# the 1x figure (bench/analyze_scale.py says how; docs/benchmarks.md has the figures).
# usage: bench/analyze_scale.sh [--sizes 1,8,32,128] [--reps N] [--base-copies 5] [--work DIR]
# env:   OPMAP_BIN (default <repo>/build/bin/opmap), OPMAP_SHARED_DIR (default <repo>/../shared)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export OPMAP_SHARED_DIR="${OPMAP_SHARED_DIR:-$here/../../shared}"
exec python3 "$here/analyze_scale.py" "$@"
