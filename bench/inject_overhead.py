#!/usr/bin/env python3
"""opmap-demo-infer with libopmap_inject.so capturing, dormant, and not loaded.

Targets (docs/benchmarks.md): capturing costs the demo <= 3% throughput, dormant <= 0.5%.

Each round runs the three variants back to back (in a rotating order, so drift in the
machine's load does not favour one), the demo saturated (one client, one worker, an offered
rate far above what it serves, so its throughput is its service rate). Two figures per
variant, each as a ratio to the baseline of the same round, median over rounds:
  throughput   the demo's own --json throughput_rps
  cpu/request  user+system CPU of the whole process (rusage) per request: steadier than
               throughput on a machine whose cores are shared with other work
  best cpu     the variant's lowest cpu/request over all rounds against the baseline's
               lowest: interference from other work only ever adds, so minima compare the
               undisturbed runs
"Capturing" is the library's debug-file mode: it opens a window at once and drains the ring
itself into a file, so the drain's CPU is charged to the workload (an agent would pay it in
its own process): the figure is an upper bound.

  bench/inject_overhead.py --lib build/lib/libopmap_inject.so --demo build/bin/opmap-demo-infer
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

SHAPES = {
    # The demo's default model: ~40 NVTX ranges per ~6 ms request.
    "default": ["--requests", "300"],
    # A tiny model: ~110 ranges per ~0.15 ms request, so NVTX dominates (stress case).
    "tiny": ["--requests", "8000", "--layers", "8", "--hidden", "16", "--heads", "1",
             "--seq", "4", "--vocab", "64"],
}
SATURATED = ["--json", "--rate", "1000000", "--clients", "1", "--workers", "1", "--queue", "4"]


def run(demo, args, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([demo] + SATURATED + args, env=env, check=True,
                         capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report = json.loads(out)
    return report["throughput_rps"], cpu / report["requests"], report["wall_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--demo", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--shapes", default="default,tiny")
    opts = ap.parse_args()
    if not os.access(opts.demo, os.X_OK):
        print(f"unavailable: {opts.demo} is not built (examples/)")
        return 0
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("OPMAP_", "NVTX_INJECTION", "CUDA_INJECTION", "LD_PRELOAD"))}
    tmp = tempfile.mkdtemp(prefix="opmap_inject_bench_")
    variants = {
        "not loaded": dict(base_env),
        "dormant": dict(base_env, NVTX_INJECTION64_PATH=opts.lib,
                        OPMAP_AGENT_SOCKET=os.path.join(tmp, "nobody.sock")),
        "capturing": dict(base_env, NVTX_INJECTION64_PATH=opts.lib,
                          OPMAP_CAPTURE_FILE=os.path.join(tmp, "capture.bin"),
                          OPMAP_CAPTURE_SECONDS="3600"),
    }
    names = list(variants)
    print(f"opmap-demo-infer saturated (1 client, 1 worker), {opts.rounds} rounds, "
          "ratios to 'not loaded' in the same round (median)")
    print(f"{'shape':8} {'variant':11} {'req/s':>10} {'throughput':>11} {'cpu/request':>12} "
          f"{'best cpu':>9}")
    for shape in opts.shapes.split(","):
        results = {n: [] for n in names}
        for r in range(opts.rounds):
            order = names[r % 3:] + names[:r % 3]
            for n in order:
                results[n].append(run(opts.demo, SHAPES[shape], variants[n]))
        for n in names:
            rps = statistics.median(x[0] for x in results[n])
            thr = statistics.median(results[n][i][0] / results["not loaded"][i][0]
                                    for i in range(opts.rounds))
            cpu = statistics.median(results[n][i][1] / results["not loaded"][i][1]
                                    for i in range(opts.rounds))
            best = (min(x[1] for x in results[n]) /
                    min(x[1] for x in results["not loaded"]))
            print(f"{shape:8} {n:11} {rps:10.1f} {thr:10.3f}x {cpu:11.3f}x {best:8.3f}x")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
