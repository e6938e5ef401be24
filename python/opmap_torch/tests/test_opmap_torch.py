"""Unit tests of opmap_torch: the range names, their nesting, hook removal and the no-op
when libopmap_inject is not loaded. torch.cuda.nvtx.range_push/range_pop are replaced by
recorders, so no GPU and no injection library are needed.

    python -m pytest python/opmap_torch/tests
    python -m unittest discover -s python/opmap_torch/tests
"""

import collections
import os
import subprocess
import sys
import tempfile
import threading
import unittest
from unittest import mock

import torch
import torch.cuda.nvtx
from torch import nn

import opmap_torch

_ENV = ("LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")


class Recorder:
    """Replaces range_push/range_pop; events is [("push", name) | ("pop",)]."""

    def __init__(self):
        self.events = []
        self.stack = []
        self.completed = []  # (depth, name) at pop, innermost first

    def push(self, name):
        self.events.append(("push", name))
        self.stack.append(name)
        return len(self.stack) - 1

    def pop(self):
        self.events.append(("pop",))
        if not self.stack:
            raise AssertionError("range_pop with no open range")
        depth = len(self.stack) - 1
        self.completed.append((depth, self.stack.pop()))
        return depth

    def pushed(self):
        return [e[1] for e in self.events if e[0] == "push"]


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU()

    def forward(self, x, scale=None):
        y = self.act(self.fc(x))
        return y if scale is None else y * scale


class Boom(nn.Module):
    def forward(self, x):
        raise RuntimeError("boom")


class Base(unittest.TestCase):
    def setUp(self):
        self.rec = Recorder()
        patches = [mock.patch.object(torch.cuda.nvtx, "range_push", self.rec.push),
                   mock.patch.object(torch.cuda.nvtx, "range_pop", self.rec.pop)]
        env = {k: v for k, v in os.environ.items() if k not in _ENV}
        patches.append(mock.patch.dict(os.environ, env, clear=True))
        for p in patches:
            p.start()
            self.addCleanup(p.stop)
        # Not loaded, whatever this process maps; each test says otherwise when it needs to.
        opmap_torch._maps_cache = False
        self.addCleanup(setattr, opmap_torch, "_maps_cache", None)


