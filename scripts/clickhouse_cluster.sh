#!/usr/bin/env bash
# A throwaway ClickHouse cluster on 127.0.0.1 for tests and benchmarks: ZooKeeper plus three
# clickhouse-server processes forming the cluster `opmap` with two shards, the first with two
# replicas (shard1-replica1, shard1-replica2, shard2-replica1). Everything (configs, data,
# logs, PIDs) lives in DIR; ports are probed free so it coexists with other test runs and with
# a system clickhouse-server on 8123/9000. It installs nothing: scripts/setup.sh does.
#
#   clickhouse_cluster.sh start DIR      write configs, start, wait for `SELECT 1` everywhere;
#                                        writes DIR/cluster.env (ports, PIDs, URL)
#   clickhouse_cluster.sh stop DIR       SIGTERM, then SIGKILL after a grace period; idempotent
#   clickhouse_cluster.sh status DIR     one line per process; exit 1 if any is down
#   clickhouse_cluster.sh diagnose DIR   status, the ON CLUSTER queue's length, and the last
#                                        errors of every server and of ZooKeeper
#   clickhouse_cluster.sh kill-replica DIR NAME      SIGKILL one server (NAME: shard1-replica2,
#                                                    ..., or `zookeeper`) for fault tests
#   clickhouse_cluster.sh restart-replica DIR NAME   start it again on the same ports and data
#                                                    (with flags/force_restore_data if it
#                                                    refuses its local parts)
#
# Environment: OPMAP_CH_DEDUP_WINDOW (replicated_deduplication_window, blocks per shard,
# default 1000), OPMAP_CH_DEDUP_WINDOW_SECONDS (default 604800), OPMAP_CH_START_TIMEOUT
# (seconds, default 60), OPMAP_CH_ZK_SESSION_TIMEOUT_MS (default 10000).
set -euo pipefail

NAMES=(shard1-replica1 shard1-replica2 shard2-replica1)
CH_SERVER=${OPMAP_CLICKHOUSE_SERVER:-/usr/sbin/clickhouse-server}
ZK_JAR=${OPMAP_ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}
DEDUP_WINDOW=${OPMAP_CH_DEDUP_WINDOW:-1000}
DEDUP_WINDOW_SECONDS=${OPMAP_CH_DEDUP_WINDOW_SECONDS:-604800}
START_TIMEOUT=${OPMAP_CH_START_TIMEOUT:-60}
ZK_SESSION_TIMEOUT_MS=${OPMAP_CH_ZK_SESSION_TIMEOUT_MS:-10000}

die() { echo "clickhouse_cluster: $*" >&2; exit 1; }
now_ms() { date +%s%3N; }

