#!/usr/bin/env python3
"""A latency-throughput sweep: opmap-demo-infer at a ladder of offered rates under opmap.

One collector (SQLite store, a private temporary folder, loopback, tokens) holds every
step. Each step starts an agent, runs the demo for --seconds at one offered rate with
libopmap_inject.so loaded and the revision label `rate-<R>`, and stops the agent once the
demo's window is uploaded. A step's load point is then read twice:
  demo       the demo's own --json figures: achieved throughput, exact p50/p95/p99 of
             every request (arrival to completion)
  collector  `opmap query latency --subject request --group-by revision`: the captured
             request ranges' p50/p95/p99 (DDSketch, relative error in its header)
  power      `opmap query power --group-by revision`: the step's GPU power (Σ average W of
             the GPUs NVML shows the agent; --nvml-library picks the library) and the
             demo's achieved requests per joule; `unavailable: <reason>` without NVML
With --sla-ms, the knee is the highest offered rate whose p99 meets the SLA, named for
both readings (`none` when no step meets it). The table goes to stdout; --json F writes
the steps and knees as one JSON object.

  bench/sweep.py --bin build/bin --lib build/lib/libopmap_inject.so \\
      --rates 50,100,200,400 --seconds 8 --sla-ms 10 [--json sweep.json] [--demo-args "..."]
"""
import argparse
import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_overhead import Agent  # noqa: E402


