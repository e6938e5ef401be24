#!/usr/bin/env python3
"""Matches the request ranges a collector stored against the requests the demo served.

usage: match_requests.py REQUEST_LOG EXPORT_JSON PID

REQUEST_LOG is opmap-demo-infer --request-log output: per request its id and CLOCK_REALTIME
readings just before and after the NVTX calls that started and ended its range, then the
injected ns (ignored here).
EXPORT_JSON is `opmap export` output (Chrome trace JSON; ts and dur in microseconds with
nanosecond decimals). PID is the demo's process id: only its ranges named "request" count.

A stored range is a request's when its start lies in the request's start bracket and its
end in its end bracket. The capture windows are recovered from the stored ranges (a gap
of more than GAP_NS between one range's end and the next one's start separates two
windows). Checks, each failure printed:
  - every stored request range belongs to exactly one demo request (nothing forged or
    altered);
  - no demo request is stored twice (exactly once);
  - every demo request that started and ended inside a window is stored (nothing lost).
Prints one summary line; exit 0 when every check holds, 1 otherwise, 2 for bad input.
"""
import bisect
import json
import sys
from decimal import Decimal

GAP_NS = 250_000_000


def micros_to_ns(value):
    return int(Decimal(str(value)) * 1000)


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    log_path, export_path, pid = argv[1], argv[2], int(argv[3])
    requests = []  # (start_before, start_after, end_before, end_after, id)
    with open(log_path) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            fields = line.split()
            if len(fields) != 6:
                print(f"{log_path}:{n}: expected 6 fields, got {len(fields)}", file=sys.stderr)
                return 2
            rid, sb, sa, eb, ea, _ = (int(x) for x in fields)
            requests.append((sb, sa, eb, ea, rid))
    requests.sort()
    starts = [r[0] for r in requests]

    with open(export_path) as f:
        doc = json.load(f, parse_float=Decimal)
    stored = []
    for ev in doc.get("traceEvents", []):
        if ev.get("ph") == "X" and ev.get("name") == "request" and ev.get("pid") == pid:
            start = micros_to_ns(ev["ts"])
            stored.append((start, start + micros_to_ns(ev["dur"])))
    stored.sort()

    failures = []
    matched = {}  # request id -> times stored
    for start, end in stored:
        # Candidates: requests whose start bracket can hold `start`.
        i = bisect.bisect_right(starts, start)
        hits = [r for r in requests[max(0, i - 64):i]
                if r[0] <= start <= r[1] and r[2] <= end <= r[3]]
        if len(hits) != 1:
            failures.append(f"stored range [{start}, {end}] ns matches {len(hits)} requests")
            continue
        rid = hits[0][4]
        matched[rid] = matched.get(rid, 0) + 1
    for rid, times in sorted(matched.items()):
        if times > 1:
            failures.append(f"request {rid} stored {times} times")

    windows = []
    for start, end in stored:
        if windows and start - windows[-1][1] <= GAP_NS:
            windows[-1][1] = max(windows[-1][1], end)
        else:
            windows.append([start, end])
    expected = 0
    for lo, hi in windows:
        for sb, sa, eb, ea, rid in requests[bisect.bisect_left(starts, lo):]:
            if sb > hi:
                break
            if ea <= hi:
                expected += 1
                if rid not in matched:
                    failures.append(f"request {rid} ran inside window [{lo}, {hi}] ns and "
                                    f"is not stored")
    for line in failures[:20]:
        print("  " + line)
    if len(failures) > 20:
        print(f"  ... and {len(failures) - 20} more")
    print(f"requests: {len(requests)} served, {len(windows)} windows, {expected} inside them, "
          f"{len(stored)} stored, {len(matched)} matched once or more, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
