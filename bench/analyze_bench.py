#!/usr/bin/env python3
"""opmap analyze benchmark: time and peak RSS against the decompression floor.

For the largest .json.gz in the shared traces (by uncompressed size) it measures, in the
same run and interleaved so both see the same machine state:
  * `zcat FILE > /dev/null` wall time, best of N  (the decompression floor)
  * `opmap analyze FILE --format json --quiet > /dev/null` wall time, best of N
  * the peak RSS of that analyze process (wait4 rusage of exactly that child, taken by
    the tiny bench/rusage_run.cc runner so python's own RSS is not counted in)
  * the uncompressed JSON size
  * CPU time (user + sys) of both, best of N, as a figure that moves less with load
and prints the two ratios against the targets (analyze/zcat <= 2.5x, RSS/JSON <= 2x).
A second section does the same for every trace so the ratios show across sizes.
It is a benchmark, not a test: the exit status is 0 whatever the figures (2 only when
it cannot run at all: no binary, no traces).

usage: bench/analyze_bench.py [--reps N] [--all|--largest-only] [--shared DIR] [--bin PATH]
env:   OPMAP_BIN (default <repo>/build/bin/opmap), OPMAP_SHARED_DIR (default <repo>/../shared),
       OPMAP_BENCH_RUNNER (default: opmap_rusage_run next to OPMAP_BIN, else compiled
       from bench/rusage_run.cc with $CXX or c++ into a temporary folder)
"""
import argparse
import gzip
import os
import platform
import shutil
import subprocess
import sys
import tempfile

TIME_TARGET = 2.5
RSS_TARGET = 2.0


RUNNER = None  # bench/rusage_run.cc, built or found by find_runner()


def find_runner(here, opmap):
    """The rusage runner: $OPMAP_BENCH_RUNNER, next to the opmap binary, or compiled now.

    A child's ru_maxrss starts at its parent's RSS at fork time, so python cannot time
    the commands itself without counting its own ~14 MB in; the runner is tiny."""
    for cand in (os.environ.get("OPMAP_BENCH_RUNNER"),
                 os.path.join(os.path.dirname(os.path.abspath(opmap)), "opmap_rusage_run")):
        if cand and os.access(cand, os.X_OK):
            return cand
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        return None
    out = os.path.join(tempfile.mkdtemp(prefix="opmap-bench-"), "opmap_rusage_run")
    rc = subprocess.call([cxx, "-O2", "-o", out, os.path.join(here, "rusage_run.cc")])
    return out if rc == 0 else None


def run_once(argv):
    """Runs argv (stdout to /dev/null) under the runner:
    (wall s, peak RSS bytes, status, CPU s)."""
    line = subprocess.run([RUNNER] + argv, check=True, stdout=subprocess.PIPE,
                          text=True).stdout.split()
    return float(line[0]), int(line[1]) * 1024, int(line[2]), float(line[3])


def uncompressed_size(path):
    if not path.endswith(".gz"):
        return os.path.getsize(path)
    n = 0
    with gzip.open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                return n
            n += len(chunk)


