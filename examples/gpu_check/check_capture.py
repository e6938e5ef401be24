#!/usr/bin/env python3
"""Compares what gpu_check launched with what opmap captured (run_gpu_check.sh calls this).

Inputs: gpu_check's JSON line from a run without the injection library (--baseline) and one
with it (--launched), and `opmap analyze CAPTURE --format json --launches` (--report).
Prints one PASS/FAIL/SKIP line per check, writes them all to --out as JSON, exits 1 if any
failed. Report fields read (docs/analyze-json.md): launches[] (name, kind, grid, block,
start_ns, end_ns, operator, rule) and stalls.kernels[] (name, memory_stall_fraction).
"""
import argparse
import json
import re
import sys


def load_json(path):
    """First JSON object in a file (analyze prints JSON Lines, one object per trace)."""
    with open(path) as f:
        for line in f:
            if line.strip():
                return json.loads(line)
    raise ValueError(f"{path}: empty")


def base_name(kernel_name):
    """'void gemm_tiled_fp32_kernel(const float*, ...)' -> 'gemm_tiled_fp32_kernel'."""
    name = kernel_name.split("(")[0].strip()
    return name.split()[-1] if name else name


def dims(value):
    """[x,y,z] or {"x":..,"y":..,"z":..} -> (x, y, z)."""
    if isinstance(value, dict):
        return (int(value.get("x", 1)), int(value.get("y", 1)), int(value.get("z", 1)))
    return tuple(int(v) for v in value)


def kernel_instances(report):
    """One entry per captured kernel launch (report["launches"], kind "kernel")."""
    if "launches" not in report:
        raise KeyError("the report has no launches[]: run opmap analyze with --launches")
    out = []
    for k in report["launches"]:
        if k.get("kind", "kernel") != "kernel":
            continue  # memcpy/memset of the setup phase
        missing = [f for f in ("name", "grid", "block", "start_ns", "end_ns") if f not in k]
        if missing:
            raise KeyError(f"launches[] entry lacks {missing}")
        out.append({
            "name": base_name(k["name"]),
            "grid": dims(k["grid"]),
            "block": dims(k["block"]),
            "start_ns": int(k["start_ns"]),
            "end_ns": int(k["end_ns"]),
            "operator": k.get("operator") or "",
            "rule": k.get("rule") or "",
        })
    return out


def memory_stall_fraction(report, kernel):
    """Per-kernel memory-stall fraction (docs/metrics.md) from report["stalls"]["kernels"][];
    None when the report has none for this kernel (or nothing stalled: null)."""
    for k in report.get("stalls", {}).get("kernels", []):
        if base_name(k.get("name", "")) == kernel and k.get("memory_stall_fraction") is not None:
            return float(k["memory_stall_fraction"])
    return None


class Checks:
    def __init__(self):
        self.rows = []

    def add(self, name, status, detail):
        self.rows.append({"check": name, "status": status, "detail": detail})
        print(f"{status:4} {name}: {detail}")

    def check(self, name, ok, detail):
        self.add(name, "PASS" if ok else "FAIL", detail)

    def failed(self):
        return any(r["status"] == "FAIL" for r in self.rows)