# N free TCP ports on 127.0.0.1. All sockets are held open until every port is chosen so the
# same port is never returned twice; the tiny race with other processes after close is
# accepted (a clash shows up as a start failure with the server's log).
free_ports() {
  python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# Reads DIR/cluster.env into the shell (only our own KEY=VALUE lines).
load_env() {
  [[ -f "$DIR/cluster.env" ]] || return 1
  # shellcheck disable=SC1091
  source "$DIR/cluster.env"
}

set_env_var() {  # KEY VALUE: replace or append one line of cluster.env
  local key=$1 value=$2
  if grep -q "^$key=" "$DIR/cluster.env"; then
    sed -i "s|^$key=.*|$key=$value|" "$DIR/cluster.env"
  else
    echo "$key=$value" >>"$DIR/cluster.env"
  fi
}

var_name() { echo "${1//-/_}"; }  # shard1-replica2 -> shard1_replica2
join() { local IFS=,; echo "$*"; }

# True when PID is alive and is one of ours (its command line names DIR), so a recycled PID
# of some unrelated process is never signalled.
is_ours() {
  local pid=$1
  [[ -n "$pid" && -r /proc/$pid/cmdline ]] || return 1
  { tr '\0' ' ' </proc/"$pid"/cmdline; } 2>/dev/null | grep -qF -- "$DIR"
}

write_zk_config() {
  mkdir -p "$DIR/zookeeper/conf" "$DIR/zookeeper/data"
  cat >"$DIR/zookeeper/conf/zoo.cfg" <<EOF
# Single ZooKeeper for the test cluster; admin server off (it would take port 8080).
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$DIR/zookeeper/data
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,mntr
# No fsync per write: the tests kill processes, never the host, and the page cache outlives a
# SIGKILLed ZooKeeper. Where fsync is slow, every ZooKeeper write waits on it (the DDL
# queue's deletions below among them).
forceSync=no
EOF
  cp /etc/zookeeper/conf/log4j.properties "$DIR/zookeeper/conf/" 2>/dev/null ||
    echo 'log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p %m%n' \
      >"$DIR/zookeeper/conf/log4j.properties"
}

# users.xml shared by the three servers: `default` without password, loopback only; per-query
# and all-queries memory caps so the cluster stays small beside other test runs.
write_users_config() {
  cat >"$DIR/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <!-- 18.16 has no server-wide cap (max_server_memory_usage came later): cap each
                 query and all queries of a user instead. -->
            <max_memory_usage>1000000000</max_memory_usage>
            <max_memory_usage_for_all_queries>2000000000</max_memory_usage_for_all_queries>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>in_order</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
        <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
    </interval></default></quotas>
</yandex>
EOF
}

# A CA and a certificate for 127.0.0.1 signed by it (DIR/tls), for the servers' HTTPS
# port: the collector's ClickHouse client is tested over TLS against it. Skipped (no
# HTTPS port, CH_TLS_CA empty) without the openssl command.
write_tls() {
  command -v openssl >/dev/null || return 1
  local t="$DIR/tls"
  mkdir -p "$t"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=opmap test CA" \
    -keyout "$t/ca.key" -out "$t/ca.pem" >/dev/null 2>&1 || return 1
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$t/server.key" -out "$t/server.csr" >/dev/null 2>&1 || return 1
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$t/ext.cnf"
  openssl x509 -req -in "$t/server.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" -CAcreateserial \
    -days 30 -extfile "$t/ext.cnf" -out "$t/server.pem" >/dev/null 2>&1 || return 1
  chmod 600 "$t"/*.key
}

# The <https_port> and <openSSL> part of a server's config when DIR/tls exists: HTTPS
# PORT.
tls_config() {
  [[ -f "$DIR/tls/server.pem" ]] || return 0
  cat <<XML
    <https_port>$1</https_port>
    <openSSL>
        <server>
            <certificateFile>$DIR/tls/server.pem</certificateFile>
            <privateKeyFile>$DIR/tls/server.key</privateKeyFile>
            <verificationMode>none</verificationMode>
            <loadDefaultCAFile>false</loadDefaultCAFile>
            <cacheSessions>true</cacheSessions>
            <disableProtocols>sslv2,sslv3</disableProtocols>
            <preferServerCiphers>true</preferServerCiphers>
        </server>
    </openSSL>
XML
}

# config.xml for one server: NAME SHARD REPLICA HTTP TCP INTERSERVER HTTPS.
write_server_config() {
  local name=$1 shard=$2 replica=$3 http=$4 tcp=$5 inter=$6 https=$7 d="$DIR/$1"
  mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas" "$d/log"
  cat >"$d/config.xml" <<EOF
<?xml version="1.0"?>
<!-- $name of the opmap test cluster (generated by scripts/clickhouse_cluster.sh). -->
<yandex>
    <logger>
        <level>information</level>
        <log>$d/log/server.log</log>
        <errorlog>$d/log/server.err.log</errorlog>
        <size>100M</size>
        <count>2</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <http_port>$http</http_port>
    <tcp_port>$tcp</tcp_port>
    <interserver_http_port>$inter</interserver_http_port>
$(tls_config "$https")
    <!-- Replicas fetch parts from each other at this host: loopback, not hostname -f. -->
    <interserver_http_host>127.0.0.1</interserver_http_host>
    <max_connections>1024</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>64</max_concurrent_queries>
    <!-- Small caches: the defaults (8 GiB / 5 GiB) are sized for a dedicated host. -->
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <mark_cache_size>67108864</mark_cache_size>
    <path>$d/data/</path>
    <tmp_path>$d/tmp/</tmp_path>
    <user_files_path>$d/user_files/</user_files_path>
    <format_schema_path>$d/format_schemas/</format_schema_path>
    <users_config>$DIR/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <remote_servers>
        <opmap>
            <!-- internal_replication: a Distributed INSERT writes one replica per shard and
                 ReplicatedMergeTree copies it, so block dedup sees each block once per shard. -->
            <shard>
                <internal_replication>true</internal_replication>
                <replica><host>127.0.0.1</host><port>${TCP_PORTS[0]}</port></replica>
                <replica><host>127.0.0.1</host><port>${TCP_PORTS[1]}</port></replica>
            </shard>
            <shard>
                <internal_replication>true</internal_replication>
                <replica><host>127.0.0.1</host><port>${TCP_PORTS[2]}</port></replica>
            </shard>
        </opmap>
    </remote_servers>
    <zookeeper>
        <node><host>127.0.0.1</host><port>$ZK_PORT</port></node>
        <!-- A SIGKILLed replica can rejoin only after its old session expired (its
             is_active node goes with it): measured catch-up = this + up to 10 s retry. -->
        <session_timeout_ms>$ZK_SESSION_TIMEOUT_MS</session_timeout_ms>
    </zookeeper>
    <macros>
        <cluster>opmap</cluster>
        <shard>$shard</shard>
        <replica>$replica</replica>
    </macros>
    <distributed_ddl>
        <path>/clickhouse/task_queue/ddl</path>
        <!-- A test run queues ~1,500 ON CLUSTER tasks. Past max_tasks_in_queue (default
             1000) every server deletes the oldest in the thread that runs the queue: 2.8 s
             of no DDL here. (The 90 s stalls of CI and of a later run here were a DDL worker
             that terminated: tests/CMakeLists.txt, clickhouse_alone.) -->
        <max_tasks_in_queue>100000</max_tasks_in_queue>
    </distributed_ddl>
    <merge_tree>
        <!-- Exactly once: a resent block is dropped while its hash is among the last N blocks
             (and younger than the seconds limit) of its shard. Size N from the agents' longest
             resend delay (docs/scale-out.md). -->
        <replicated_deduplication_window>$DEDUP_WINDOW</replicated_deduplication_window>
        <replicated_deduplication_window_seconds>$DEDUP_WINDOW_SECONDS</replicated_deduplication_window_seconds>
    </merge_tree>
</yandex>
EOF
}

start_zookeeper() {
  # The Debian package's own start script assumes /etc and /var/log; call the main class
  # directly with our conf dir first on the classpath (log4j.properties is found there).
  setsid java -Xmx256m -Dzookeeper.log.dir="$DIR/zookeeper" -Dzookeeper.root.logger=INFO,CONSOLE \
    -cp "$DIR/zookeeper/conf:$ZK_JAR" org.apache.zookeeper.server.quorum.QuorumPeerMain \
    "$DIR/zookeeper/conf/zoo.cfg" >"$DIR/zookeeper/zookeeper.log" 2>&1 </dev/null &
  ZK_PID=$!
}

start_server() {  # NAME; sets SERVER_PID
  local name=$1
  setsid "$CH_SERVER" --config-file="$DIR/$name/config.xml" \
    >"$DIR/$name/log/stdout.log" 2>&1 </dev/null &
  SERVER_PID=$!
}

# ZooKeeper serves sessions. `ruok` answers `imok` before that (measured: a
# clickhouse-server started then failed the handshake), so ask `srvr` for its Mode.
zk_ready() {
  local reply
  reply=$(exec 2>/dev/null; exec 3<>/dev/tcp/127.0.0.1/"$ZK_PORT" && printf 'srvr' >&3 &&
    timeout 2 cat <&3) || return 1
  [[ "$reply" == *"Mode: standalone"* ]]
}

ch_query() {  # PORT QUERY -> stdout; fails on non-200
  curl -sS --fail-with-body --max-time 30 --data-binary "$2" "http://127.0.0.1:$1/" 2>&1
}

# Waits until the server answers `SELECT 1` and sees ZooKeeper (system.zookeeper readable),
# so a test may create Replicated tables right away. Prints the log tail on timeout.
wait_server() {  # NAME HTTP_PORT PID
  local name=$1 port=$2 pid=$3 deadline=$(( $(date +%s) + START_TIMEOUT ))
  while true; do
    if [[ "$(ch_query "$port" 'SELECT 1' 2>/dev/null)" == "1" ]] &&
       ch_query "$port" "SELECT count() FROM system.zookeeper WHERE path = '/'" >/dev/null; then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "clickhouse_cluster: $name (pid $pid) exited during start; log tail:" >&2
      tail -n 30 "$DIR/$name/log/server.err.log" "$DIR/$name/log/stdout.log" >&2 2>/dev/null || true
      return 1
    fi
    if (( $(date +%s) >= deadline )); then
      echo "clickhouse_cluster: $name not ready on port $port after ${START_TIMEOUT}s; log tail:" >&2
      tail -n 30 "$DIR/$name/log/server.err.log" "$DIR/$name/log/server.log" >&2 2>/dev/null || true
      return 1
    fi
    sleep 0.2
  done
}

wait_zookeeper() {
  local deadline=$(( $(date +%s) + START_TIMEOUT ))
  until zk_ready; do
    if ! kill -0 "$ZK_PID" 2>/dev/null || (( $(date +%s) >= deadline )); then
      echo "clickhouse_cluster: ZooKeeper not ready on port $ZK_PORT; log tail:" >&2
      tail -n 30 "$DIR/zookeeper/zookeeper.log" >&2 || true
      return 1
    fi
    sleep 0.1
  done
}

cmd_start() {
  [[ -x "$CH_SERVER" ]] || die "$CH_SERVER not found: install clickhouse-server (scripts/setup.sh)"
  [[ -r "$ZK_JAR" ]] || die "$ZK_JAR not found: install zookeeper (scripts/setup.sh)"
  command -v java >/dev/null || die "java not found: install zookeeper (scripts/setup.sh)"
  command -v curl >/dev/null || die "curl not found"
  if load_env 2>/dev/null && [[ -n "${ZK_PID:-}" ]] && is_ours "$ZK_PID"; then
    die "a cluster is already running in $DIR (stop it first)"
  fi
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  local t0; t0=$(now_ms)
  local ports; read -r -a ports <<<"$(free_ports 13)"
  ZK_PORT=${ports[0]}
  HTTP_PORTS=("${ports[1]}" "${ports[2]}" "${ports[3]}")
  TCP_PORTS=("${ports[4]}" "${ports[5]}" "${ports[6]}")
  INTER_PORTS=("${ports[7]}" "${ports[8]}" "${ports[9]}")
  HTTPS_PORTS=("${ports[10]}" "${ports[11]}" "${ports[12]}")
  local shards=(shard1 shard1 shard2) replicas=(replica1 replica2 replica1)

  write_zk_config
  write_users_config
  local tls_ca=""
  write_tls && tls_ca="$DIR/tls/ca.pem"
  for i in 0 1 2; do
    write_server_config "${NAMES[$i]}" "${shards[$i]}" "${replicas[$i]}" \
      "${HTTP_PORTS[$i]}" "${TCP_PORTS[$i]}" "${INTER_PORTS[$i]}" "${HTTPS_PORTS[$i]}"
  done
  {
    echo "# Written by scripts/clickhouse_cluster.sh; read by tests (OPMAP_CLICKHOUSE_ENV)."
    echo "CH_DIR=$DIR"
    echo "CH_CLUSTER=opmap"
    echo "CH_NAMES=$(join "${NAMES[@]}")"
    echo "CH_HTTP_PORTS=$(join "${HTTP_PORTS[@]}")"
    echo "CH_TCP_PORTS=$(join "${TCP_PORTS[@]}")"
    echo "CH_INTERSERVER_PORTS=$(join "${INTER_PORTS[@]}")"
    # HTTPS (certificates signed by CH_TLS_CA, for 127.0.0.1); empty without openssl.
    echo "CH_TLS_CA=$tls_ca"
    echo "CH_HTTPS_PORTS=$([[ -n "$tls_ca" ]] && join "${HTTPS_PORTS[@]}")"
    echo "CH_USER=default"
    echo "CH_PASSWORD="
    echo "CH_DEDUP_WINDOW=$DEDUP_WINDOW"
    echo "CH_URL=clickhouse://127.0.0.1:${HTTP_PORTS[0]},127.0.0.1:${HTTP_PORTS[1]},127.0.0.1:${HTTP_PORTS[2]}/default?user=default&cluster=opmap"
    echo "ZK_PORT=$ZK_PORT"
    for i in 0 1 2; do
      echo "CH_HTTP_PORT_$(var_name "${NAMES[$i]}")=${HTTP_PORTS[$i]}"
    done
  } >"$DIR/cluster.env"

  start_zookeeper
  set_env_var ZK_PID "$ZK_PID"
  wait_zookeeper || { cmd_stop; exit 1; }
  local pids=()
  for i in 0 1 2; do
    start_server "${NAMES[$i]}"
    pids+=("$SERVER_PID")
    set_env_var "CH_PID_$(var_name "${NAMES[$i]}")" "$SERVER_PID"
  done
  set_env_var CH_PIDS "$(join "${pids[@]}")"
  for i in 0 1 2; do
    wait_server "${NAMES[$i]}" "${HTTP_PORTS[$i]}" "${pids[$i]}" || { cmd_stop; exit 1; }
  done
  # A no-op ON CLUSTER statement proves the distributed DDL queue works on all three. In
  # 18.16 a server whose DDL worker could not reach ZooKeeper at start segfaults on the
  # first ON CLUSTER query, so find that out here, not in a test.
  if ! ch_query "${HTTP_PORTS[0]}" "DROP DATABASE IF EXISTS opmap_probe ON CLUSTER opmap" >/dev/null; then
    echo "clickhouse_cluster: ON CLUSTER DDL failed; log tails:" >&2
    for n in "${NAMES[@]}"; do tail -n 10 "$DIR/$n/log/server.err.log" >&2 2>/dev/null || true; done
    cmd_stop; exit 1
  fi
  local ms=$(( $(now_ms) - t0 ))
  set_env_var CH_START_MS "$ms"
  echo "clickhouse_cluster: up in ${ms} ms: ZooKeeper :$ZK_PORT, HTTP ${HTTP_PORTS[*]} ($DIR/cluster.env)"
}

# SIGTERM the PIDs, wait up to 10 s, then SIGKILL the rest.
terminate() {
  local pids=("$@") live=() deadline
  for p in "${pids[@]}"; do is_ours "$p" && live+=("$p"); done
  ((${#live[@]})) || return 0
  kill -TERM "${live[@]}" 2>/dev/null || true
  deadline=$(( $(date +%s) + 10 ))
  while (( $(date +%s) < deadline )); do
    local still=()
    for p in "${live[@]}"; do is_ours "$p" && still+=("$p"); done
    ((${#still[@]})) || return 0
    sleep 0.2
  done
  for p in "${live[@]}"; do is_ours "$p" && kill -KILL "$p" 2>/dev/null || true; done
}

cmd_stop() {
  load_env 2>/dev/null || { echo "clickhouse_cluster: nothing running in $DIR"; return 0; }
  local pids=()
  for n in "${NAMES[@]}"; do
    local v="CH_PID_$(var_name "$n")"; [[ -n "${!v:-}" ]] && pids+=("${!v}")
  done
  terminate "${pids[@]}"
  [[ -n "${ZK_PID:-}" ]] && terminate "$ZK_PID"  # last: servers flush to ZooKeeper on exit
  echo "clickhouse_cluster: stopped ($DIR)"
}

cmd_status() {
  load_env || die "no cluster.env in $DIR"
  local rc=0 i=0 ports
  IFS=, read -r -a ports <<<"$CH_HTTP_PORTS"
  if zk_ready; then echo "zookeeper: up (pid $ZK_PID, port $ZK_PORT)"; else echo "zookeeper: down"; rc=1; fi
  for n in "${NAMES[@]}"; do
    local v="CH_PID_$(var_name "$n")"
    if [[ "$(ch_query "${ports[$i]}" 'SELECT 1' 2>/dev/null)" == "1" ]]; then
      echo "$n: up (pid ${!v}, http ${ports[$i]})"
    else
      echo "$n: down (http ${ports[$i]})"; rc=1
    fi
    i=$((i + 1))
  done
  return $rc
}

cmd_diagnose() {
  cmd_status || true
  local ports
  IFS=, read -r -a ports <<<"$CH_HTTP_PORTS"
  echo "ddl queue: $(ch_query "${ports[0]}" \
    "SELECT count() FROM system.zookeeper WHERE path = '/clickhouse/task_queue/ddl'" 2>&1)"
  for n in "${NAMES[@]}"; do
    echo "--- $n: last errors"
    grep -E '<(Fatal|Critical|Error|Warning)>' "$DIR/$n/log/server.err.log" 2>/dev/null |
      tail -n 10 | cut -c1-300
  done
  echo "--- zookeeper: last warnings"
  grep -E " (WARN|ERROR) " "$DIR/zookeeper/zookeeper.log" 2>/dev/null | tail -n 10 | cut -c1-300
}

index_of() {
  local i
  for i in "${!NAMES[@]}"; do [[ "${NAMES[$i]}" == "$1" ]] && { echo "$i"; return 0; }; done
  die "unknown replica '$1' (one of: ${NAMES[*]} zookeeper)"
}

cmd_kill_replica() {
  local name=$1
  load_env || die "no cluster.env in $DIR"
  local v="CH_PID_$(var_name "$name")"
  [[ "$name" == zookeeper ]] && v=ZK_PID || index_of "$name" >/dev/null
  local pid=${!v:-}
  if is_ours "$pid"; then
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  fi
  echo "clickhouse_cluster: $name (pid ${pid:-?}) killed"
}

cmd_restart_replica() {
  local name=$1
  load_env || die "no cluster.env in $DIR"
  if [[ "$name" == zookeeper ]]; then
    is_ours "${ZK_PID:-}" && die "zookeeper is still running (pid $ZK_PID)"
    start_zookeeper
    set_env_var ZK_PID "$ZK_PID"
    wait_zookeeper
    echo "clickhouse_cluster: zookeeper restarted (pid $ZK_PID)"
    return
  fi
  local i ports v; i=$(index_of "$name"); v="CH_PID_$(var_name "$name")"
  is_ours "${!v:-}" && die "$name is still running (pid ${!v})"
  IFS=, read -r -a ports <<<"$CH_HTTP_PORTS"
  local err_log="$DIR/$name/log/server.err.log" seen
  seen=$(stat -c %s "$err_log" 2>/dev/null || echo 0)
  start_replica_as "$name" "$i" "$v"
  if ! wait_server "$name" "${ports[$i]}" "$SERVER_PID"; then
    # A replica SIGKILLed between writing a part and committing it to ZooKeeper finds that
    # part "unexpected" on restart; on a small table one such part can pass ClickHouse's
    # safety ratio (replicated_max_ratio_of_wrong_parts) and the server refuses to start.
    # ClickHouse's documented recovery: the force_restore_data flag, which detaches the
    # unexpected parts and fetches what is missing from the other replica. Only that refusal
    # is recovered; any other failure stays a failure.
    grep -q "doesn't look like the set of parts in ZooKeeper" \
      < <(tail -c +"$((seen + 1))" "$err_log" 2>/dev/null) || die "$name did not restart"
    echo "clickhouse_cluster: $name refused its local parts; restarting with flags/force_restore_data" >&2
    mkdir -p "$DIR/$name/data/flags"
    : >"$DIR/$name/data/flags/force_restore_data"
    start_replica_as "$name" "$i" "$v"
    wait_server "$name" "${ports[$i]}" "$SERVER_PID" || die "$name did not restart with force_restore_data"
  fi
  echo "clickhouse_cluster: $name restarted (pid $SERVER_PID)"
}

start_replica_as() {  # NAME INDEX PID_VAR: start it and record its pid in cluster.env
  local name=$1 i=$2 v=$3
  start_server "$name"
  set_env_var "$v" "$SERVER_PID"
  local pids=()
  for n in "${NAMES[@]}"; do local w="CH_PID_$(var_name "$n")"; pids+=("${!w}"); done
  pids[$i]=$SERVER_PID
  set_env_var CH_PIDS "$(IFS=,; echo "${pids[*]}")"
}

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[[ $# -ge 2 ]] || usage
CMD=$1 DIR=$2
[[ -d "$DIR" || "$CMD" == start ]] || { [[ "$CMD" == stop ]] && exit 0; die "no such directory: $DIR"; }
DIR=$(mkdir -p "$DIR" && cd "$DIR" && pwd)
case "$CMD" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  diagnose) cmd_diagnose ;;
  kill-replica) [[ $# -eq 3 ]] || usage; cmd_kill_replica "$3" ;;
  restart-replica) [[ $# -eq 3 ]] || usage; cmd_restart_replica "$3" ;;
  *) usage ;;
esac
