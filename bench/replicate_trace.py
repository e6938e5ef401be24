#!/usr/bin/env python3
"""Writes a PyTorch-profiler (Kineto) trace repeated N times in time, gzipped.

Copy k of every event is shifted by k x (the trace's span + 1 ms) and its ids (correlation,
External id, Python ids, flow ids, Ev Idx) offset by k x (largest id + 1), so the copies
never overlap in time nor join each other's launches: an analyzer must find N times every
count and sum of the original. Metadata events (ph "M") and the other top-level keys are
written once. Numbers are kept as written (decimal arithmetic: the ns digits of a ts stay
exact), and each event is serialized once, as a template, then filled per copy.

usage: bench/replicate_trace.py TRACE.json[.gz] COPIES OUT.json.gz [--level 1]
"""
import argparse
import decimal
import gzip
import json
import subprocess
import sys

ID_ARGS = ("correlation", "External id", "Python id", "Python parent id", "Ev Idx",
           "Record function id")
FLOW_PHASES = ("s", "t", "f")
SLOT = "\x00opmap-slot\x00"


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=decimal.Decimal)


class Template:
    """An event's JSON text with a slot per number: the constant ones hold their text, the
    time and id slots are filled per copy."""

    def __init__(self, event, id_keys):
        self.values = []   # per slot: str (constant) or (kind, base) to shift
        def walk(x, path):
            if isinstance(x, dict):
                return {k: walk(v, path + (k,)) for k, v in x.items()}
            if isinstance(x, list):
                return [walk(v, path) for v in x]
            if isinstance(x, bool) or not isinstance(x, (int, decimal.Decimal)):
                return x
            if path == ("ts",):
                self.values.append(("ts", x))
            elif path in id_keys:
                self.values.append(("id", x) if isinstance(x, int) else str(x))
            else:
                self.values.append(str(x))
            return SLOT
        text = json.dumps(walk(event, ()), ensure_ascii=False, separators=(",", ":"))
        self.parts = text.split(json.dumps(SLOT))
        assert len(self.parts) == len(self.values) + 1

    def fill(self, ts_shift, id_shift):
        out = [self.parts[0]]
        for value, part in zip(self.values, self.parts[1:]):
            if isinstance(value, str):
                out.append(value)
            elif value[0] == "ts":
                out.append(str(value[1] + ts_shift))
            else:
                out.append(str(value[1] + id_shift))
            out.append(part)
        return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("copies", type=int)
    ap.add_argument("out")
    ap.add_argument("--level", type=int, default=1, help="gzip level (default 1: fast)")
    args = ap.parse_args()
    if args.copies < 1:
        sys.exit("replicate_trace.py: COPIES must be >= 1")
    doc = load(args.trace)
    events = doc if isinstance(doc, list) else doc.get("traceEvents")
    if not isinstance(events, list):
        sys.exit(f"replicate_trace.py: {args.trace}: no traceEvents array")
    begin, end, max_id = None, None, 0
    for e in events:
        if not isinstance(e, dict) or e.get("ph") == "M":
            continue
        ts = e.get("ts")
        if isinstance(ts, (int, decimal.Decimal)) and not isinstance(ts, bool):
            dur = e.get("dur", 0)
            dur = dur if isinstance(dur, (int, decimal.Decimal)) else 0
            begin = ts if begin is None else min(begin, ts)
            end = ts + dur if end is None else max(end, ts + dur)
        a = e.get("args")
        if isinstance(a, dict):
            for k in ID_ARGS:
                if isinstance(a.get(k), int):
                    max_id = max(max_id, a[k])
        if e.get("ph") in FLOW_PHASES and isinstance(e.get("id"), int):
            max_id = max(max_id, e["id"])
    if begin is None:
        sys.exit(f"replicate_trace.py: {args.trace}: no timed event")
    period = (end - begin) + 1000  # µs: the copies 1 ms apart
    id_step = max_id + 1
    id_keys = {("args", k) for k in ID_ARGS} | {("id",)}
    metadata = [e for e in events if isinstance(e, dict) and e.get("ph") == "M"]
    timed = [Template(e, id_keys) for e in events if not (isinstance(e, dict) and e.get("ph") == "M")]
    rest = {} if isinstance(doc, list) else {k: v for k, v in doc.items() if k != "traceEvents"}

    with open(args.out, "wb") as sink:
        gz = subprocess.Popen(["gzip", f"-{args.level}", "-c"], stdin=subprocess.PIPE, stdout=sink)
        w = gz.stdin
        w.write(b'{"traceEvents":[')
        first = True
        for e in metadata:
            w.write((b"" if first else b",") + Template(e, set()).fill(0, 0).encode())
            first = False
        for k in range(args.copies):
            chunk = ",".join(t.fill(k * period, k * id_step) for t in timed)
            w.write((b"" if first else b",") + chunk.encode())
            first = False
        w.write(b"]")
        for key, value in rest.items():
            w.write(b"," + json.dumps(key).encode() + b":" + Template(value, set()).fill(0, 0).encode())
        w.write(b"}")
        w.close()
        if gz.wait() != 0:
            sys.exit("replicate_trace.py: gzip failed")


if __name__ == "__main__":
    main()
