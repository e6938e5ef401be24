#!/usr/bin/env bash
# scripts/check_layers.sh must fail on a planted violation, naming the file and line, and
# pass on the same tree without it. Builds a small tree in a temporary folder with this
# repository's docs/architecture.md (so the real table is what is checked).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs" "$tmp/analysis/summary" "$tmp/cli" "$tmp/common/io" "$tmp/agent/inject"
cp "$repo/docs/architecture.md" "$tmp/docs/"
printf '#pragma once\n' > "$tmp/cli/grpc_client.h"
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

out="$("$repo/scripts/check_layers.sh" --root "$tmp")" || { echo "FAIL: a clean tree was refused:"; echo "$out"; exit 1; }

# The planted violations: analysis/ reaching up into cli/, the injection library into common/.
cat > "$tmp/analysis/summary/bad.cc" <<'CC'
#include <string>
#include "cli/grpc_client.h"
CC
printf '\n#include "common/io/read_file.h"\n' > "$tmp/agent/inject/bad.cc"
set +e
out="$("$repo/scripts/check_layers.sh" --root "$tmp")"
rc=$?
set -e
echo "$out"
[[ $rc == 1 ]] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
grep -q '^analysis/summary/bad.cc:2: analysis/ may not include "cli/grpc_client.h"' <<<"$out" \
  || { echo "FAIL: the analysis/ violation is not named with its line"; exit 1; }
grep -q '^agent/inject/bad.cc:2: agent/inject/ may not include "common/io/read_file.h"' <<<"$out" \
  || { echo "FAIL: the agent/inject/ violation is not named with its line"; exit 1; }
grep -q '2 include(s) break the dependency rules' <<<"$out" || { echo "FAIL: count"; exit 1; }
echo "PASS"