class Collector:
    def __init__(self, bin_dir, work):
        self.agent_token = secrets.token_hex(16)
        self.analyst_token = secrets.token_hex(16)
        tokens = os.path.join(work, "tokens")
        with open(os.open(tokens, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(f"{self.agent_token} agent sweep-agent\n{self.analyst_token} analyst sweep\n")
        self.agent_token_file = os.path.join(work, "agent.token")
        with open(os.open(self.agent_token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(self.agent_token + "\n")
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "opmap-collector"), "--listen", "127.0.0.1:0", "--store",
             "sqlite:" + os.path.join(work, "opmap.db"), "--tokens", tokens,
             "--metrics-listen", ""],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            raise SystemExit(f"sweep: the collector did not start: {line.strip()!r}")
        self.addr = line.split()[-1]
        self.bin_dir = bin_dir

    def query(self, *args):
        """The query's JSON, or the CLI's error line as a string."""
        env = dict(os.environ, OPMAP_TOKEN=self.analyst_token)
        out = subprocess.run([os.path.join(self.bin_dir, "opmap"), "query", *args,
                              "--collector", self.addr, "--format", "json"],
                             env=env, capture_output=True, text=True)
        return json.loads(out.stdout) if out.returncode == 0 else out.stderr.strip()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def request_rows(collector):
    """{revision: {"count", "p50_ms", "p95_ms", "p99_ms"}} from the collector; raises with
    the CLI's error when the query fails."""
    doc = collector.query("latency", "--subject", "request", "--group-by", "revision")
    if isinstance(doc, str):
        raise RuntimeError(f"opmap query latency: {doc}")
    rows = {}
    for row in doc.get("rows", []):
        q = {f"{p}_ms": (row[f"{p}_us"] / 1e3 if row.get(f"{p}_us") is not None else None)
             for p in ("p50", "p95", "p99")}
        rows[row.get("revision", "")] = dict(q, count=row.get("count"))
    return rows


def power_rows(collector):
    """({revision: Σ GPU average W}, [unavailable reasons]) from the collector."""
    doc = collector.query("power", "--group-by", "revision")
    if isinstance(doc, str):
        raise RuntimeError(f"opmap query power: {doc}")
    watts = {}
    for row in doc.get("rows", []):
        if row.get("domain") == "gpu" and row.get("average_w") is not None:
            rev = row.get("revision", "")
            watts[rev] = watts.get(rev, 0.0) + row["average_w"]
    reasons = [f"{u['what']}: {u['reason']}" for u in doc.get("unavailable", [])
               if u["what"].startswith("power gpu") or u["what"] == "rows"]
    return watts, reasons


def knee(steps, reading, sla_ms):
    met = [s["rate"] for s in steps if s[reading].get("p99_ms") is not None
           and s[reading]["p99_ms"] <= sla_ms]
    return max(met) if met else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--lib", default="build/lib/libopmap_inject.so")
    ap.add_argument("--rates", default="50,100,200,400,800",
                    help="offered requests/s, comma-separated, ascending")
    ap.add_argument("--seconds", type=float, default=8, help="each step's duration")
    ap.add_argument("--sla-ms", type=float, help="p99 SLA in ms: mark the knee")
    ap.add_argument("--json", help="write the steps and knees here")
    ap.add_argument("--demo-args", default="", help="extra opmap-demo-infer flags")
    ap.add_argument("--nvml-library", help="the agent's NVML (default: its own, "
                    "libnvidia-ml.so.1)")
    ap.add_argument("--power-env", default="", help="NAME=VALUE for the agent's environment "
                    "(e.g. the test NVML's OPMAP_FAKE_NVML_SCRIPT=FILE)")
    opts = ap.parse_args()
    try:
        rates = [float(r) for r in opts.rates.split(",")]
    except ValueError:
        print(f"sweep: --rates '{opts.rates}': not a comma-separated list of numbers",
              file=sys.stderr)
        return 2
    if not rates or any(r <= 0 for r in rates) or rates != sorted(rates):
        print(f"sweep: --rates '{opts.rates}': needs positive rates in ascending order",
              file=sys.stderr)
        return 2
    demo = os.path.join(opts.bin, "opmap-demo-infer")
    for need in (demo, os.path.join(opts.bin, "opmap-agent"),
                 os.path.join(opts.bin, "opmap-collector"), opts.lib):
        if not os.path.exists(need):
            print(f"sweep: {need} is not built", file=sys.stderr)
            return 2
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("OPMAP_", "NVTX_INJECTION", "CUDA_INJECTION", "LD_PRELOAD"))}
    work = tempfile.mkdtemp(prefix="opmap_sweep_")  # 0700
    agent_env = dict(os.environ)
    if opts.power_env:
        name, _, value = opts.power_env.partition("=")
        if not name or not _:
            print(f"sweep: --power-env '{opts.power_env}': expected NAME=VALUE", file=sys.stderr)
            return 2
        agent_env[name] = value
    steps = []
    collector = None
    try:
        collector = Collector(opts.bin, work)
        window = int(opts.seconds) + 15
        for i, rate in enumerate(rates):
            label = f"rate-{rate:g}"
            print(f"sweep: step {i + 1}/{len(rates)}: {rate:g} requests/s for {opts.seconds:g} s",
                  file=sys.stderr)
            step_dir = os.path.join(work, f"step{i}")
            os.mkdir(step_dir)
            agent = Agent(opts.bin, step_dir, [
                "--collector", collector.addr, "--insecure", "--token-file",
                collector.agent_token_file, "--capture-window", f"{window}s",
                "--capture-every", f"{2 * window}s", "--agent-id", f"sweep-{i}",
                "--power-interval", "200ms"]
                + (["--nvml-library", opts.nvml_library] if opts.nvml_library else []),
                env=agent_env)
            env = dict(base_env, NVTX_INJECTION64_PATH=os.path.abspath(opts.lib),
                       OPMAP_AGENT_SOCKET=agent.sock, OPMAP_INIT_WAIT_MS="5000",
                       OPMAP_MODEL="demo-sweep", OPMAP_MODEL_REVISION=label)
            run = subprocess.run([demo, "--json", "--rate", f"{rate:g}", "--duration",
                                  f"{opts.seconds:g}", *shlex.split(opts.demo_args)],
                                 env=env, capture_output=True, text=True)
            if run.returncode != 0:
                agent.stop()
                print(f"sweep: opmap-demo-infer at {rate:g}/s exited {run.returncode}: "
                      f"{run.stderr.strip()}", file=sys.stderr)
                return 2 if run.returncode == 2 else 1
            report = json.loads(run.stdout.strip().splitlines()[-1])
            # The window closes when the demo exits and its batches then reach the store:
            # wait until the step's request count is there and unchanged for a second.
            deadline, seen = time.monotonic() + 60, None
            while time.monotonic() < deadline:
                try:
                    count = request_rows(collector).get(label, {}).get("count")
                except RuntimeError:  # nothing stored yet can be an error too
                    count = None
                if count is not None and count == seen:
                    break
                seen = count
                time.sleep(1)
            agent.stop()
            lat = report["latency_ms"]
            steps.append({"rate": rate, "label": label,
                          "demo": {"throughput_rps": report["throughput_rps"],
                                   "requests": report["requests"], "p50_ms": lat["p50"],
                                   "p95_ms": lat["p95"], "p99_ms": lat["p99"]}})
        rows = request_rows(collector)
        watts, power_reasons = power_rows(collector)
    except RuntimeError as e:
        print(f"sweep: {e}", file=sys.stderr)
        return 1
    finally:
        if collector is not None:
            collector.stop()
        shutil.rmtree(work, ignore_errors=True)
    why_no_power = "; ".join(power_reasons) or "no GPU power rows"
    for s in steps:
        s["collector"] = rows.get(s["label"], {})
        w = watts.get(s["label"])
        s["power"] = ({"gpu_watts": w, "requests_per_joule": s["demo"]["throughput_rps"] / w}
                      if w else {"unavailable": why_no_power})

    def ms(v):
        return f"{v:9.3f}" if v is not None else "unavailable: not stored"

    def n(v):
        return f"{v:7}" if v is not None else "unavailable: not stored"
    print(f"{'offered/s':>9} {'achieved/s':>10} {'demo p50':>9} {'demo p99':>9} "
          f"{'opmap n':>7} {'opmap p50':>9} {'opmap p99':>9} {'gpu W':>7} {'req/J':>8}")
    for s in steps:
        d, c, p = s["demo"], s["collector"], s["power"]
        power = (f"{p['gpu_watts']:7.1f} {p['requests_per_joule']:8.4f}" if "gpu_watts" in p
                 else f"{'unavailable':>16}")
        print(f"{s['rate']:9g} {d['throughput_rps']:10.1f} {d['p50_ms']:9.3f} {d['p99_ms']:9.3f} "
              f"{n(c.get('count'))} {ms(c.get('p50_ms'))} {ms(c.get('p99_ms'))} {power}")
    if any("unavailable" in s["power"] for s in steps):
        print(f"unavailable: power: {why_no_power}")
    result = {"steps": steps, "seconds": opts.seconds, "sla_p99_ms": opts.sla_ms}
    if opts.sla_ms is not None:
        result["knee"] = {r: knee(steps, r, opts.sla_ms) for r in ("demo", "collector")}
        for reading, rate in result["knee"].items():
            print(f"knee ({reading}): " + (f"{rate:g} requests/s (highest offered rate with p99 "
                                           f"<= {opts.sla_ms:g} ms)" if rate is not None
                                           else f"none: no step meets p99 <= {opts.sla_ms:g} ms"))
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
