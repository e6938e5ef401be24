#!/usr/bin/env python3
"""The handoff packet's cost: `opmap analyze TRACE --report json` against plain
`opmap analyze TRACE --format json` on the same trace, in the same run.

For the largest .json.gz in the shared traces (by uncompressed size) both commands run
interleaved (after one warm-up each), best of N wall and CPU times; the ratio is printed
against the target (report / plain <= 1.5x). A benchmark, not a test: exit status 0 whatever
the figures (2 only when it cannot run: no binary, no traces).

usage: bench/report_bench.py [--reps N] [--shared DIR] [--bin PATH] [--trace FILE]
env:   OPMAP_BIN, OPMAP_SHARED_DIR, OPMAP_BENCH_RUNNER (as bench/analyze_bench.py)
"""
import argparse
import os
import sys

import analyze_bench as ab

TARGET = 1.5


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=int(os.environ.get("OPMAP_BENCH_REPS", 5)))
    ap.add_argument("--shared", default=os.environ.get("OPMAP_SHARED_DIR",
                                                       os.path.join(repo, "..", "shared")))
    ap.add_argument("--bin", default=os.environ.get("OPMAP_BIN",
                                                    os.path.join(repo, "build", "bin", "opmap")))
    ap.add_argument("--trace", help="a trace instead of the largest shared one")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        print(f"report_bench: no opmap binary at {args.bin} (set OPMAP_BIN)", file=sys.stderr)
        return 2
    ab.RUNNER = ab.find_runner(here, args.bin)
    if ab.RUNNER is None:
        print("report_bench: cannot build bench/rusage_run.cc; set OPMAP_BENCH_RUNNER",
              file=sys.stderr)
        return 2
    trace = args.trace
    if trace is None:
        traces_dir = os.path.join(args.shared, "traces")
        if not os.path.isdir(traces_dir):
            print(f"report_bench: no traces in {traces_dir}", file=sys.stderr)
            return 2
        gz = [os.path.join(traces_dir, f) for f in os.listdir(traces_dir) if f.endswith(".json.gz")]
        trace = max(gz, key=ab.uncompressed_size)
    plain = [args.bin, "analyze", trace, "--format", "json", "--quiet"]
    report = [args.bin, "analyze", trace, "--report", "json", "--quiet"]
    ab.run_once(plain)
    ab.run_once(report)
    times = {"plain": [], "report": []}
    cpus = {"plain": [], "report": []}
    rss = {"plain": 0, "report": 0}
    for _ in range(args.reps):
        for name, cmd in (("plain", plain), ("report", report)):
            t, r, rc, cpu = ab.run_once(cmd)
            if rc != 0:
                print(f"report_bench: {' '.join(cmd)} exited {rc}", file=sys.stderr)
                return 2
            times[name].append(t)
            cpus[name].append(cpu)
            rss[name] = max(rss[name], r)
    ratio = min(times["report"]) / min(times["plain"])
    cpu_ratio = min(cpus["report"]) / min(cpus["plain"])
    print("# opmap analyze --report json vs --format json")
    print()
    print(f"- trace: {os.path.basename(trace)} ({ab.mb(ab.uncompressed_size(trace))} of JSON)")
    print(f"- best of {args.reps}, interleaved; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print("| command | wall s | CPU s | peak RSS |")
    print("|---|---:|---:|---:|")
    for name in ("plain", "report"):
        print(f"| {name} | {min(times[name]):.3f} | {min(cpus[name]):.3f} | {ab.mb(rss[name])} |")
    print()
    print(f"report / plain: wall {ratio:.2f}x, CPU {cpu_ratio:.2f}x (target <= {TARGET}x: "
          f"{ab.verdict(ratio, TARGET)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
