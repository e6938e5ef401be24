#!/usr/bin/env python3
"""A real PyTorch decoder under libopmap_inject.so and opmap-agent, against the same
decoder without the library.

Targets: the workload's throughput and CPU per request within 1% of running without the
library while the library is loaded but dormant, within 3% while the agent captures with
opmap_torch.annotate module ranges; and what emit_nvtx(record_shapes=True) costs.

The workload is tests/framework/workloads.py's decoder: a transformers LlamaForCausalLM
built from a LlamaConfig (2 layers, hidden 128, 4 heads, 2 KV heads, vocabulary 512,
random weights), CPU, 1 intra-op thread, saturated (an offered rate far above what it
serves), --requests requests of batch 4 x 16-token prompts, each a prefill step and 15
greedy decode steps with the KV cache, every step in opmap_torch.step() and every request
in opmap_torch.request(). Configurations, one run each with the same settings, in this
order (the baseline is run first and again last: the two show this machine's drift
within the run):
  not loaded            no LD_PRELOAD: opmap_torch installs no hook and pushes no range
  dormant               LD_PRELOAD=libopmap_inject.so, registered with an opmap-agent
                        whose only window (1 s after registration, 1 s long) ends during
                        the imports (--capture-every 1h): annotate(model, shapes=True)
                        installs only the root module's hooks, which ask the library once
                        per forward whether a window wants ranges (no; the bench checks
                        that no window opened while it served)
  dormant, modules without shapes   the same with annotate(model, shapes=False)
  ranges forced, not loaded   no library, opmap_torch with force=True (shapes=True): the
                        same Python hooks and torch.cuda.nvtx calls, into NVTX's own no-op;
                        against "dormant", what the library's dormant hooks add
  duty 1/30, modules    the agent's default duty cycle (a 2 s window every 60 s) time-
                        compressed to 0.2 s every 6 s, annotate(shapes=True): what the
                        workload pays on average in a fleet at the default cadence
  capturing, modules    one agent window over the whole run (from 1 s after registration,
                        during the imports, to the exit), annotate(shapes=True)
  capturing, modules without shapes   the same with annotate(shapes=False)
  capturing, emit_nvtx  "capturing, modules" plus
                        torch.autograd.profiler.emit_nvtx(record_shapes=True): one range
                        per ATen op with its input sizes
  emit_nvtx, not loaded emit_nvtx(record_shapes=True) without the library (NVTX's no-op):
                        what PyTorch's emit_nvtx costs by itself
  not loaded (again)
Figures per configuration: generated tokens/s over the serving loop (requests x batch x
tokens / wall), the workload process's user+system CPU milliseconds per request over the
loop (getrusage: every thread of the process, the library's included; the agent drains
the ring in its own process, whose CPU is printed apart), each as a ratio to the baseline
of the same round; for runs with an agent the windows that ended while it served,
the records the agent drained per request served (529 module, step and request ranges
per request when every range is captured: 16 forwards x 32 modules + 16 steps + 1) and
its drops.

  bench/framework_overhead.py [--requests 400] [--rounds 1] [--python VENV/bin/python]

Needs the venv scripts/setup_frameworks.sh makes (default ~/.cache/opmap/frameworks-venv)
and build/ (OPMAP_BUILD_DIR). A benchmark, not a test: exit 0 whatever the figures.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "framework"))
import opmap_stack  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
BATCH, TOKENS = 4, 16


def proc_cpu_seconds(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except OSError:
        return None


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPMAP_", "NVTX_INJECTION", "CUDA_INJECTION", "LD_PRELOAD"))}
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false"})
    return env


def run_workload(python, work, name, env, requests, extra, stack=None):
    """One decoder run; returns its log plus what the agent saw of it."""
    argv = [python, os.path.join(REPO, "tests", "framework", "workloads.py"), "decoder",
            "--name", name, "--out", work, "--rate", "1000000", "--requests", str(requests),
            "--batch", str(BATCH), "--tokens", str(TOKENS), "--threads", "1",
            "--warmup", "3"] + extra
    child = opmap_stack.Child(argv, work, name, env)
    windows_at_start = windows = None
    agent_cpu0 = agent_cpu1 = None
    while child.proc.poll() is None:
        if stack is not None:
            p = stack.process_status(child.pid)
            if p is not None:
                if windows_at_start is None and "serving" in child.out():
                    windows_at_start = p.get("windows")
                    agent_cpu0 = proc_cpu_seconds(stack.agent.pid)
                if windows_at_start is not None:
                    windows = p.get("windows")
                    agent_cpu1 = proc_cpu_seconds(stack.agent.pid)
        time.sleep(0.2)
    if child.proc.returncode != 0:
        raise SystemExit("%s: exit %d\n%s" % (name, child.proc.returncode, child.err()[-3000:]))
    with open(os.path.join(work, name + ".log.json")) as f:
        log = json.load(f)
    if stack is not None:
        time.sleep(0.5)  # the window the exit closed is drained and counted
        st = stack.agent_status() or {}
        log.update({"windows_total": st.get("windows_total"),
                    "records": st.get("records_drained"), "drops": st.get("drops_total"),
                    "windows_while_serving": None if windows is None or windows_at_start is None
                    else windows - windows_at_start})
        if agent_cpu0 is not None and agent_cpu1 is not None:
            log["agent_cpu_s"] = agent_cpu1 - agent_cpu0
    return log


CONFIGS = [
    # name, agent flags (None: no library), workload flags
    ("not loaded", None, []),
    ("dormant", "dormant", []),
    ("dormant, modules without shapes", "dormant", ["--no-module-shapes"]),
    ("ranges forced, not loaded", None, ["--force-ranges"]),
    ("duty 1/30, modules", "duty", []),
    ("capturing, modules", "capturing", []),
    ("capturing, modules without shapes", "capturing", ["--no-module-shapes"]),
    ("capturing, emit_nvtx", "capturing", ["--emit-nvtx"]),
    ("emit_nvtx, not loaded", None, ["--emit-nvtx"]),
    ("not loaded (again)", None, []),
]
AGENT_FLAGS = {
    # The only window opens 1 s after registration and lasts 1 s: during the imports.
    "dormant": ["--capture-window", "1s", "--capture-every", "1h", "--capture-jitter", "0",
                "--cpu-budget", "0.9"],
    # The default's duty cycle (2 s every 60 s), time-compressed: 0.2 s every 6 s.
    "duty": ["--capture-window", "200ms", "--capture-every", "6s", "--capture-jitter", "0",
             "--cpu-budget", "0.9"],
    # One window from 1 s after registration to the exit (--capture-every must exceed
    # --capture-window).
    "capturing": ["--capture-window", "600s", "--capture-every", "601s",
                  "--capture-jitter", "0", "--cpu-budget", "0.9", "--memory-queue", "64MiB"],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat the whole sequence; figures are then medians over rounds")
    ap.add_argument("--python", default=os.path.join(
        os.environ.get("OPMAP_FRAMEWORKS_VENV",
                       os.path.expanduser("~/.cache/opmap/frameworks-venv")), "bin", "python"))
    opts = ap.parse_args()
    if not os.access(opts.python, os.X_OK):
        print("unavailable: no venv python at %s (scripts/setup_frameworks.sh)" % opts.python)
        return 0
    missing = opmap_stack.missing_binaries()
    if missing:
        print("unavailable: not built: %s" % ", ".join(missing))
        return 0
    work = tempfile.mkdtemp(prefix="opmap-framework-bench-")
    base = clean_env()
    rounds = []
    try:
        for r in range(opts.rounds):
            results = {}
            for i, (name, agent, extra) in enumerate(CONFIGS):
                sub = os.path.join(work, "r%d-%d" % (r, i))
                os.makedirs(sub)
                if agent is None:
                    results[name] = run_workload(opts.python, sub, "run", base,
                                                 opts.requests, extra)
                else:
                    with opmap_stack.Stack(sub, agent_flags=AGENT_FLAGS[agent],
                                           collector=False) as st:
                        env = st.workload_env("bench-decoder", "1")
                        results[name] = run_workload(opts.python, sub, "run", env,
                                                     opts.requests, extra, stack=st)
                print("round %d: %-34s %.1f tokens/s" % (
                    r + 1, name, tokens_per_s(results[name])), file=sys.stderr, flush=True)
            rounds.append(results)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(rounds, opts)
    return 0


def tokens_per_s(r):
    return r["served"] * BATCH * TOKENS / r["serving_wall_s"]


def cpu_per_request(r):
    return r["serving_cpu_s"] / r["served"]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def report(rounds, opts):
    print("decoder: LlamaForCausalLM 2 layers, hidden 128, batch %d, %d tokens per request "
          "(1 prefill + %d decode steps), %d requests, 1 thread, saturated; %d round(s), "
          "ratios to 'not loaded' of the same round%s" % (
              BATCH, TOKENS, TOKENS - 1, opts.requests, len(rounds),
              ", medians over rounds" if len(rounds) > 1 else ""))
    print("%-34s %9s %8s %10s %8s %9s %9s %10s %6s %9s" % (
        "configuration", "tokens/s", "ratio", "cpu_ms/req", "ratio", "windows*", "records",
        "rec/req", "drops", "agent_cpu"))
    base = [r["not loaded"] for r in rounds]
    for name, _, _ in CONFIGS:
        rs = [r[name] for r in rounds]
        tps = median([tokens_per_s(x) for x in rs])
        tps_ratio = median([tokens_per_s(x) / tokens_per_s(b) for x, b in zip(rs, base)])
        cpu = median([cpu_per_request(x) for x in rs])
        cpu_ratio = median([cpu_per_request(x) / cpu_per_request(b) for x, b in zip(rs, base)])
        last = rs[-1]
        rec = last.get("records")
        print("%-34s %9.1f %7.3fx %10.3f %7.3fx %9s %9s %10s %6s %9s" % (
            name, tps, tps_ratio, cpu * 1e3, cpu_ratio,
            "" if last.get("windows_while_serving") is None else
            "%s/%s" % (last["windows_while_serving"], last["windows_total"]),
            "" if rec is None else rec,
            "" if rec is None else "%.1f" % (rec / last["served"]),
            "" if last.get("drops") is None else last["drops"],
            "" if last.get("agent_cpu_s") is None else "%.2f s" % last["agent_cpu_s"]))
    print("* windows that ended while the workload served / in all (last round; the agent "
          "counts a window when it ends); records, drops: the agent's totals for the "
          "process, its first window (during the imports) included; agent_cpu: the agent's "
          "CPU while the workload served")


if __name__ == "__main__":
    sys.exit(main())
