#!/usr/bin/env bash
# Writes a small seed corpus for kineto_importer_fuzzer into OUTDIR (default
# /tmp/opmap-fuzz/seeds), cut at fuzz time from the real traces in ../shared/traces —
# the traces themselves never enter the repository.
#
# For each trace (up to 2 MB compressed) it writes valid, small (< 16 KiB) documents:
#   *_head.json      the top-level keys plus the first 40 events
#   *_chainN.json    GPU events with their launch call (same correlation), the operator
#                    ranges enclosing that launch on its thread, and the ac2g flow pair
# and a few variants: gzip (*.json.gz, the gzip path), a bare event array, and a
# concatenated two-member gzip. Deterministic: the same traces give the same seeds.
#
# usage: tests/fuzz/make_seeds.sh [OUTDIR]   (shared dir: $OPMAP_SHARED_DIR or ../shared)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
shared="${OPMAP_SHARED_DIR:-$here/../../../shared}"
out="${1:-/tmp/opmap-fuzz/seeds}"
if [[ ! -d "$shared/traces" ]]; then
  echo "make_seeds.sh: no traces under $shared/traces (set OPMAP_SHARED_DIR)" >&2
  exit 1
fi
mkdir -p "$out"
python3 - "$shared/traces" "$out" <<'PY'
import gzip, json, os, sys

src, out = sys.argv[1], sys.argv[2]
GPU = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
API = {"cuda_runtime", "Runtime", "cuda_driver", "Driver"}
RANGE = {"cpu_op", "Operator", "user_annotation", "python_function"}
MAX_SEED = 16 * 1024

def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return json.loads(f.read())

def dump(doc):
    return json.dumps(doc, separators=(",", ":")).encode()

def header(doc):
    h = {}
    for k, v in doc.items():
        if k == "traceEvents":
            continue
        if k == "deviceProperties" and isinstance(v, list):
            v = v[:1]
        if len(json.dumps(v)) < 1024:
            h[k] = v
    return h

def corr(e):
    a = e.get("args") or {}
    return a.get("correlation") if isinstance(a, dict) else None

def chains(events, n):
    gpu = [e for e in events if e.get("ph") == "X" and e.get("cat") in GPU]
    if not gpu:
        return []
    launches = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in API and corr(e) is not None:
            launches.setdefault(corr(e), e)
    by_thread = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in RANGE:
            by_thread.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    flows = {}
    for e in events:
        if e.get("cat") == "ac2g" and "id" in e:
            flows.setdefault(e["id"], []).append(e)
    picks = [gpu[(i * len(gpu)) // n] for i in range(n)]
    result = []
    for k in picks:
        c = corr(k)
        group = [k]
        # a neighbour on the same stream, so idle time has a gap to measure
        same = [g for g in gpu if g is not k and g.get("tid") == k.get("tid")]
        if same:
            group.append(same[0])
        launch = launches.get(c)
        if launch is not None:
            group.append(launch)
            ts = launch.get("ts", 0)
            enclosing = [r for r in by_thread.get((launch.get("pid"), launch.get("tid")), [])
                         if isinstance(r.get("ts"), (int, float)) and
                         isinstance(r.get("dur"), (int, float)) and
                         r["ts"] <= ts <= r["ts"] + r["dur"]]
            enclosing.sort(key=lambda r: r["dur"])
            group += enclosing[:6]
        group += flows.get(c, [])[:2]
        result.append(group)
    return result

written = []
def write(name, data):
    if len(data) > MAX_SEED:
        return
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    written.append(name)

for fname in sorted(os.listdir(src)):
    if not (fname.endswith(".json") or fname.endswith(".json.gz")):
        continue
    path = os.path.join(src, fname)
    if os.path.getsize(path) > 2 * 1024 * 1024:
        continue
    try:
        doc = load(path)
    except Exception as e:  # a trace we can't read is not a seed
        print(f"make_seeds.sh: skip {fname}: {e}", file=sys.stderr)
        continue
    if isinstance(doc, list):
        doc = {"traceEvents": doc}
    events = doc.get("traceEvents") or []
    stem = fname.split(".json")[0]
    h = header(doc)
    write(f"{stem}_head.json", dump({**h, "traceEvents": events[:40]}))
    for i, group in enumerate(chains(events, 3)):
        seed = dump({**h, "traceEvents": group})
        write(f"{stem}_chain{i}.json", seed)
        if i == 0:
            write(f"{stem}_chain{i}.json.gz", gzip.compress(seed, mtime=0))
        if i == 1:
            write(f"{stem}_chain{i}_array.json", dump(group))
        if i == 2:
            write(f"{stem}_chain{i}_2members.json.gz",
                  gzip.compress(seed[: len(seed) // 2], mtime=0) +
                  gzip.compress(seed[len(seed) // 2 :], mtime=0))

print(f"make_seeds.sh: {len(written)} seeds in {out}")
PY
