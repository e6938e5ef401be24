#!/usr/bin/env bash
# A bounded soak on loopback (docs/security.md): one agent streams a live demo workload to
# a collector while hostile peers run against both daemons:
#   - against the agent: rings that flood, poison their counters, write 100k window marks,
#     random bytes, and rings shrunk under the reader (build/tests/hostile_registrant);
#   - against the collector: forged sessions, malformed batches, 1,000 streams, slow
#     /metrics clients (build/tests/hostile_client).
# At the end it checks:
#   - every batch the agent produced was stored exactly once (none pending, none dropped,
#     the agent's acked count equals what the collector stored from it);
#   - every demo request that ran inside a capture window is stored exactly once, and
#     every stored request range is one the demo served (match_requests.py: the demo's
#     --request-log against `opmap export` of the agent's sessions);
#   - neither daemon restarted or died;
#   - both peak RSS stayed under the bounds below.
# It prints the figures.
#
# usage: tests/soak/soak.sh [SECONDS]   (default 120, at most 600; needs a built build/)
# env:   OPMAP_BUILD (default <repo>/build), AGENT_RSS_MIB (512), COLLECTOR_RSS_MIB (1024)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${OPMAP_BUILD:-$repo/build}"
seconds="${1:-120}"
(( seconds >= 20 && seconds <= 600 )) || { echo "soak: SECONDS must be 20..600" >&2; exit 2; }
agent_bound="${AGENT_RSS_MIB:-512}"
collector_bound="${COLLECTOR_RSS_MIB:-1024}"
for b in "$build/bin/opmap-collector" "$build/bin/opmap-agent" "$build/bin/opmap-demo-infer" \
         "$build/tests/hostile_registrant" "$build/tests/hostile_client" "$build/lib/libopmap_inject.so"; do
  [[ -x "$b" || -f "$b" ]] || { echo "soak: $b is missing (build first)" >&2; exit 2; }
done
work="$(mktemp -d /tmp/opmap-soak.XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

agent_token=soak-agent-token-0123456789; fleet_token=soak-fleet-token-0123456789
noise_token=soak-noise-token-0123456789; analyst_token=soak-analyst-token-0123456789
crowd_token=soak-crowd-token-0123456789
cat > "$work/tokens" <<TOKENS
$agent_token agent soak-agent agents=soak-agent
$fleet_token agent fleet agents=fleet-*
$noise_token agent noise agents=soak-malformed
$crowd_token agent crowd agents=soak-crowd
$analyst_token analyst analyst
TOKENS
chmod 600 "$work/tokens"; echo "$agent_token" > "$work/agent.token"

"$build/bin/opmap-collector" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
  --store "sqlite:$work/soak.db" --tokens "$work/tokens" >"$work/collector.out" 2>"$work/collector.err" &
collector=$!; pids+=("$collector")
for _ in $(seq 100); do grep -q '^metrics on' "$work/collector.out" 2>/dev/null && break; sleep 0.1; done
addr="$(sed -n 's/^listening on //p' "$work/collector.out")"
maddr="$(sed -n 's/^metrics on //p' "$work/collector.out")"
[[ -n "$addr" && -n "$maddr" ]] || { cat "$work/collector.err"; exit 1; }

"$build/bin/opmap-agent" --socket "$work/agent.sock" --control-socket "$work/control.sock" \
  --spool-dir "$work/spool" --agent-id soak-agent --collector "$addr" --insecure \
  --token-file "$work/agent.token" --capture-every 2s --capture-window 1s --capture-jitter 0 \
  >"$work/agent.out" 2>"$work/agent.err" &
agent=$!; pids+=("$agent")
for _ in $(seq 100); do grep -q 'agent ready' "$work/agent.out" 2>/dev/null && break; sleep 0.1; done

NVTX_INJECTION64_PATH="$build/lib/libopmap_inject.so" OPMAP_AGENT_SOCKET="$work/agent.sock" \
  "$build/bin/opmap-demo-infer" --duration "$seconds" --rate 100 --json \
  --request-log "$work/requests.log" >"$work/demo.out" 2>"$work/demo.err" &
demo=$!; pids+=("$demo")

for mode in flood counters windows garbage; do
  "$build/tests/hostile_registrant" "$work/agent.sock" "$mode" "$seconds" >"$work/ring-$mode.out" 2>&1 &
  pids+=("$!")
done
hc="$build/tests/hostile_client"
"$hc" "$addr" "$maddr" "$fleet_token" forge "$seconds" >"$work/client-forge.out" 2>&1 & pids+=("$!")
"$hc" "$addr" "$maddr" "$noise_token" malformed "$seconds" >"$work/client-malformed.out" 2>&1 & pids+=("$!")
"$hc" "$addr" "$maddr" "$crowd_token" streams "$seconds" >"$work/client-streams.out" 2>&1 & pids+=("$!")
"$hc" "$addr" "$maddr" "$crowd_token" metrics "$seconds" >"$work/client-metrics.out" 2>&1 & pids+=("$!")