def range_name(message):
    """'gpu_check::gemm{flops=..,bytes=..}' -> 'gpu_check::gemm'."""
    return re.sub(r"\{.*\}$", "", message)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="gpu_check JSON, run without the library")
    ap.add_argument("--launched", required=True, help="gpu_check JSON, run with the library")
    ap.add_argument("--report", help="opmap analyze --format json of the capture (omit: skip)")
    ap.add_argument("--skip-reason", default="", help="why --report is missing")
    ap.add_argument("--max-overhead", type=float, default=1.5,
                    help="largest allowed with/without ratio of gemm+triad wall time")
    ap.add_argument("--tolerance-ns", type=int, default=50_000,
                    help="slack on the host-clock window (CUPTI vs clock_gettime skew)")
    ap.add_argument("--out", required=True, help="checks JSON written here")
    a = ap.parse_args()

    c = Checks()
    base, run = load_json(a.baseline), load_json(a.launched)
    c.check("results verified", base["verified"] and run["verified"],
            f"without library {base['verified']}, with library {run['verified']}")
    ext = run["external_correlation"]
    c.check("external correlation pushed", not ext["cupti"].startswith("unavailable")
            and ext["push_pop_failures"] == 0,
            f"cupti {ext['cupti']!r}, push/pop failures {ext['push_pop_failures']}")

    timed = ("gemm", "triad")
    wall = {name: sum(p["wall_s"] for p in doc["phases"] if p["name"] in timed)
            for name, doc in (("without", base), ("with", run))}
    ratio = wall["with"] / wall["without"] if wall["without"] > 0 else float("inf")
    c.check("tracing overhead", ratio <= a.max_overhead,
            f"gemm+triad wall {wall['with']:.4f} s with / {wall['without']:.4f} s without "
            f"= {ratio:.3f} (limit {a.max_overhead})")

    if not a.report:
        c.add("capture analysis", "SKIP", a.skip_reason or "no report given")
    else:
        report = load_json(a.report)
        try:
            kernels = kernel_instances(report)
        except KeyError as e:
            kernels = None
            c.check("report has per-launch kernels", False, str(e))
        if kernels is not None:
            check_kernels(c, run["phases"], kernels, a.tolerance_ns)
            gemm = memory_stall_fraction(report, "gemm_tiled_fp32_kernel")
            triad = memory_stall_fraction(report, "triad_elementwise_kernel")
            if gemm is None or triad is None:
                why = report.get("stalls", {}).get("unavailable", "no row for the kernel")
                c.check("memory stalls: triad > gemm", False,
                        f"no memory_stall_fraction in the report (gemm {gemm}, triad {triad}; "
                        f"OPMAP_STALLS=1 was set): {why}")
            else:
                c.check("memory stalls: triad > gemm", triad > gemm,
                        f"triad {triad:.3f}, gemm {gemm:.3f}")

    with open(a.out, "w") as f:
        json.dump({"checks": c.rows, "overhead_ratio": ratio, "wall_s": wall}, f, indent=1)
    return 1 if c.failed() else 0


def check_kernels(c, phases, kernels, tol):
    """Every launch captured once, with its grid/block, inside its phase's host window and
    mapped to its NVTX range; no kernel the program did not launch."""
    unmatched = list(kernels)
    for p in phases:
        key = (p["kernel"], dims(p["grid"]), dims(p["block"]))
        lo, hi = p["window_start_ns"] - tol, p["window_end_ns"] + tol
        # Same kernel and dims can appear in two phases (fill); the host window tells them apart.
        mine = [k for k in unmatched if (k["name"], k["grid"], k["block"]) == key
                and lo <= k["start_ns"] <= k["end_ns"] <= hi]
        for k in mine:
            unmatched.remove(k)
        c.check(f"{p['name']}: every launch captured with its grid/block in its window",
                len(mine) == p["launches"],
                f"{len(mine)} of {p['launches']} {p['kernel']} grid {list(key[1])} "
                f"block {list(key[2])} in [{lo}, {hi}]")
        wrong = [k["operator"] for k in mine
                 if k["operator"] != p["range"] and range_name(k["operator"]) != range_name(p["range"])]
        c.check(f"{p['name']}: mapped to its NVTX range", not wrong and mine,
                f"expected {p['range']!r}; {len(wrong)} mapped elsewhere "
                f"{sorted(set(wrong))[:3]}")
        if p.get("rule"):
            # Graph replays: placed in the capture-time range (OPMAP_GRAPH_NODES=1), not in
            # the annotation around the graph launch.
            rules = sorted({k["rule"] for k in mine})
            c.check(f"{p['name']}: mapped by rule {p['rule']}", mine and rules == [p["rule"]],
                    f"rules {rules}")
    c.check("no unexpected kernels (name, dims or timestamps off)", not unmatched,
            f"{len(unmatched)} captured kernels match no launch: "
            + ", ".join(f"{k['name']} grid {list(k['grid'])} block {list(k['block'])} "
                        f"[{k['start_ns']}, {k['end_ns']}]" for k in unmatched[:5]))


if __name__ == "__main__":
    sys.exit(main())
