#!/usr/bin/env python3
"""opmap analyze as the trace grows: time against the decompression floor and peak RSS.

Builds the 1x/8x/32x/128x traces from one shared trace with bench/replicate_trace.py (1x
is --base-copies copies of it, about 55 MB of JSON by default; events shifted in time, ids
offset), then for each size, in the same run: `zcat FILE > /dev/null` and `opmap analyze
FILE --format json --quiet`, best of --reps, the analyze's peak RSS (wait4 of exactly that
child, bench/rusage_run.cc). Prints per size: JSON bytes, both times, their ratio (target
<= 1.1x), peak RSS and its ratio to the 1x figure (target <= 1.5x), and whether every
count and sum of the analysis is N times the 1x one (percentiles are not compared: N
copies of a sample have the same quantiles only up to interpolation).

A benchmark, not a test: exit 0 whatever the figures, 2 when it cannot run.

usage: bench/analyze_scale.py [--sizes 1,8,32,128] [--reps 1] [--base-copies 5]
                              [--trace FILE] [--work DIR] [--bin PATH]
"""
import argparse
import json
import os
import subprocess
import sys

import analyze_bench as ab

TIME_TARGET = 1.1
RSS_TARGET = 1.5
DEFAULT_TRACE = "traces/tl_h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz"
# Leaves that add up across copies: counts and time sums (not percentiles, means, shares,
# ratios, spans or min/max).
SUM_KEYS = {"count", "event_count", "kernel_count", "gpu_event_count", "gpu_time_us",
            "busy_us", "compute_us", "non_compute_us", "host_wait_us",
            "kernel_wait_us", "other_us", "host_wait_intervals", "kernel_wait_intervals",
            "other_intervals", "events_without_launch", "launch_delay_clipped_at_zero"}
SKIP_KEYS = {"file", "span_us", "idle_us", "idle_time"}  # the gaps between copies add idle


def scaled_mismatch(base, big, n, path=""):
    """The first leaf of `big` that is not n x `base` (counts exact; µs sums within the
    rounding of n printed 3-decimal figures), or None."""
    if isinstance(base, dict):
        for k, v in base.items():
            if k in SKIP_KEYS:
                continue
            if k not in big:
                return f"{path}.{k}: missing"
            m = scaled_mismatch(v, big[k], n, f"{path}.{k}")
            if m:
                return m
        return None
    if isinstance(base, list):
        if len(base) != len(big):
            return f"{path}: {len(big)} rows, not {len(base)}"
        for i, (a, b) in enumerate(zip(base, big)):
            m = scaled_mismatch(a, b, n, f"{path}[{i}]")
            if m:
                return m
        return None
    key = path.rsplit(".", 1)[-1]
    if key.split("[")[0] not in SUM_KEYS or isinstance(base, (str, bool)) or base is None:
        return None
    want = base * n
    tolerance = 0 if isinstance(base, int) else 0.0005 * n + 1e-9 * abs(want)
    if abs(big - want) > tolerance:
        return f"{path}: {big}, not {n} x {base} = {want}"
    return None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,8,32,128")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--base-copies", type=int, default=5)
    ap.add_argument("--trace")
    ap.add_argument("--work", default=os.environ.get("OPMAP_SCALE_WORK", "/tmp/opmap-analyze-scale"))
    ap.add_argument("--bin", default=os.environ.get("OPMAP_BIN", os.path.join(repo, "build/bin/opmap")))
    args = ap.parse_args()
    shared = os.environ.get("OPMAP_SHARED_DIR", os.path.join(repo, "..", "shared"))
    trace = args.trace or os.path.join(shared, DEFAULT_TRACE)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        sys.exit(f"analyze_scale.py: --sizes wants numbers like 1,8,32, not '{args.sizes}'")
    if not os.path.isfile(trace):
        print(f"analyze_scale.py: no trace at {trace}", file=sys.stderr)
        return 2
    if not os.access(args.bin, os.X_OK):
        print(f"analyze_scale.py: no opmap binary at {args.bin}", file=sys.stderr)
        return 2
    ab.RUNNER = ab.find_runner(here, args.bin)
    if ab.RUNNER is None:
        print("analyze_scale.py: no rusage runner (set OPMAP_BENCH_RUNNER)", file=sys.stderr)
        return 2
    os.makedirs(args.work, exist_ok=True)
    print(f"analyze_scale: {os.path.basename(trace)}, 1x = {args.base_copies} copies; "
          f"{ab.cpu_model()}, {os.cpu_count()} cores; best of {args.reps}")
    header = (f"{'size':>5} {'JSON':>10} {'zcat s':>8} {'analyze s':>9} {'ratio':>6} "
              f"{'peak RSS':>10} {'RSS/1x':>7}  counts and sums")
    print(header)
    base_rss, base_doc = None, None
    for n in sizes:
        out = os.path.join(args.work, f"{os.path.basename(trace).split('.json')[0]}-{n * args.base_copies}c.json.gz")
        if not os.path.exists(out):
            print(f"  (building {n}x: {n * args.base_copies} copies into {out})", flush=True)
            subprocess.run([sys.executable, os.path.join(here, "replicate_trace.py"), trace,
                            str(n * args.base_copies), out + ".tmp"], check=True)
            os.rename(out + ".tmp", out)
        json_bytes = ab.uncompressed_size(out)
        floor, analyze, rss, status = [], [], 0, 0
        report = os.path.join(args.work, f"analysis-{n}x.json")
        for _ in range(args.reps):
            floor.append(ab.run_once(["zcat", out])[0])
            t, r, rc, _ = ab.run_once([args.bin, "analyze", out, "--format", "json", "--quiet"])
            analyze.append(t)
            rss = max(rss, r)
            status = status or rc
        with open(report, "w") as f:
            subprocess.run([args.bin, "analyze", out, "--format", "json", "--quiet"], stdout=f, check=True)
        with open(report) as f:
            doc = json.load(f)
        if base_rss is None:
            base_rss, base_doc, base_n = rss, doc, n
            check = "(the reference)"
        else:
            m = scaled_mismatch(base_doc, doc, n // base_n if n % base_n == 0 else n / base_n)
            check = f"= {n // base_n}x the 1x" if m is None else f"DIFFER: {m}"
        ratio = min(analyze) / min(floor)
        print(f"{n:>4}x {json_bytes / 1e6:>8.1f}MB {min(floor):>8.2f} {min(analyze):>9.2f} "
              f"{ratio:>5.2f}x {rss / 2**20:>7.1f}MiB {rss / base_rss:>6.2f}x  {check}"
              + ("" if status == 0 else f"  (analyze exit {status})"), flush=True)
    print(f"targets: analyze <= {TIME_TARGET}x zcat at every size; peak RSS <= {RSS_TARGET}x the 1x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
