#!/usr/bin/env bash
# A controlled latency-throughput sweep in one command: builds what it needs, then
# bench/sweep.py runs opmap-demo-infer at each offered rate under opmap-agent and a
# private opmap-collector, and prints per step the demo's own and the collector's
# p50/p99, the GPU power and requests per joule, with the knee (highest rate meeting
# --sla-ms) from each.
#
#   bench/sweep.sh [--rates 50,100,200,400,800] [--seconds 8] [--sla-ms MS] [--json F]
#                  [--demo-args "--workers 1 ..."] [--nvml-library LIB] [--power-env N=V]
# env: OPMAP_BUILD_DIR (build)
set -euo pipefail
cd "$(dirname "$0")/.."
for a in "$@"; do
  if [[ "$a" == -h || "$a" == --help ]]; then sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
done
BUILD_DIR="${OPMAP_BUILD_DIR:-build}"
[[ -f "$BUILD_DIR/build.ninja" ]] || cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target opmap opmap-collector opmap-agent \
  opmap-demo-infer opmap_inject > /dev/null
exec python3 bench/sweep.py --bin "$BUILD_DIR/bin" --lib "$BUILD_DIR/lib/libopmap_inject.so" "$@"
