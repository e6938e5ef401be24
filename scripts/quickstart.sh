#!/usr/bin/env bash
# The README's main-job command: the live pipeline on this machine, GPU or not.
#   1. installs the Debian packages (scripts/setup.sh) and builds opmap;
#   2. starts opmap-collector (SQLite store) and opmap-agent on loopback, in a private
#      temporary directory (tokens, sockets, spool, database);
#   3. runs the demo inference workload (opmap-demo-infer: a small transformer decoder on
#      the CPU, Poisson arrivals) under libopmap_inject.so for about 20 s, captured by
#      the agent in one window and streamed to the collector;
#   4. prints `opmap query` output: per-request latency, per layer type and per operator
#      time share and p50/p95/p99, and the CPU counters — unavailable ones named with the
#      reason (in a VM: no PMU, so no PAPI hardware counters; no GPU: no CUPTI).
#
#   scripts/quickstart.sh [--seconds N] [--rate R] [--keep]
#     --seconds N   workload duration (default 20)
#     --rate R      offered requests per second (default 100)
#     --keep        keep the temporary directory (database, logs) and print its path
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_RUN=20
RATE=100
KEEP=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --rate) RATE="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "quickstart: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

step() { echo; echo "== $*"; }

step "setup and build"
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target opmap opmap-collector opmap-agent opmap-demo-infer \
  opmap_inject
LIB="$PWD/build/lib/libopmap_inject.so"
[[ -f "$LIB" ]] || { echo "quickstart: $LIB was not built" >&2; exit 1; }

WORK=$(mktemp -d /tmp/opmap-quickstart.XXXXXX)
chmod 700 "$WORK"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ $KEEP == 1 ]]; then echo "quickstart: kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# Tokens: one for the agent, one for queries (the collector refuses calls without one).
AGENT_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
ANALYST_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s agent quickstart-agent\n%s analyst quickstart\n' "$AGENT_TOKEN" "$ANALYST_TOKEN" \
  > "$WORK/tokens"
echo "$AGENT_TOKEN" > "$WORK/agent.token"
chmod 600 "$WORK/tokens" "$WORK/agent.token"

step "collector (SQLite store $WORK/opmap.db)"
build/bin/opmap-collector --listen 127.0.0.1:0 --store "sqlite:$WORK/opmap.db" \
  --tokens "$WORK/tokens" --metrics-listen "" > "$WORK/collector.out" 2> "$WORK/collector.err" &
PIDS+=($!)
for _ in $(seq 100); do
  grep -q "listening on" "$WORK/collector.out" 2>/dev/null && break
  sleep 0.1
done
ADDR=$(sed -n 's/^listening on //p' "$WORK/collector.out")
[[ -n "$ADDR" ]] || { cat "$WORK/collector.err" >&2; exit 1; }
echo "collector listening on $ADDR"

step "agent (one capture window covering the run; loopback, plaintext)"
WINDOW=$((SECONDS_RUN + 15))
build/bin/opmap-agent --socket "$WORK/agent.sock" --control-socket "$WORK/control.sock" \
  --spool-dir "$WORK/spool" --collector "$ADDR" --insecure --token-file "$WORK/agent.token" \
  --capture-window "${WINDOW}s" --capture-every "$((WINDOW * 2))s" --agent-id quickstart \
  > "$WORK/agent.out" 2> "$WORK/agent.err" &
PIDS+=($!)
for _ in $(seq 100); do
  grep -q "agent ready" "$WORK/agent.out" 2>/dev/null && break
  sleep 0.1
done
grep -q "agent ready" "$WORK/agent.out" || { cat "$WORK/agent.err" >&2; exit 1; }
cat "$WORK/agent.out"

step "demo workload: ${SECONDS_RUN}s at ${RATE} requests/s under libopmap_inject.so"
OPMAP_AGENT_SOCKET="$WORK/agent.sock" NVTX_INJECTION64_PATH="$LIB" OPMAP_INIT_WAIT_MS=5000 \
  OPMAP_MODEL=demo-decoder OPMAP_MODEL_REVISION=quickstart OPMAP_PRECISION=fp32 \
  build/bin/opmap-demo-infer --duration "$SECONDS_RUN" --rate "$RATE" | tee "$WORK/demo.out"

step "agent status"
build/bin/opmap-agent status --control-socket "$WORK/control.sock"

# The window closes when the workload exits; wait until its requests are queryable.
export OPMAP_TOKEN="$ANALYST_TOKEN"
q() { build/bin/opmap query "$@" --collector "$ADDR"; }
for _ in $(seq 150); do
  if q latency --subject request --format csv 2>/dev/null | tail -n +2 | grep -q .; then break; fi
  sleep 0.2
done

step "opmap query latency --subject request (per-request latency, all captured requests)"
q latency --subject request
step "opmap query tail (why the slowest requests were slow: each component's excess over the median band)"
q tail --quantile 0.99
step "opmap query latency --subject operator-cpu --group-by layer_type (time share by layer type)"
q latency --subject operator-cpu --group-by layer_type
step "opmap query latency --subject operator-cpu --group-by operator"
q latency --subject operator-cpu --group-by operator
step "opmap query latency --subject kernel --group-by layer_type (GPU kernels)"
q latency --subject kernel --group-by layer_type || true
step "opmap query counters (CPU counters; unavailable ones with the reason)"
q counters
