#!/usr/bin/env bash
# scripts/check_layers.sh must fail on each planted violation — a quoted, an angle-bracket
# and a relative include across the rules, a folder the table lacks, a target linking one
# its folder may not use — naming the file and line, and pass on the same tree without it. Builds a small tree in a temporary folder with this
# repository's docs/architecture.md (so the real table is what is checked).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs" "$tmp/analysis/summary" "$tmp/cli" "$tmp/common/io" "$tmp/agent/inject"
cp "$repo/docs/architecture.md" "$tmp/docs/"
printf '#pragma once\n' > "$tmp/cli/connection_flags.h"
printf '#pragma once\n' > "$tmp/common/io/read_file.h"
printf '#pragma once\n' > "$tmp/analysis/summary/trace_summary.h"
cat > "$tmp/analysis/summary/ok.cc" <<'CC'
#include <string>
#include "absl/strings/str_cat.h"
#include "analysis/summary/trace_summary.h"
#include "common/io/read_file.h"
#include "opmap/v1/telemetry.pb.h"
CC
cat > "$tmp/agent/inject/ok.cc" <<'CC'
#include "agent/inject/ring.h"
CC

# Runs the check on the tree (extra flags in "$@"): its output in $out, exit status in $rc.
check() {
  set +e
  out="$("$repo/scripts/check_layers.sh" --root "$tmp" "$@" 2>&1)"
  rc=$?
  set -e
  echo "$out"
}

out="$("$repo/scripts/check_layers.sh" --root "$tmp")" || { echo "FAIL: a clean tree was refused:"; echo "$out"; exit 1; }

# The planted violations: analysis/ reaching up into cli/, the injection library into common/.
cat > "$tmp/analysis/summary/bad.cc" <<'CC'
#include <string>
#include "cli/connection_flags.h"
CC
printf '\n#include "common/io/read_file.h"\n' > "$tmp/agent/inject/bad.cc"
check
[[ $rc == 1 ]] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
grep -q '^analysis/summary/bad.cc:2: analysis/ may not include "cli/connection_flags.h"' <<<"$out" \
  || { echo "FAIL: the analysis/ violation is not named with its line"; exit 1; }
grep -q '^agent/inject/bad.cc:2: agent/inject/ may not include "common/io/read_file.h"' <<<"$out" \
  || { echo "FAIL: the agent/inject/ violation is not named with its line"; exit 1; }
grep -q '2 include(s) break the dependency rules' <<<"$out" || { echo "FAIL: count"; exit 1; }
rm "$tmp/analysis/summary/bad.cc" "$tmp/agent/inject/bad.cc"

# The other include forms name the same header: angle brackets, and a path relative to
# the including file.
printf '#include <cli/connection_flags.h>\n' > "$tmp/analysis/summary/angle.cc"
printf '#include "../../cli/connection_flags.h"\n' > "$tmp/analysis/summary/relative.cc"
# A top-level folder the table does not know.
mkdir -p "$tmp/newtop"
printf 'int x;\n' > "$tmp/newtop/x.cc"
check
[[ $rc == 1 ]] || { echo "FAIL: exit $rc, expected 1 (include forms, unknown folder)"; exit 1; }
grep -q '^analysis/summary/angle.cc:1: analysis/ may not include "cli/connection_flags.h"' <<<"$out" \
  || { echo "FAIL: the angle-bracket include passed"; exit 1; }
grep -q '^analysis/summary/relative.cc:1: analysis/ may not include "../../cli/connection_flags.h" = "cli/connection_flags.h"' <<<"$out" \
  || { echo "FAIL: the relative include passed"; exit 1; }
grep -q '^newtop/x.cc: folder newtop/ has no row' <<<"$out" \
  || { echo "FAIL: a folder missing from the table passed"; exit 1; }
rm -r "$tmp/newtop" "$tmp/analysis/summary/angle.cc" "$tmp/analysis/summary/relative.cc"

# The link graph: agent/daemon's target linking cli/'s, which its row does not allow.
if command -v cmake >/dev/null; then
  printf 'int d() { return 0; }\n' > "$tmp/agent/inject/d.cc"
  mkdir -p "$tmp/agent/daemon"
  printf 'int e() { return 0; }\n' > "$tmp/agent/daemon/e.cc"
  printf 'int c() { return 0; }\n' > "$tmp/cli/c.cc"
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(planted CXX)\nadd_subdirectory(cli)\nadd_subdirectory(agent/daemon)\n' > "$tmp/CMakeLists.txt"
  printf 'add_library(opmap_cli_lib STATIC c.cc)\n' > "$tmp/cli/CMakeLists.txt"
  printf 'add_library(opmap_agent_daemon STATIC e.cc)\n' > "$tmp/agent/daemon/CMakeLists.txt"
  out="$("$repo/scripts/check_layers.sh" --root "$tmp" --link-graph)" \
    || { echo "FAIL: a clean link graph was refused:"; echo "$out"; exit 1; }
  printf 'target_link_libraries(opmap_agent_daemon PUBLIC opmap_cli_lib)\n' >> "$tmp/agent/daemon/CMakeLists.txt"
  check --link-graph
  [[ $rc == 1 ]] || { echo "FAIL: exit $rc for the planted link, expected 1"; exit 1; }
  grep -q 'agent/daemon/CMakeLists.txt: opmap_agent_daemon links opmap_cli_lib (cli/)' <<<"$out" \
    || { echo "FAIL: the planted link is not named"; exit 1; }
fi
echo "PASS"
