#!/usr/bin/env bash
# Checks that every include of the tree obeys the dependency table of docs/architecture.md
# (between `<!-- layers: begin -->` and `<!-- layers: end -->`): quoted, angle-bracket and
# relative forms alike (`"cli/x.h"`, `<cli/x.h>`, `"../../cli/x.h"` are the same header);
# that every top-level folder holding C/C++ sources has a row; and, with --link-graph, that
# the CMake target graph has no cycle and that no target links a target of a folder its
# row does not allow (a target belongs to the folder of the CMakeLists.txt defining it).
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

include = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<([^>]+)>)')
SOURCES = (".h", ".cc", ".cu", ".c", ".inc", ".cpp", ".hpp")
SKIP_TOP = {"docs", "scripts", "deploy", "python", "shared", "third_party"}  # not ours, or no C++
violations = 0
# Every top-level folder with sources of its own needs a row (a folder the table does not
# know would otherwise never be checked).
for top in sorted(os.listdir(root)):
    base = os.path.join(root, top)
    if top in ours or top in SKIP_TOP or top.startswith((".", "build")) or not os.path.isdir(base):
        continue
    found = None
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found = next((f for f in sorted(filenames) if f.endswith(SOURCES)), None)
        if found:
            found = os.path.relpath(os.path.join(dirpath, found), root)
            break
    if found:
        print(f"{found}: folder {top}/ has no row in the layers table of docs/architecture.md")
        violations += 1

def resolve(rel, written, angle):
    """The repository path an include names, or None when it is not a file of ours."""
    if not angle:
        # Relative to the including file first (`"x.h"`, `"../../cli/x.h"`).
        beside = os.path.normpath(os.path.join(os.path.dirname(rel), written))
        if not beside.startswith("..") and os.path.isfile(os.path.join(root, beside)) \
                and beside.split("/")[0] in ours:
            if beside != written:
                return beside
    header = target_of(written)
    if header.split("/")[0] not in ours:
        return None  # a third-party header
    if not os.path.exists(os.path.join(root, header)) and not header.startswith("proto/"):
        return None  # generated: not a folder of ours
    return header

for top in sorted(ours):
    base = os.path.join(root, top)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in ("gen", "regressions", "seeds"))
        for name in sorted(filenames):
            if not name.endswith(SOURCES):
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
                    written = im.group(1) or im.group(2)
                    header = resolve(rel, written, im.group(2) is not None)
                    if header is None:
                        continue
                    if any(header.startswith(a) for a in rules[layer]):
                        continue
                    shown = written if header == target_of(written) else f"{written}\" = \"{header}"
                    print(f'{rel}:{lineno}: {layer} may not include "{shown}" '
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
  python3 - "$dot_dir/targets.dot" "$root" <<'PY' || exit 1
import os, re, sys
root = sys.argv[2]
# The layers table again, and each of our targets' folder (its CMakeLists.txt's).
text = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
rules = {}
for line in re.search(r"<!-- layers: begin -->(.*?)<!-- layers: end -->", text, re.S).group(1).splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) == 2 and cells[0].startswith("`"):
        rules[cells[0].strip("`")] = re.findall(r"`([^`]+)`", cells[1])
folder_of = {}
for dirpath, dirnames, filenames in os.walk(root):
    rel = os.path.relpath(dirpath, root)
    dirnames[:] = [d for d in dirnames if not d.startswith((".", "build")) and d != "shared"]
    if "CMakeLists.txt" not in filenames or rel == ".":
        continue
    body = open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8", errors="replace").read()
    for t in re.findall(r"add_(?:library|executable)\(\s*([A-Za-z0-9_.+-]+)", body):
        folder_of[t] = rel + "/"
def row_of(folder):
    best = None
    for f in rules:
        if folder.startswith(f) and (best is None or len(f) > len(best)):
            best = f
    return best
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
# Each link of one of our targets to another: the linked target's folder must be one its
# row allows (either a prefix of the other: a row may name a file of a folder's target).
bad = 0
for a, outs in sorted(edges.items()):
    ta = names.get(a)
    if ta not in folder_of:
        continue
    row = row_of(folder_of[ta])
    if row is None:
        continue
    for b in sorted(outs):
        tb = names.get(b)
        if tb not in folder_of:
            continue
        fb = folder_of[tb]
        if any(fb.startswith(x) or x.startswith(fb) for x in rules[row]):
            continue
        print(f"check_layers.sh: {folder_of[ta]}CMakeLists.txt: {ta} links {tb} ({fb}), "
              f"which {row} may not use (docs/architecture.md allows {' '.join(rules[row])})")
        bad += 1
if bad:
    sys.exit(1)
PY
fi
if (( link_graph )); then
  echo "check_layers.sh: includes obey docs/architecture.md; the link graph has no cycle"
else
  echo "check_layers.sh: includes obey docs/architecture.md"
fi
