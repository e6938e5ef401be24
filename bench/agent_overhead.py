#!/usr/bin/env python3
"""opmap-demo-infer under opmap-agent + libopmap_inject.so, against the demo alone.

Targets (docs/benchmarks.md): the workload's throughput with agent + library capturing is within 3% of
running without them ("during windows"), within 0.5% while registered but between windows;
the agent's CPU per 100k records/s is at most 2% of a core; its peak RSS at most 64 MiB.

Each round runs three variants back to back, rotating their order (drift in the machine's
load then favours none), the demo saturated (one client, one worker, an offered rate far
above its service rate, so throughput is its service rate):
  alone        no library, no agent
  between      library loaded and registered with a running agent, no window open
  capturing    one agent window open for the whole run (OPMAP_INIT_WAIT_MS: from its start)
Figures per variant, as ratios to 'alone' of the same round, median over rounds:
  throughput   the demo's own throughput_rps
  cpu/request  the demo process's user+system CPU per request (rusage): steadier than
               throughput where cores are shared with other work
  best cpu     the variant's lowest cpu/request over all rounds against alone's lowest
And for the agent in 'capturing': its CPU (from /proc) per second of the run, scaled to
100k records/s of what it drained, and its peak RSS (VmHWM).

  bench/agent_overhead.py --bin build/bin --lib build/lib/libopmap_inject.so [--rounds N]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# The same saturated demo run and its (throughput, cpu/request, wall) as inject_overhead.py.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inject_overhead import run as run_demo  # noqa: E402

SHAPES = {
    # The demo's default model: ~32 NVTX ranges per ~2-6 ms request.
    "default": ["--requests", "3000"],
    # A tiny model: ~110 ranges per ~0.1 ms request: the agent's drain rate stress case.
    "tiny": ["--requests", "60000", "--layers", "8", "--hidden", "16", "--heads", "1",
             "--seq", "4", "--vocab", "64"],
}
TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def vm_hwm_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


class Agent:
    def __init__(self, bin_dir, work, flags, env=None):
        self.sock = os.path.join(work, "agent.sock")
        self.ctl = os.path.join(work, "control.sock")
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "opmap-agent"), "--socket", self.sock, "--control-socket",
             self.ctl, "--spool-dir", os.path.join(work, "spool")] + flags,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        assert "agent ready" in self.proc.stdout.readline()
        self.bin_dir = bin_dir

    def status(self):
        out = subprocess.run([os.path.join(self.bin_dir, "opmap-agent"), "status",
                              "--control-socket", self.ctl, "--json"],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--lib", default="build/lib/libopmap_inject.so")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--shapes", default="default,tiny")
    opts = ap.parse_args()
    demo = os.path.join(opts.bin, "opmap-demo-infer")
    for need in (demo, os.path.join(opts.bin, "opmap-agent"), opts.lib):
        if not os.path.exists(need):
            print(f"unavailable: {need} is not built")
            return 0
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("OPMAP_", "NVTX_INJECTION", "CUDA_INJECTION", "LD_PRELOAD"))}
    names = ["alone", "between", "capturing"]
    print(f"opmap-demo-infer saturated (1 client, 1 worker), {opts.rounds} rounds; ratios to "
          "'alone' in the same round (median)")
    print(f"{'shape':8} {'variant':10} {'req/s':>9} {'throughput':>11} {'cpu/request':>12} "
          f"{'best cpu':>9}")
    agent_rows = []
    for shape in opts.shapes.split(","):
        results = {n: [] for n in names}
        for r in range(opts.rounds):
            for n in names[r % 3:] + names[:r % 3]:
                if n == "alone":
                    results[n].append(run_demo(demo, SHAPES[shape], base_env))
                    continue
                work = tempfile.mkdtemp(prefix="opmap_agent_bench_")
                flags = (["--capture-window", "50m", "--capture-every", "1h"] if n == "capturing"
                         else ["--capture-window", "100ms", "--capture-every", "1h"])
                agent = Agent(opts.bin, work, flags)
                env = dict(base_env, NVTX_INJECTION64_PATH=opts.lib, OPMAP_AGENT_SOCKET=agent.sock)
                if n == "capturing":
                    env["OPMAP_INIT_WAIT_MS"] = "5000"
                else:
                    # Registered, and past the first scheduled window (+1-2 s) before timing.
                    env["OPMAP_INIT_WAIT_MS"] = "5000"
                cpu0 = proc_cpu_seconds(agent.proc.pid)
                t0 = time.monotonic()
                results[n].append(run_demo(demo, SHAPES[shape], env))
                wall = time.monotonic() - t0
                time.sleep(0.3)  # the window closes at the exit; let the agent finish it
                cpu1 = proc_cpu_seconds(agent.proc.pid)
                if n == "capturing":
                    st = agent.status()
                    agent_rows.append((shape, cpu1 - cpu0, wall, vm_hwm_bytes(agent.proc.pid),
                                       st))
                agent.stop()
                shutil.rmtree(work, ignore_errors=True)
        for n in names:
            rps = statistics.median(x[0] for x in results[n])
            thr = statistics.median(results[n][i][0] / results["alone"][i][0]
                                    for i in range(opts.rounds))
            cpu = statistics.median(results[n][i][1] / results["alone"][i][1]
                                    for i in range(opts.rounds))
            best = min(x[1] for x in results[n]) / min(x[1] for x in results["alone"])
            print(f"{shape:8} {n:10} {rps:9.1f} {thr:10.3f}x {cpu:11.3f}x {best:8.3f}x")
        sys.stdout.flush()
    print()
    print(f"{'shape':8} {'records/s':>10} {'agent cores':>12} {'per 100k rec/s':>15} "
          f"{'peak RSS MiB':>13}")
    for shape in opts.shapes.split(","):
        rows = [a for a in agent_rows if a[0] == shape]
        per = []
        for _, cpu, wall, hwm, st in rows:
            rate = st["records_drained"] / wall if wall > 0 else 0
            cores = cpu / wall
            per.append((rate, cores, cores * 100000 / rate if rate else float("inf"), hwm))
        rate = statistics.median(p[0] for p in per)
        cores = statistics.median(p[1] for p in per)
        per100k = statistics.median(p[2] for p in per)
        hwm = max(p[3] for p in per) / 2**20
        print(f"{shape:8} {rate:10.0f} {cores:12.4f} {100 * per100k:14.2f}% {hwm:13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