class AnnotateTest(Base):
    def test_names_and_nesting(self):
        model = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 8))
        h = opmap_torch.annotate(model, force=True)
        self.assertTrue(h.active)
        self.assertEqual(len(h), 8)  # pre + post for 4 modules
        model(torch.zeros(8, 128))
        self.assertEqual(self.rec.pushed(), [
            "opmap.module Sequential (Sequential)",
            "opmap.module 0 (Linear)",
            "opmap.module 1 (ReLU)",
            "opmap.module 2 (Linear)",
        ])
        self.assertEqual(self.rec.completed, [
            (1, "opmap.module 0 (Linear)"),
            (1, "opmap.module 1 (ReLU)"),
            (1, "opmap.module 2 (Linear)"),
            (0, "opmap.module Sequential (Sequential)"),
        ])
        self.assertEqual(self.rec.stack, [])

    def test_shapes_positional_and_keyword(self):
        model = nn.Sequential()
        model.add_module("block", Block())
        h = opmap_torch.annotate(model.block, shapes=True, force=True)
        model.block(torch.zeros(8, 4), scale=torch.tensor(2.0))
        self.assertEqual(self.rec.pushed(), [
            "opmap.module Block (Block) shapes=[[8, 4], []]",
            "opmap.module fc (Linear) shapes=[[8, 4]]",
            "opmap.module act (ReLU) shapes=[[8, 4]]",
        ])
        h.remove()

    def test_shapes_nested_paths_and_lists(self):
        class Cat(nn.Module):
            def forward(self, xs, n):
                return xs

        outer = nn.Module()
        outer.inner = nn.Module()
        outer.inner.cat = Cat()
        opmap_torch.annotate(outer, shapes=True, force=True)
        outer.inner.cat([torch.zeros(2, 3), torch.zeros(2, 5)], 7)
        outer.inner.cat(xs={"ids": torch.zeros(1, 9), "mask": torch.zeros(1, 9), "n": 3},
                        n=[[torch.zeros(2)]])  # deeper than one level: not listed
        outer.inner.cat(collections.UserDict(a=torch.zeros(3)), None)  # BatchEncoding's base
        self.assertEqual(self.rec.pushed(),
                         ["opmap.module inner.cat (Cat) shapes=[[2, 3], [2, 5]]",
                          "opmap.module inner.cat (Cat) shapes=[[1, 9], [1, 9]]",
                          "opmap.module inner.cat (Cat) shapes=[[3]]"])

    def test_remove(self):
        model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        h = opmap_torch.annotate(model, shapes=True, force=True)
        model(torch.zeros(1, 2))
        n = len(self.rec.events)
        self.assertEqual(n, 6)
        h.remove()
        self.assertFalse(h.active)
        h.remove()  # idempotent
        model(torch.zeros(1, 2))
        self.assertEqual(len(self.rec.events), n)
        for m in model.modules():
            self.assertEqual(len(m._forward_pre_hooks), 0)
            self.assertEqual(len(m._forward_hooks), 0)

    def test_handle_as_context_manager(self):
        model = nn.Linear(2, 2)
        with opmap_torch.annotate(model, force=True):
            model(torch.zeros(1, 2))
        model(torch.zeros(1, 2))
        self.assertEqual(self.rec.pushed(), ["opmap.module Linear (Linear)"])

    def test_exception_pops(self):
        if "always_call" not in torch.nn.Module.register_forward_hook.__code__.co_varnames:
            self.skipTest("torch < 2.1 has no always_call")
        model = nn.Sequential(nn.Linear(2, 2), Boom())
        opmap_torch.annotate(model, force=True)
        with self.assertRaises(RuntimeError):
            model(torch.zeros(1, 2))
        self.assertEqual(self.rec.stack, [])
        self.assertEqual([n for _, n in self.rec.completed], [
            "opmap.module 0 (Linear)", "opmap.module 1 (Boom)",
            "opmap.module Sequential (Sequential)"])

    def test_noop_without_library(self):
        model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        self.assertFalse(opmap_torch.injection_loaded())
        h = opmap_torch.annotate(model, shapes=True)
        self.assertFalse(h.active)
        self.assertEqual(len(h), 0)
        for m in model.modules():
            self.assertEqual(len(m._forward_pre_hooks), 0)
            self.assertEqual(len(m._forward_hooks), 0)
        model(torch.zeros(1, 2))
        h.remove()
        self.assertEqual(self.rec.events, [])

    def test_env_enables(self):
        for var in ("LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"):
            with self.subTest(var=var), mock.patch.dict(
                    os.environ, {var: "/x/libfoo.so:/usr/lib/opmap/libopmap_inject.so"}):
                self.assertTrue(opmap_torch.injection_loaded())
                model = nn.ReLU()
                h = opmap_torch.annotate(model)
                self.assertTrue(h.active)
                h.remove()
        with mock.patch.dict(os.environ, {"LD_PRELOAD": "/usr/lib/libother.so"}):
            self.assertFalse(opmap_torch.injection_loaded())

    def test_maps_enables(self):
        data = b"7f00-7f01 r-xp 0 08:01 1 /usr/lib/opmap/libopmap_inject.so\n"
        with mock.patch("builtins.open", mock.mock_open(read_data=data)):
            self.assertTrue(opmap_torch.injection_loaded(refresh=True))
        data = b"7f00-7f01 r-xp 0 08:01 1 /usr/lib/libc.so.6\n"
        with mock.patch("builtins.open", mock.mock_open(read_data=data)):
            self.assertFalse(opmap_torch.injection_loaded(refresh=True))


class GateTest(Base):
    """With the library loaded, module hooks follow opmap_nvtx_ranges_wanted (here a
    switch in place of the library's function)."""

    def setUp(self):
        super().setUp()
        self.wanted = False
        gate = mock.patch.object(opmap_torch, "_GATE", lambda: self.wanted)
        gate.start()
        self.addCleanup(gate.stop)
        env = mock.patch.dict(os.environ, {"LD_PRELOAD": "/usr/lib/opmap/libopmap_inject.so"})
        env.start()
        self.addCleanup(env.stop)

    def test_hooks_follow_the_window(self):
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        h = opmap_torch.annotate(model)
        self.assertEqual(len(h), 2)  # the root's pair only
        model(torch.zeros(1, 4))
        self.assertEqual(self.rec.events, [])  # dormant: nothing pushed
        self.wanted = True
        model(torch.zeros(1, 4))
        self.assertEqual(len(h), 6)
        self.assertEqual(self.rec.pushed(), ["opmap.module Sequential (Sequential)",
                                             "opmap.module 0 (Linear)",
                                             "opmap.module 1 (ReLU)"])
        self.assertEqual(self.rec.stack, [])
        self.wanted = False
        n = len(self.rec.events)
        model(torch.zeros(1, 4))
        self.assertEqual(len(h), 2)
        self.assertEqual(len(self.rec.events), n)
        for m in list(model.modules())[1:]:
            self.assertEqual(len(m._forward_pre_hooks), 0)
        h.remove()
        self.assertEqual(len(h), 0)

    def test_a_window_opening_mid_forward_waits_for_the_next(self):
        outer = self

        class Flip(nn.Module):
            def forward(self, x):
                outer.wanted = not outer.wanted
                return x

        model = nn.Sequential(Flip(), nn.ReLU())
        opmap_torch.annotate(model)
        model(torch.zeros(1))  # opens during the forward: nothing, and balanced
        self.assertEqual(self.rec.events, [])
        model(torch.zeros(1))  # open at the start; closes during: all its ranges, balanced
        self.assertEqual(len(self.rec.pushed()), 3)
        self.assertEqual(self.rec.stack, [])

    def test_steps_follow_the_window(self):
        with opmap_torch.step("decode", batch=2) as name:
            self.assertIsNone(name)
        self.wanted = True
        with opmap_torch.request() as name:
            self.assertEqual(name, "request")
        self.assertEqual(self.rec.pushed(), ["request"])


