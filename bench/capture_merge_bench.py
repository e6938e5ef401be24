#!/usr/bin/env python3
"""opmap analyze REPLAY --capture DIR against its baseline of the same run: analyze of the
replay alone plus analyze of each capture trace alone (every input read and summarized
once). Target: the merged run takes at most 1.25x that baseline. Also at scale:
the replay repeated K times in time (bench/replicate_trace.py: K steps, K graph launches),
so the per-launch part of the merge (match lookup, copies) shows beside the fixed part
(reading the captures). Best of --reps runs each; wall and CPU seconds and peak RSS of the
analyze process alone (bench/rusage_run.cc). See docs/benchmarks.md.

usage: bench/capture_merge_bench.py [--reps N] [--copies K]
env:   OPMAP_BIN (default <repo>/build/bin/opmap), OPMAP_SHARED_DIR (default <repo>/../shared)
Exit status 0 whatever the figures (a benchmark, not a test).
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze_bench  # noqa: E402  (find_runner, run_once, cpu_model, verdict)

CASES = [
    ("vllm_decode_full", "graph_execution.json.gz"),
    ("sglang_decode", "sglang_Qwen3-8B_decode.json.gz"),
]
TARGET = 1.25


def best(argv, reps):
    analyze_bench.run_once(argv)  # warm the page cache and the binary
    runs = [analyze_bench.run_once(argv) for _ in range(reps)]
    return min(r[0] for r in runs), min(r[3] for r in runs), max(r[1] for r in runs)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--copies", type=int, default=100)
    args = p.parse_args()
    opmap = os.environ.get("OPMAP_BIN", os.path.join(repo, "build", "bin", "opmap"))
    shared = os.environ.get("OPMAP_SHARED_DIR", os.path.join(repo, "..", "shared"))
    analyze_bench.RUNNER = analyze_bench.find_runner(here, opmap)
    if analyze_bench.RUNNER is None:
        print("unavailable: no C++ compiler for bench/rusage_run.cc")
        return 0
    print(f"cpu: {analyze_bench.cpu_model()}; best of {args.reps}; target merged <= {TARGET}x baseline")
    work = tempfile.mkdtemp(prefix="opmap-merge-bench-")
    for case, replay_name in CASES:
        folder = os.path.join(shared, "traces", "inference", case)
        replay = os.path.join(folder, replay_name)
        capture_dir = os.path.join(folder, "capture_traces")
        if not os.path.exists(replay):
            print(f"{case}: skipped: {replay} not found")
            continue
        captures = sorted(c for c in glob.glob(os.path.join(capture_dir, "*.json*"))
                          if os.path.basename(c) != "execution_details.json")
        repeated = os.path.join(work, f"{case}_x{args.copies}.json.gz")
        subprocess.run([sys.executable, os.path.join(here, "replicate_trace.py"), replay,
                        str(args.copies), repeated], check=True, stdout=subprocess.DEVNULL)
        for label, path in (("x1", replay), (f"x{args.copies}", repeated)):
            base = [opmap, "analyze", path, "--format", "json", "--quiet"]
            plain_t, plain_cpu, _ = best(base, args.reps)
            cap_t = cap_cpu = 0.0
            for c in captures:
                t, cpu, _ = best([opmap, "analyze", c, "--format", "json", "--quiet"], args.reps)
                cap_t, cap_cpu = cap_t + t, cap_cpu + cpu
            merged_t, merged_cpu, rss = best(base + ["--capture", capture_dir], args.reps)
            baseline, baseline_cpu = plain_t + cap_t, plain_cpu + cap_cpu
            ratio, cpu_ratio = merged_t / baseline, merged_cpu / baseline_cpu
            print(f"{case} {label}: wall: analyze {plain_t:.3f} s + captures alone {cap_t:.3f} s"
                  f" = {baseline:.3f} s; --capture {merged_t:.3f} s: {ratio:.2f}x"
                  f" [{analyze_bench.verdict(ratio, TARGET)}]; CPU: {baseline_cpu:.3f} s vs"
                  f" {merged_cpu:.3f} s: {cpu_ratio:.2f}x [{analyze_bench.verdict(cpu_ratio, TARGET)}];"
                  f" peak RSS {rss / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
