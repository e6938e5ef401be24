#!/usr/bin/env bash
# The build itself refuses an include across the layers (cmake/layers.cmake): for a target
# of each of analysis/, collector/store/sqlite/ and agent/inject/, its real compile command
# (from BUILD/compile_commands.json) compiles a planted file that includes what the row
# allows, and fails on each planted include the row forbids — quoted and angle-bracket —
# with "No such file or directory". Relative includes are scripts/check_layers.sh's. And a
# copy of the tree with a target in a folder the table has no row for, and with
# opmap-agent's library linking opmap's command-line library, does not configure.
#
# usage: tests/layers/build_layers_test.sh BUILD_DIR
set -euo pipefail
build="${1:?usage: build_layers_test.sh BUILD_DIR}"
db="$build/compile_commands.json"
[[ -f "$db" ]] || { echo "FAIL: no $db (configure with CMAKE_EXPORT_COMPILE_COMMANDS, as the tree does)"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The compile command (as an argument list, one per line) of the first object built under
# build folder $1 (e.g. analysis/summary/), with its source and output replaced by the
# planted file and a syntax-only check.
command_for() {
  python3 - "$db" "$1" "$tmp/planted.cc" <<'PY'
import json, shlex, sys
db, prefix, planted = sys.argv[1], sys.argv[2], sys.argv[3]
for entry in json.load(open(db)):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out = args[args.index("-o") + 1] if "-o" in args else ""
    if not out.startswith(prefix) or not out.endswith(".o"):
        continue
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-MD", "-MMD") or a == entry["file"]:
            continue
        kept.append(a)
    kept += ["-fsyntax-only", planted]
    print(entry["directory"])
    print("\n".join(kept))
    sys.exit(0)
sys.exit(f"no compile command for an object under {prefix} in {db}")
PY
}

# Compiles a file holding the include $2 with the command of build folder $1; sets $out, $rc.
compile() {
  local lines
  lines="$(command_for "$1")" || { echo "FAIL: $lines"; exit 1; }
  local dir
  dir="$(head -1 <<<"$lines")"
  mapfile -t argv < <(tail -n +2 <<<"$lines")
  printf '%s\n' "$2" > "$tmp/planted.cc"
  set +e
  out="$(cd "$dir" && "${argv[@]}" 2>&1)"
  rc=$?
  set -e
}

expect_ok() {
  compile "$1" "$2"
  [[ $rc == 0 ]] || { echo "FAIL: $1's command refused an allowed include $2:"; echo "$out"; exit 1; }
}

expect_refused() {
  compile "$1" "$2"
  if [[ $rc == 0 ]]; then
    echo "FAIL: $1's command compiled the forbidden include $2"
    exit 1
  fi
  grep -q "No such file or directory" <<<"$out" \
    || { echo "FAIL: $1 refused $2 for another reason:"; echo "$out"; exit 1; }
}

expect_ok analysis/summary/ '#include "analysis/model/trace.h"'
expect_ok analysis/summary/ '#include "common/text/units.h"'
expect_refused analysis/summary/ '#include "cli/connection_flags.h"'
expect_refused analysis/summary/ '#include <cli/connection_flags.h>'
expect_refused analysis/summary/ '#include "collector/store/store.h"'

expect_ok collector/store/sqlite/ '#include "collector/store/query_common.h"'
expect_refused collector/store/sqlite/ '#include "collector/group_commit.h"'
expect_refused collector/store/sqlite/ '#include "collector/store/clickhouse/clickhouse_store.h"'

expect_ok agent/inject/ '#include "abi/ring_protocol.h"'
expect_refused agent/inject/ '#include "common/io/read_file.h"'
expect_refused agent/inject/ '#include "analysis/model/trace.h"'

# A target in a folder without a row: the configure stops, naming it.
repo="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir "$tmp/tree"
(cd "$repo" && git ls-files -z | xargs -0 cp --parents -t "$tmp/tree" 2>/dev/null) \
  || { echo "FAIL: cannot copy the tree"; exit 1; }
mkdir -p "$tmp/tree/newtop"
printf 'int x;\n' > "$tmp/tree/newtop/x.cc"
printf 'add_library(newtop_lib STATIC x.cc)\n' > "$tmp/tree/newtop/CMakeLists.txt"
sed -i 's|^include(cmake/layers.cmake)$|add_subdirectory(newtop)\n&|' "$tmp/tree/CMakeLists.txt"
grep -q '^add_subdirectory(newtop)$' "$tmp/tree/CMakeLists.txt" \
  || { echo "FAIL: CMakeLists.txt no longer includes cmake/layers.cmake on a line of its own"; exit 1; }
printf 'target_link_libraries(opmap_agent_daemon PUBLIC opmap_cli_lib)\n' \
  >> "$tmp/tree/agent/daemon/CMakeLists.txt"
set +e
out="$(cmake -S "$tmp/tree" -B "$tmp/tree/build" -G Ninja -DOPMAP_BUILD_TESTS=OFF \
  -DOPMAP_BUILD_BENCH=OFF 2>&1)"
rc=$?
set -e
[[ $rc != 0 ]] || { echo "FAIL: a target in a folder without a row configured"; exit 1; }
flat="$(tr -s ' \n' ' ' <<<"$out")"
grep -q "target newtop_lib: folder newtop/ has no row" <<<"$flat" \
  || { echo "FAIL: the folder without a row is not named:"; echo "$out" | tail -20; exit 1; }
grep -q "agent/daemon/CMakeLists.txt: opmap_agent_daemon links opmap_cli_lib (cli/), which the row agent/daemon/ of docs/architecture.md does not allow" <<<"$flat" \
  || { echo "FAIL: the forbidden link is not named:"; echo "$out" | tail -20; exit 1; }
echo "PASS"
