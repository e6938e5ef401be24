#!/usr/bin/env python3
"""all-MiniLM-L6-v2 under libopmap_inject's capture-file mode (no agent), every ATen op an
NVTX range (torch.autograd.profiler.emit_nvtx(record_shapes=True)) and every module one
(opmap_torch.annotate(model, shapes=True)); then `opmap analyze` of the file against a
torch.profiler run of the same inputs in the same process.

Per operator, the comparison cannot be made at the same time: emit_nvtx and
torch.profiler refuse to run together in one thread, in either order, with

    RuntimeError: Profiler is already enabled on this thread.

(checked here every run; both are the same autograd-profiler machinery, one state per
thread). So the child process runs the same requests twice, deterministically, after a
warm-up: first under torch.profiler.profile(activities=[CPU], record_shapes=True) (no
NVTX range at all: annotate() not installed, no request() ranges), then under emit_nvtx
with annotate() and request() ranges, which the library writes to the capture file
(LD_PRELOAD=build/lib/libopmap_inject.so OPMAP_CAPTURE_FILE=... OPMAP_CAPTURE_SECONDS=600:
one window from load to exit). Eager PyTorch on the same inputs runs the same ops, so the
count of every operator name must be equal: `opmap analyze FILE --format json`'s
host_ranges (emit_nvtx names `aten::addmm, seq = 12, op_id = ..., sizes = [...]` read as
`aten::addmm`) against the profiler's cpu_op events. The two passes' embeddings must be
byte-identical (emit_nvtx and the library change nothing). Without a GPU,
emit_nvtx's torch.cuda.synchronize() calls are replaced by no-ops (they raise "Found no
NVIDIA driver"); the NVTX ranges need no GPU.

Also checked: `opmap analyze --format json` counts the module ranges (one per module
forward, counted by a hook); `opmap analyze --report json` (the handoff packet) exits 0
and names the requests. Known failures (opmap C++, reported, marked expectedFailure):
`--report json` of a capture without GPU events lists no operator, no shape and no
module; and the file says `unavailable: nvtx: no NVTX call has attached the library yet`
although it holds NVTX ranges (the file-mode window opens at load, before the first NVTX
call, and the status is never revised).

Run with the venv's python (scripts/setup_frameworks.sh), from tests/framework/run.sh.
"""

import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import opmap_stack  # noqa: E402

REQUESTS = 6


def child(out_dir):
    import torch
    import opmap_torch
    import workloads
    from torch.profiler import ProfilerActivity, profile
    if not torch.cuda.is_available():
        torch.cuda.synchronize = lambda *a, **k: None
    torch.set_num_threads(2)
    model = workloads.build_embed()
    result = {"injection_loaded": opmap_torch.injection_loaded()}

    def run():
        return [model.encode(workloads.sentences(i), convert_to_tensor=True, batch_size=4)
                .float().contiguous() for i in range(REQUESTS)]

    with torch.inference_mode():
        for w in range(2):
            model.encode(workloads.sentences(10_000 + w), convert_to_tensor=True)

        # Pass 1: torch.profiler, no NVTX range anywhere.
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            a = run()
        ops = collections.Counter()
        for e in prof.profiler.kineto_results.events():
            if e.is_python_function() or e.is_user_annotation():
                continue
            ops[e.name()] += 1
        result["profiler_ops"] = ops

        # Both at once, each order: PyTorch refuses.
        refusals = []
        for order in ("profiler, then emit_nvtx", "emit_nvtx, then profiler"):
            try:
                if order.startswith("profiler"):
                    with profile(activities=[ProfilerActivity.CPU]):
                        with torch.autograd.profiler.emit_nvtx(record_shapes=True):
                            pass
                else:
                    with torch.autograd.profiler.emit_nvtx(record_shapes=True):
                        with profile(activities=[ProfilerActivity.CPU]):
                            pass
                refusals.append([order, None])
            except RuntimeError as e:
                refusals.append([order, "RuntimeError: %s" % e])
        result["refusals"] = refusals

        # Pass 2: emit_nvtx + module ranges + request ranges, into the capture file.
        calls = collections.Counter()
        names = {id(m): type(m).__name__ for _, m in model.named_modules()}

        def count(mod, args):
            if id(mod) in names:
                calls[names[id(mod)]] += 1
        hook = torch.nn.modules.module.register_module_forward_pre_hook(count)
        handle = opmap_torch.annotate(model, shapes=True)
        with torch.autograd.profiler.emit_nvtx(record_shapes=True):
            b = []
            for i in range(REQUESTS):
                with opmap_torch.request():
                    b.append(model.encode(workloads.sentences(i), convert_to_tensor=True,
                                          batch_size=4).float().contiguous())
        handle.remove()
        hook.remove()
        result["module_calls"] = calls
        result["annotate_hooks"] = len(handle) if handle.active else 0
    result["identical"] = all(x.numpy().tobytes() == y.numpy().tobytes()
                              for x, y in zip(a, b))
    with open(os.path.join(out_dir, "child.json"), "w") as f:
        json.dump(result, f)
    return 0


class CaptureFileTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="opmap-framework-capture-")
        cls.cap = os.path.join(cls.work, "embed.cap")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OPMAP_", "NVTX_INJECTION", "CUDA_INJECTION",
                                    "LD_PRELOAD"))}
        env.update({"LD_PRELOAD": opmap_stack.LIB, "OPMAP_CAPTURE_FILE": cls.cap,
                    "OPMAP_CAPTURE_SECONDS": "600", "OPMAP_MODEL": "all-MiniLM-L6-v2",
                    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    "TOKENIZERS_PARALLELISM": "false"})
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", cls.work],
                           env=env, capture_output=True, text=True, timeout=300)
        cls.child_rc, cls.child_err = r.returncode, r.stderr
        print("capture child: exit %d in %.1f s; %s: %d bytes" % (
            r.returncode, time.monotonic() - t0, cls.cap,
            os.path.getsize(cls.cap) if os.path.exists(cls.cap) else -1))
        if r.returncode != 0:
            raise AssertionError("the capture child failed (exit %d):\n%s" % (
                r.returncode, r.stderr[-4000:]))
        with open(os.path.join(cls.work, "child.json")) as f:
            cls.result = json.load(f)
        a = subprocess.run([opmap_stack.OPMAP, "analyze", cls.cap, "--format", "json",
                            "--quiet"], capture_output=True, text=True, timeout=120)
        cls.analyze_rc, cls.analyze_err = a.returncode, a.stderr
        cls.analysis = json.loads(a.stdout) if a.returncode == 0 else None
        rep = subprocess.run([opmap_stack.OPMAP, "analyze", cls.cap, "--report", "json"],
                             capture_output=True, text=True, timeout=120)
        cls.report_rc, cls.report_err = rep.returncode, rep.stderr
        cls.report = json.loads(rep.stdout) if rep.returncode == 0 else None

    @classmethod
    def tearDownClass(cls):
        if os.environ.get("OPMAP_FRAMEWORK_KEEP") == "1":
            print("framework test: files kept in %s" % cls.work)
        else:
            shutil.rmtree(cls.work, ignore_errors=True)

    def ranges(self):
        self.assertEqual(self.analyze_rc, 0, self.analyze_err)
        return {r["name"]: r["count"] for r in self.analysis["host_ranges"]["ranges"]}

    def test_emit_nvtx_and_profiler_refuse_each_other(self):
        for order, error in self.result["refusals"]:
            print("%s: %s" % (order, error))
            self.assertEqual(error, "RuntimeError: Profiler is already enabled on this thread.",
                             order)

    def test_same_ops_count_as_profiler(self):
        prof = self.result["profiler_ops"]
        nvtx = self.ranges()
        ops = {n: c for n, c in nvtx.items() if "::" in n}
        print("%d operator names, %d ops (profiler: %d names, %d ops); %d ranges in the file"
              % (len(ops), sum(ops.values()), len(prof), sum(prof.values()),
                 self.analysis["host_ranges"]["range_count"]))
        for n in sorted(prof, key=lambda n: -prof[n])[:12]:
            print("  %-48s opmap %6d  profiler %6d" % (n, ops.get(n, 0), prof[n]))
        self.assertGreater(len(prof), 10)
        self.assertEqual(ops, prof)

    def test_module_and_request_ranges(self):
        nvtx = self.ranges()
        calls = self.result["module_calls"]
        modules = self.analysis["module_attribution"]["module_ranges"]
        print("module forwards (hook count): %d, module ranges opmap counted: %d; requests %d"
              % (sum(calls.values()), modules, nvtx.get("request", 0)))
        self.assertEqual(nvtx.get("request"), REQUESTS)
        # Under emit_nvtx every module range encloses an op, so every one is a module.
        self.assertEqual(modules, sum(calls.values()))
        by_class = collections.Counter()
        for n, c in nvtx.items():
            if n.endswith(")") and " (" in n:
                by_class[n.rsplit(" (", 1)[1][:-1]] += c
        self.assertEqual(dict(by_class), calls)

    def test_outputs_identical_with_emit_nvtx_and_library(self):
        self.assertTrue(self.result["injection_loaded"])
        self.assertTrue(self.result["identical"])

    def test_report_json_names_requests(self):
        self.assertEqual(self.report_rc, 0, self.report_err)
        reqs = self.report["mfu"]["requests"]
        print("--report json: %d requests, keys %s" % (len(reqs), sorted(self.report)))
        self.assertEqual(len(reqs), REQUESTS)

    @unittest.expectedFailure
    def test_report_json_lists_operators_shapes_modules(self):
        """KNOWN FAILURE (opmap C++, reported): for a capture without GPU events the
        handoff packet's operator tables (mapping_sheet.operators, mapping_sheet.groups
        with Input Dims, mfu.operators) are empty and it has no module section; `--format
        json`'s modules[] and module_types[] are empty too (module_attribution counts the
        module ranges). They are all built from GPU events."""
        self.assertEqual(self.report_rc, 0, self.report_err)
        sheet = self.report["mapping_sheet"]
        print("--report json: mapping_sheet.operators %d, groups %d, mfu.operators %d; "
              "analyze modules %d, module_types %d" % (
                  len(sheet["operators"]), len(sheet["groups"]),
                  len(self.report["mfu"]["operators"]), len(self.analysis["modules"]),
                  len(self.analysis["module_types"])))
        self.assertTrue(sheet["operators"], "no operators")
        self.assertTrue(any("Input Dims" in json.dumps(g) or "input_dims" in json.dumps(g)
                            for g in sheet["groups"]), "no shapes")
        self.assertTrue(self.analysis["modules"], "no modules")

    @unittest.expectedFailure
    def test_capture_file_does_not_call_nvtx_unavailable(self):
        """KNOWN FAILURE (opmap C++, reported): the file-mode window opens when the library
        loads (LD_PRELOAD: before main), before any NVTX call has attached it, so
        WindowController::Begin reports `unavailable: no NVTX call has attached the library
        yet ...` and nothing revises it when NVTX attaches a moment later: a file full of
        NVTX ranges says NVTX was unavailable."""
        unavailable = [u for u in self.analysis["unavailable"] if u["what"] == "nvtx"]
        print("ranges %d; unavailable: %s" % (self.analysis["host_ranges"]["range_count"],
                                                unavailable))
        self.assertGreater(self.analysis["host_ranges"]["range_count"], 0)
        self.assertEqual(unavailable, [])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.exit(child(sys.argv[2]))
    unittest.main(verbosity=2)