rss() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$1/status" 2>/dev/null || echo -1; }
# "anon file" MiB: heap growth against SQLite's and the binaries' file pages.
rss_parts() {
  awk '/RssAnon/ {a=int($2/1024)} /RssFile/ {f=int($2/1024)} END {print a, f}' \
    "/proc/$1/status" 2>/dev/null || echo "-1 -1"
}
echo "# seconds agent_rss collector_rss collector_anon collector_file (MiB)" >"$work/rss.txt"
metric() { curl -s --max-time 2 "http://$maddr/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
max_agent=0; max_collector=0; scrapes=0; scrape_fail=0; shrinks=0; slowest_status_ms=0
end=$((SECONDS + seconds))
while (( SECONDS < end )); do
  "$build/tests/hostile_registrant" "$work/agent.sock" shrink 1 >/dev/null 2>&1 || true
  shrinks=$((shrinks + 1))
  a="$(rss "$agent")"; c="$(rss "$collector")"
  (( a > max_agent )) && max_agent=$a; (( c > max_collector )) && max_collector=$c
  echo "$((seconds - end + SECONDS)) $a $c $(rss_parts "$collector")" >>"$work/rss.txt"
  t0=$(date +%s%N)
  "$build/bin/opmap-agent" status --control-socket "$work/control.sock" --json >/dev/null 2>&1 || true
  ms=$(( ($(date +%s%N) - t0) / 1000000 )); (( ms > slowest_status_ms )) && slowest_status_ms=$ms
  scrapes=$((scrapes + 1))
  [[ -n "$(metric opmap_collector_batches_total)" ]] || scrape_fail=$((scrape_fail + 1))
done

wait "$demo" || { echo "soak: the demo failed"; cat "$work/demo.err"; exit 1; }
# Let the agent send what it holds (its windows end at most a window later).
status() { "$build/bin/opmap-agent" status --control-socket "$work/control.sock" --json; }
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }
for _ in $(seq 60); do
  [[ "$(status | field "['upload']['queued_batches']")" == 0 ]] && break; sleep 0.5
done
acked="$(status | field "['upload']['acked_batches']")"
dropped="$(status | field "['upload']['dropped_batches']")"
queued="$(status | field "['upload']['queued_batches']")"
stored="$(metric opmap_collector_batches_total)"
noise="$(metric 'opmap_collector_rejected_total{code="invalid_value"}')"
denied="$(metric opmap_collector_permission_denied_total)"
refused="$(metric opmap_collector_streams_refused_total)"
malformed="$(metric opmap_collector_malformed_messages_total)"
from_agent=$((stored - noise))
alive_agent=yes; kill -0 "$agent" 2>/dev/null || alive_agent=no
alive_collector=yes; kill -0 "$collector" 2>/dev/null || alive_collector=no
kill -TERM "$agent"; agent_rc=0; wait "$agent" || agent_rc=$?
"$build/bin/opmap" export --collector "$addr" --token "$analyst_token" --agent soak-agent \
  --out "$work/export.json" --quiet 2>"$work/export.err" || { echo "soak: export failed"; cat "$work/export.err"; exit 1; }
requests_rc=0
python3 "$repo/tests/soak/match_requests.py" "$work/requests.log" "$work/export.json" "$demo" \
  >"$work/requests.out" || requests_rc=$?

echo "soak: ${seconds}s, $(sed -n 's/.*"requests":\([0-9]*\).*/\1/p' "$work/demo.out") demo requests"
echo "  agent: acked $acked batches, queued $queued, dropped $dropped, peak RSS ${max_agent} MiB (bound $agent_bound), slowest status ${slowest_status_ms} ms, exit $agent_rc, $shrinks shrinking rings"
# The collector's RSS at each quarter of the run (anon + file), to tell growth from a plateau.
quarters=$(awk -v n="$seconds" '!/^#/ {for (q = 1; q <= 4; q++) if (!(q in done) && $1 >= n * q / 4 - 1) {
  printf "%s%ds %d+%d", (q > 1 ? ", " : ""), $1, $4, $5; done[q] = 1}}' "$work/rss.txt")
echo "  collector: stored $stored batches ($from_agent from the agent, $noise malformed noise), peak RSS ${max_collector} MiB (bound $collector_bound), $denied forged refused, $refused streams refused, $malformed unparseable, /metrics $((scrapes - scrape_fail))/$scrapes answered"
echo "  collector RSS anon+file MiB: $quarters (all samples: $work/rss.txt)"
for f in "$work"/client-*.out; do echo "  $(cat "$f")"; done
sed 's/^/  /' "$work/requests.out"
fail=0
[[ "$alive_agent" == yes && "$alive_collector" == yes && "$agent_rc" == 0 ]] || { echo "FAIL: a daemon died or restarted"; fail=1; }
[[ "$queued" == 0 && "$dropped" == 0 && "$from_agent" == "$acked" ]] || { echo "FAIL: not exactly once ($from_agent stored vs $acked acked)"; fail=1; }
(( requests_rc == 0 )) || { echo "FAIL: demo requests not stored exactly once"; fail=1; }
(( max_agent < agent_bound && max_collector < collector_bound )) || { echo "FAIL: RSS over its bound"; fail=1; }
(( scrape_fail == 0 )) || { echo "FAIL: $scrape_fail scrapes failed"; fail=1; }
(( denied > 0 && refused > 0 && malformed > 0 )) || { echo "FAIL: the hostile peers did not reach the collector"; fail=1; }
(( fail == 0 )) && echo "soak: PASS (work dir $work)" || echo "soak: FAIL (work dir $work)"
exit "$fail"
