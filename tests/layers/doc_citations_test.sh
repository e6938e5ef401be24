#!/usr/bin/env bash
# scripts/check_doc_citations.sh fails on a planted dead citation (a backticked path and a
# relative link) and on a folder README.md's layout lacks, naming each, and passes on the
# same tree without them.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs" "$tmp/collector/store"
printf '#pragma once\n' > "$tmp/collector/store/store.h"
printf 'int x;\n' > "$tmp/collector/store/query_common.cc"
cat > "$tmp/docs/ok.md" <<'MD'
See `collector/store/store.h`, `collector/store/query_common` and [ok](ok.md);
upstream `TraceLens/tests/x.py` and [web](https://example.com) are not ours.
MD
printf '| folder | what |\n|---|---|\n| `docs/` | d |\n| `collector/` | c |\n' > "$tmp/README.md"
"$repo/scripts/check_doc_citations.sh" --root "$tmp" >/dev/null || { echo "FAIL: a clean tree was refused"; exit 1; }
printf 'x\nthe `collector/store/document.h` and [gone](../deploy/README.md)\n' > "$tmp/docs/bad.md"
mkdir -p "$tmp/newfolder"  # a folder README.md's layout does not name
set +e
out="$("$repo/scripts/check_doc_citations.sh" --root "$tmp")"
rc=$?
set -e
echo "$out"
[[ $rc == 1 ]] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
grep -q '^docs/bad.md:2: collector/store/document.h$' <<<"$out" || { echo "FAIL: path not named"; exit 1; }
grep -q '^docs/bad.md:2: link ../deploy/README.md$' <<<"$out" || { echo "FAIL: link not named"; exit 1; }
grep -q '^README.md: the layout table has no row for newfolder/$' <<<"$out" || { echo "FAIL: layout not checked"; exit 1; }
echo "PASS"