def measure(path, opmap, reps):
    """Interleaves floor and analyze runs; returns a dict of best times and max RSS."""
    floor_cmd = ["zcat", path] if path.endswith(".gz") else ["cat", path]
    analyze_cmd = [opmap, "analyze", path, "--format", "json", "--quiet"]
    floor_t, an_t, an_rss, floor_cpu, an_cpu = [], [], [], [], []
    status = 0
    run_once(floor_cmd)  # warm the page cache and the binary
    run_once(analyze_cmd)
    for _ in range(reps):
        t, _, _, cpu = run_once(floor_cmd)
        floor_t.append(t)
        floor_cpu.append(cpu)
        t, rss, rc, cpu = run_once(analyze_cmd)
        an_t.append(t)
        an_rss.append(rss)
        an_cpu.append(cpu)
        status = status or rc
    return {
        "floor": "zcat" if path.endswith(".gz") else "cat",
        "floor_s": min(floor_t),
        "analyze_s": min(an_t),
        "analyze_median_s": sorted(an_t)[len(an_t) // 2],
        "rss": max(an_rss),
        "floor_cpu_s": min(floor_cpu),
        "analyze_cpu_s": min(an_cpu),
        "status": status,
    }


def mb(n):
    return f"{n / 1e6:.2f} MB"


def verdict(ratio, target):
    return "ok" if ratio <= target else "MISSED"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=int(os.environ.get("OPMAP_BENCH_REPS", 5)))
    ap.add_argument("--largest-only", action="store_true", help="skip the all-traces section")
    ap.add_argument("--shared", default=os.environ.get("OPMAP_SHARED_DIR",
                                                       os.path.join(repo, "..", "shared")))
    ap.add_argument("--bin", default=os.environ.get("OPMAP_BIN",
                                                    os.path.join(repo, "build", "bin", "opmap")))
    args = ap.parse_args()

    global RUNNER
    traces_dir = os.path.join(args.shared, "traces")
    if not os.access(args.bin, os.X_OK):
        print(f"analyze_bench: no opmap binary at {args.bin} (set OPMAP_BIN or build it:"
              " cmake --build build --target opmap)", file=sys.stderr)
        return 2
    if not os.path.isdir(traces_dir):
        print(f"analyze_bench: no traces in {traces_dir} (set OPMAP_SHARED_DIR)",
              file=sys.stderr)
        return 2
    RUNNER = find_runner(here, args.bin)
    if RUNNER is None:
        print("analyze_bench: cannot build bench/rusage_run.cc (no C++ compiler); set"
              " OPMAP_BENCH_RUNNER", file=sys.stderr)
        return 2
    files = sorted(os.path.join(traces_dir, f) for f in os.listdir(traces_dir)
                   if f.endswith(".json.gz") or f.endswith(".json"))
    sizes = {f: uncompressed_size(f) for f in files}
    gz = [f for f in files if f.endswith(".json.gz")]
    if not gz:
        print(f"analyze_bench: no .json.gz traces in {traces_dir}", file=sys.stderr)
        return 2
    largest = max(gz, key=lambda f: sizes[f])

    print("# opmap analyze benchmark")
    print()
    print(f"- machine: {cpu_model()}, nproc {os.cpu_count()}"
          f" (affinity {len(os.sched_getaffinity(0))}), {platform.system()} {platform.release()}")
    print(f"- load average before the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
          " (the box is shared: wall times move with it, CPU times much less)")
    print(f"- binary: {args.bin}")
    print(f"- floor: `zcat FILE > /dev/null`; analyze: `opmap analyze FILE --format json"
          f" --quiet > /dev/null`; wall times best of {args.reps} (interleaved, after one"
          f" warm-up run each); peak RSS is the max over the runs (wait4 rusage of that"
          f" child, via {os.path.basename(RUNNER)})")
    print()

    m = measure(largest, args.bin, args.reps)
    t_ratio = m["analyze_s"] / m["floor_s"]
    r_ratio = m["rss"] / sizes[largest]
    print(f"## Largest trace: {os.path.basename(largest)}")
    print()
    print("| measure | value | target | |")
    print("|---|---:|---:|---|")
    print(f"| compressed size | {mb(os.path.getsize(largest))} | | |")
    print(f"| uncompressed JSON size | {mb(sizes[largest])} | | |")
    print(f"| zcat > /dev/null (best of {args.reps}) | {m['floor_s']:.3f} s | | |")
    print(f"| opmap analyze (best of {args.reps}) | {m['analyze_s']:.3f} s"
          f" (median {m['analyze_median_s']:.3f} s) | | |")
    print(f"| **analyze / zcat time** | **{t_ratio:.2f}x** | <= {TIME_TARGET}x |"
          f" {verdict(t_ratio, TIME_TARGET)} |")
    cpu_ratio = m["analyze_cpu_s"] / m["floor_cpu_s"]
    print(f"| CPU time (user+sys, best of {args.reps}): zcat / analyze |"
          f" {m['floor_cpu_s']:.3f} s / {m['analyze_cpu_s']:.3f} s = {cpu_ratio:.2f}x | | |")
    print(f"| opmap analyze peak RSS | {mb(m['rss'])} | | |")
    print(f"| **peak RSS / uncompressed JSON** | **{r_ratio:.2f}x** | <= {RSS_TARGET}x |"
          f" {verdict(r_ratio, RSS_TARGET)} |")
    if m["status"] != 0:
        print(f"\nNOTE: opmap analyze exited with status {m['status']} on this trace.")
    print()

    if args.largest_only:
        return 0
    print("## All traces (ascending uncompressed size)")
    print()
    print("| trace | gz | JSON | floor | floor s | analyze s | time ratio | CPU ratio |"
          " peak RSS | RSS ratio | exit |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for f in sorted(files, key=lambda f: sizes[f]):
        m = measure(f, args.bin, args.reps)
        print(f"| {os.path.basename(f)} | {mb(os.path.getsize(f))} | {mb(sizes[f])} |"
              f" {m['floor']} | {m['floor_s']:.4f} | {m['analyze_s']:.4f} |"
              f" {m['analyze_s'] / m['floor_s']:.2f}x |"
              f" {m['analyze_cpu_s'] / max(m['floor_cpu_s'], 1e-6):.2f}x | {mb(m['rss'])} |"
              f" {m['rss'] / sizes[f]:.2f}x | {m['status']} |", flush=True)
    print()
    print(f"Targets (issue): time ratio <= {TIME_TARGET}x on the largest trace, RSS ratio"
          f" <= {RSS_TARGET}x. Small traces are dominated by process start-up and the"
          " binary's fixed RSS, so their ratios are shown for the trend only.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
