#!/usr/bin/env bash
# The README's main-job command. For now: build opmap and analyze a PyTorch-profiler
# trace (default: the H100 BERT trace from ../shared/traces). Later issues turn this into
# the live pipeline (collector + agent + demo workload).
#   scripts/quickstart.sh [TRACE.json[.gz]] [analyze options...]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 --target opmap

TRACE="${1:-../shared/traces/tl_h100_gaunernst_bert-small-uncased__1016001.json.gz}"
shift || true
if [[ ! -f "$TRACE" ]]; then
  echo "quickstart: trace not found: $TRACE" >&2
  echo "usage: scripts/quickstart.sh TRACE.json[.gz] [--format table|json|csv] [--top N]" >&2
  exit 2
fi
exec build/bin/opmap analyze "$TRACE" "$@"
