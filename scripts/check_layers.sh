#!/usr/bin/env bash
# Checks that every `#include "…"` of the tree obeys the dependency table of
# docs/architecture.md (between `<!-- layers: begin -->` and `<!-- layers: end -->`), and,
# with --link-graph, that the CMake target graph has no cycle.
#
# usage: scripts/check_layers.sh [--root DIR] [--link-graph]
#   --root DIR    the tree to check (default: this repository); its docs/architecture.md
#                 holds the table
#   --link-graph  also configure the tree in a temporary folder (cmake --graphviz, about
#                 15 s) and check that no target links itself through others
# Prints one line per violation, `FILE:LINE: FOLDER may not include "HEADER" (…)`.
# Exit status: 0 clean, 1 violations, 2 usage or a table that cannot be read.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
link_graph=0
while (( $# )); do
  case "$1" in
    --root) root="$(cd "$2" && pwd)"; shift ;;
    --link-graph) link_graph=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "check_layers.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

python3 - "$root" <<'PY'
import os, re, sys

root = sys.argv[1]
doc = os.path.join(root, "docs", "architecture.md")
try:
    text = open(doc, encoding="utf-8").read()
except OSError as e:
    print(f"check_layers.sh: {doc}: {e.strerror}", file=sys.stderr)
    sys.exit(2)
m = re.search(r"<!-- layers: begin -->(.*?)<!-- layers: end -->", text, re.S)
if not m:
    print(f"check_layers.sh: {doc}: no <!-- layers: begin/end --> table", file=sys.stderr)
    sys.exit(2)
rules = {}  # folder prefix -> allowed prefixes
for n, line in enumerate(m.group(1).splitlines()):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 2 or not cells[0].startswith("`"):
        continue
    folder = cells[0].strip("`")
    rules[folder] = re.findall(r"`([^`]+)`", cells[1])
if not rules:
    print(f"check_layers.sh: {doc}: the layers table has no rows", file=sys.stderr)
    sys.exit(2)
ours = {f.split("/")[0] for f in rules}

def layer_of(path):
    best = None
    for folder in rules:
        if path.startswith(folder) and (best is None or len(folder) > len(best)):
            best = folder
    return best

def target_of(header):
    if header.startswith("opmap/"):
        return "proto/" + header
    return header

include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
violations = 0
for top in sorted(ours):
    base = os.path.join(root, top)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in ("gen", "regressions", "seeds"))
        for name in sorted(filenames):
            if not name.endswith((".h", ".cc", ".cu", ".c", ".inc")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            layer = layer_of(rel)
            if layer is None:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    im = include.match(line)
                    if not im:
                        continue
                    header = target_of(im.group(1))
                    if header.split("/")[0] not in ours:
                        continue  # a third-party header, or one next to the file
                    if not os.path.exists(os.path.join(root, header)) and not header.startswith("proto/"):
                        continue  # generated or relative: not a folder of ours
                    if any(header.startswith(a) for a in rules[layer]):
                        continue
                    print(f'{rel}:{lineno}: {layer} may not include "{im.group(1)}" '
                          f'(docs/architecture.md allows {" ".join(rules[layer])})')
                    violations += 1
if violations:
    print(f"check_layers.sh: {violations} include(s) break the dependency rules")
    sys.exit(1)
PY
rc=$?
(( rc == 0 )) || exit "$rc"

if (( link_graph )); then
  dot_dir="$(mktemp -d)"
  trap 'rm -rf "$dot_dir"' EXIT
  cmake -S "$root" -B "$dot_dir/build" -G Ninja --graphviz="$dot_dir/targets.dot" > "$dot_dir/configure.log" 2>&1 \
    || { cat "$dot_dir/configure.log" >&2; echo "check_layers.sh: configuring $root failed" >&2; exit 2; }
  python3 - "$dot_dir/targets.dot" <<'PY' || exit 1
import re, sys
names, edges = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'\s*"(node\d+)"\s*\[\s*label\s*=\s*"([^"]+)"', line)
    if m:
        names[m.group(1)] = m.group(2)
        continue
    m = re.match(r'\s*"(node\d+)"\s*->\s*"(node\d+)"', line)
    if m and m.group(1) != m.group(2):  # CMake draws a target's own custom steps as a self edge
        edges.setdefault(m.group(1), set()).add(m.group(2))
# Depth-first search for a back edge among our targets.
state, stack = {}, []
def visit(n):
    state[n] = 1
    stack.append(n)
    for m in sorted(edges.get(n, ())):
        if state.get(m) == 1:
            cycle = stack[stack.index(m):] + [m]
            print("check_layers.sh: link cycle: " + " -> ".join(names.get(x, x) for x in cycle))
            sys.exit(1)
        if m not in state:
            visit(m)
    stack.pop()
    state[n] = 2
sys.setrecursionlimit(10000)
for n in sorted(names):
    if n not in state:
        visit(n)
PY
fi
if (( link_graph )); then
  echo "check_layers.sh: includes obey docs/architecture.md; the link graph has no cycle"
else
  echo "check_layers.sh: includes obey docs/architecture.md"
fi
