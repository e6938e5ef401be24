#!/usr/bin/env python3
"""Real vLLM and SGLang layerwise NVTX range names, for opmap's name-grammar tests.

vLLM (--enable-layerwise-nvtx-tracing) and SGLang (its layerwise NVTX option) push one
range per module forward named str() of a dict (analysis/import/nvtx_names.h). Neither
server runs here (no GPU), but their hooks are plain PyTorch: this script loads each
project's hooks module from a file you give (vllm/utils/nvtx_pytorch_hooks.py,
python/sglang/srt/utils/nvtx_pytorch_hooks.py of the commits named below), registers
its PytHooks on a transformers LlamaForCausalLM (tests/framework/workloads.py's decoder:
2 layers, hidden 128, random weights; forward with keyword arguments, as vLLM's top
module is called) and on all-MiniLM-L6-v2's BertModel, runs them on the CPU under
libopmap_inject in file-capture mode, and writes every distinct name the capture holds
(module indices folded: the first of each path shape) to
tests/framework/data/nvtx_strings_layerwise.txt.

  $OPMAP_FRAMEWORKS_VENV/bin/python tests/framework/layerwise_strings.py \\
      --vllm PATH/nvtx_pytorch_hooks.py --vllm-rev COMMIT \\
      --sglang PATH/nvtx_pytorch_hooks.py --sglang-rev COMMIT [--lib build/lib/libopmap_inject.so]
"""

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)


def child(project, hooks_file):
    import torch
    spec = importlib.util.spec_from_file_location("upstream_hooks", hooks_file)
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    import workloads
    from nvtx_strings import _bert
    decoder = workloads.build_decoder()
    hooks.PytHooks().register_hooks(decoder)
    bert, batch = _bert()
    hooks.PytHooks().register_hooks(bert)
    with torch.inference_mode():
        ids = torch.randint(0, workloads.DECODER_VOCAB, (4, 16))
        decoder(input_ids=ids, attention_mask=torch.ones_like(ids))
        bert(**batch)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--vllm", required=False)
    ap.add_argument("--vllm-rev", default="?")
    ap.add_argument("--sglang", required=False)
    ap.add_argument("--sglang-rev", default="?")
    ap.add_argument("--lib", default=os.path.join(REPO, "build/lib/libopmap_inject.so"))
    ap.add_argument("--out", default=os.path.join(HERE, "data", "nvtx_strings_layerwise.txt"))
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    from nvtx_strings import read_capture
    import torch
    lib = os.path.abspath(args.lib)
    tmp = tempfile.mkdtemp(prefix="opmap-layerwise-strings-")
    lines = ["# Real layerwise NVTX names: the projects' own hooks (PytHooks.register_hooks) "
             "on a transformers LlamaForCausalLM (2 layers, hidden 128) and all-MiniLM-L6-v2's "
             "BertModel, torch %s on CPU, captured by libopmap_inject "
             "(tests/framework/layerwise_strings.py)" % torch.__version__]
    for project, path, rev in (("vllm", args.vllm, args.vllm_rev),
                               ("sglang", args.sglang, args.sglang_rev)):
        if not path:
            continue
        cap = os.path.join(tmp, project + ".cap")
        env = dict(os.environ, LD_PRELOAD=lib, OPMAP_CAPTURE_FILE=cap,
                   OPMAP_CAPTURE_SECONDS="600", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   TOKENIZERS_PARALLELISM="false")
        env.pop("NVTX_INJECTION64_PATH", None)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--child", project,
                        os.path.abspath(path)], env=env, check=True)
        ranges, _ = read_capture(cap)
        seen, kept = set(), []
        for _, _, _, name in ranges:
            shape = re.sub(r"\.\d+(?=[.'])", ".N", name)
            shape = re.sub(r"\[[\d, \[\]]*\]", "[..]", shape)
            if shape not in seen:
                seen.add(shape)
                kept.append(name)
        lines.append("# %s %s: %d ranges, %d kept" % (project, rev, len(ranges), len(kept)))
        lines += kept
        print("%s: %d ranges, %d kept" % (project, len(ranges), len(kept)), file=sys.stderr)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote " + args.out, file=sys.stderr)


if __name__ == "__main__":
    main()
