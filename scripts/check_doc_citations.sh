#!/usr/bin/env bash
# Checks that README.md's layout table names every top-level folder, and that every file
# the repository's Markdown cites exists: relative links
# (`[x](../docs/y.md)`, resolved from the citing file) and backticked paths under one of
# the repository's top-level folders (`collector/store/store.h`; a path prefix naming a
# .h/.cc pair, `collector/store/query_common`, or `x.{h,cc}` count too). Paths of other
# projects are written with their project's name first (`TraceLens/…`, `sglang/…`), so
# they are not taken for ours.
#
# usage: scripts/check_doc_citations.sh [--root DIR]
# Prints `FILE:LINE: PATH` per dead citation. Exit 0 clean, 1 dead citations, 2 usage.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
while (( $# )); do
  case "$1" in
    --root) root="$(cd "$2" && pwd)"; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "check_doc_citations.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
python3 - "$root" <<'PY'
import os, re, sys
root = sys.argv[1]
skip = ("shared", "third_party")
tops = {d for d in os.listdir(root)
        if os.path.isdir(os.path.join(root, d)) and not d.startswith((".", "build")) and d not in skip}
cite = re.compile(r"`([A-Za-z0-9_./{},-]+)`|\]\(([^)#\s]+)")
dead = 0
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "build")) and d not in skip)
    for f in sorted(filenames):
        if not f.endswith(".md"):
            continue
        path = os.path.join(dirpath, f)
        rel = os.path.relpath(path, root)
        for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
            for m in cite.finditer(line):
                if m.group(2):  # a link, relative to the citing file
                    target = m.group(2)
                    if re.match(r"[a-z]+:", target):
                        continue  # http:, mailto:
                    if not os.path.exists(os.path.normpath(os.path.join(dirpath, target))):
                        print(f"{rel}:{n}: link {target}")
                        dead += 1
                    continue
                c = m.group(1).rstrip("/")
                if "/" not in c or c.split("/")[0] not in tops:
                    continue
                base = re.sub(r"\.\{[^}]*\}$", "", c)
                if any(os.path.exists(os.path.join(root, base + e))
                       for e in ("", ".h", ".cc", ".md", ".sh", ".py")):
                    continue
                print(f"{rel}:{n}: {m.group(1)}")
                dead += 1
# README.md's layout: a row whose first cell starts with each top-level folder.
readme = os.path.join(root, "README.md")
if os.path.exists(readme):
    named = set(re.findall(r"^\| `([A-Za-z0-9_-]+)/", open(readme, encoding="utf-8").read(), re.M))
    for top in sorted(tops - named):
        print(f"README.md: the layout table has no row for {top}/")
        dead += 1
if dead:
    print(f"check_doc_citations.sh: {dead} dead citation(s) or missing layout row(s)")
    sys.exit(1)
print("check_doc_citations.sh: every cited file exists; README.md's layout names every folder")
PY