class RealLibraryGateTest(unittest.TestCase):
    """The gate finds the real libopmap_inject.so's opmap_nvtx_ranges_wanted: 0 with no
    window (no agent), 1 inside a capture file's window. Needs the build
    ($OPMAP_BUILD_DIR, default build/ at the repository root)."""

    def run_child(self, env):
        root = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))
        lib = os.path.join(root, os.environ.get("OPMAP_BUILD_DIR", "build"),
                           "lib/libopmap_inject.so")
        if not os.path.exists(lib):
            self.skipTest("unavailable: %s is not built" % lib)
        code = "import opmap_torch; g = opmap_torch._GATE; print(g(), g.resolved)"
        env = dict(os.environ, LD_PRELOAD=os.path.abspath(lib), **env)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout.strip()

    def test_dormant_without_a_window(self):
        self.assertEqual(self.run_child({"OPMAP_AGENT_SOCKET": "/nonexistent/opmap.sock"}),
                         "False True")

    def test_wanted_in_a_capture_files_window(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(self.run_child({"OPMAP_CAPTURE_FILE": os.path.join(d, "c.opcap"),
                                             "OPMAP_CAPTURE_SECONDS": "30"}), "True True")


class StepTest(Base):
    def test_names(self):
        f = opmap_torch.step_range_name
        self.assertEqual(f("decode", batch=4), "step[DECODE bs=4]")
        self.assertEqual(f("prefill", batch=4), "step[EXTEND bs=4]")
        self.assertEqual(f("extend", batch=4, tokens=512), "step[EXTEND bs=4 toks=512]")
        self.assertEqual(f("DECODE"), "step[DECODE]")
        self.assertEqual(f("mixed", batch=3), "step[MIXED bs=3]")
        self.assertEqual(f("idle", batch=0), "step[IDLE bs=0]")
        self.assertEqual(f("iteration"), "iteration")
        with self.assertRaises(ValueError):
            f("verify")
        with self.assertRaises(ValueError):
            f("decode", batch=-1)

    def test_step_and_request_nest(self):
        with opmap_torch.request(force=True) as r:
            self.assertEqual(r, "request")
            with opmap_torch.step("prefill", batch=2, tokens=17, force=True) as s:
                self.assertEqual(s, "step[EXTEND bs=2 toks=17]")
            with opmap_torch.step(batch=2, force=True):
                pass
        self.assertEqual(self.rec.completed, [
            (1, "step[EXTEND bs=2 toks=17]"), (1, "step[DECODE bs=2]"), (0, "request")])

    def test_pops_on_exception_and_as_decorator(self):
        @opmap_torch.step("decode", batch=1, force=True)
        def run():
            raise KeyError("x")

        with self.assertRaises(KeyError):
            run()
        with self.assertRaises(KeyError):
            run()
        self.assertEqual(self.rec.stack, [])
        self.assertEqual(self.rec.pushed(), ["step[DECODE bs=1]"] * 2)

    def test_one_object_many_threads(self):
        s = opmap_torch.step("decode", batch=1, force=True)
        lock = threading.Lock()
        counts = {"push": 0, "pop": 0}

        def push(name):
            with lock:
                counts["push"] += 1

        def pop():
            with lock:
                counts["pop"] += 1

        with mock.patch.object(torch.cuda.nvtx, "range_push", push), \
                mock.patch.object(torch.cuda.nvtx, "range_pop", pop):
            def work():
                for _ in range(100):
                    with s:
                        pass
            ts = [threading.Thread(target=work) for _ in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        self.assertEqual(counts, {"push": 400, "pop": 400})

    def test_noop_without_library(self):
        with opmap_torch.request() as r, opmap_torch.step("decode", batch=4) as s:
            self.assertIsNone(r)
            self.assertIsNone(s)
        self.assertEqual(self.rec.events, [])
        with mock.patch.dict(os.environ, {"NVTX_INJECTION64_PATH": "/opt/libopmap_inject.so"}):
            with opmap_torch.step("decode", batch=4) as s:
                self.assertEqual(s, "step[DECODE bs=4]")
        self.assertEqual(self.rec.pushed(), ["step[DECODE bs=4]"])


class RealNvtxTest(unittest.TestCase):
    """PyPI's CUDA torch runs torch.cuda.nvtx without a GPU; a CPU-only build raises."""

    def test_range_push_pop_without_gpu(self):
        try:
            depth = torch.cuda.nvtx.range_push("opmap_torch test")
        except (RuntimeError, AttributeError) as e:
            self.skipTest("this torch has no NVTX: %s" % e)
        torch.cuda.nvtx.range_pop()
        self.assertIsInstance(depth, int)


if __name__ == "__main__":
    unittest.main()
