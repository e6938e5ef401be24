#!/usr/bin/env python3
"""Seeds for the text and database fuzz targets, cut at fuzz time from real data.

  nsys_sqlite_fuzzer/  each ../shared/nsys/*.sqlite reduced to the tables the importer
                       reads, a few rows each (and the strings they name), page size 512
  ncu_csv_fuzzer/      each ../shared/ncu/**/*.csv cut to its preamble, header and first
                       rows (raw-page exports: the columns the importer reads plus a few)
  profile_fuzzer/      examples/*.profile, the envelope examples of docs/envelopes.md,
                       and the `key = value` literals of the profile/envelope unit tests
  config_fuzzer/       deploy/config/*.conf and tokens.example, the store URLs the docs
                       and tests use, and command lines, each behind its mode byte

The shared data never enters the repository. Deterministic.
usage: make_seeds_real.py SHARED_DIR REPO_DIR OUTDIR
"""
import csv
import io
import os
import re
import sqlite3
import sys

shared, repo, out = sys.argv[1], sys.argv[2], sys.argv[3]
written = {}


def write(fuzzer, name, data):
    d = os.path.join(out, fuzzer)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
    written[fuzzer] = written.get(fuzzer, 0) + 1


# ---- nsys: small databases with the real schema and rows -----------------------------
NSYS_TABLES = ["StringIds", "META_DATA_EXPORT", "TARGET_INFO_GPU",
               "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
               "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"]


def shrink_nsys(src, dst, offset, rows):
    s = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    have = {r[0]: r[1] for r in s.execute("SELECT name, sql FROM sqlite_master WHERE type='table'")}
    if os.path.exists(dst):
        os.remove(dst)
    d = sqlite3.connect(dst)
    d.execute("PRAGMA page_size = 512")
    referenced = set()
    kernels_corr = set()
    for t in NSYS_TABLES[1:] + ["StringIds"]:  # StringIds last: the ids the rows name
        if t not in have:
            continue
        d.execute(have[t])
        cols = [c[1] for c in s.execute(f"PRAGMA table_info({t})")]
        if t == "StringIds":
            ids = sorted(referenced)
            sel = [r for i in range(0, len(ids), 500) for r in s.execute(
                f"SELECT * FROM StringIds WHERE id IN ({','.join('?' * len(ids[i:i + 500]))})",
                ids[i:i + 500])]
        elif t == "CUPTI_ACTIVITY_KIND_RUNTIME" and kernels_corr:
            c = sorted(kernels_corr)
            sel = list(s.execute(f"SELECT * FROM {t} WHERE correlationId IN "
                                 f"({','.join('?' * len(c))}) LIMIT {rows * 2}", c))
        else:
            order = " ORDER BY start" if "start" in cols else ""
            sel = list(s.execute(f"SELECT * FROM {t}{order} LIMIT {rows} OFFSET {offset}"))
            if not sel and offset:
                sel = list(s.execute(f"SELECT * FROM {t}{order} LIMIT {rows}"))
        for r in sel:
            for v in r:
                if isinstance(v, int):
                    referenced.add(v)
            if t == "CUPTI_ACTIVITY_KIND_KERNEL" and "correlationId" in cols:
                kernels_corr.add(r[cols.index("correlationId")])
        if sel:
            d.executemany(f"INSERT INTO {t} VALUES ({','.join('?' * len(cols))})", sel)
    d.commit()
    d.execute("VACUUM")
    d.close()
    s.close()
    with open(dst, "rb") as f:
        data = f.read()
    os.remove(dst)
    return data


nsys_dir = os.path.join(shared, "nsys")
for fname in sorted(os.listdir(nsys_dir)) if os.path.isdir(nsys_dir) else []:
    if not fname.endswith(".sqlite"):
        continue
    stem = fname[:-len(".sqlite")]
    for i, (offset, rows) in enumerate([(0, 12), (200, 8), (1000, 24)]):
        tmp = os.path.join(out, f".{stem}.tmp.sqlite")
        os.makedirs(out, exist_ok=True)
        write("nsys_sqlite_fuzzer", f"{stem}_{i}.sqlite", shrink_nsys(
            os.path.join(nsys_dir, fname), tmp, offset, rows))

# ---- ncu: header and first rows --------------------------------------------------------
NCU_KEEP = re.compile(r"^(ID|Kernel Name|Device|Stream|Process|Context|Block Size|Grid Size|"
                      r"gpu__time_duration|dram__bytes|sm__sass_thread_inst_executed_op|"
                      r"sm__cycles_elapsed|.*throughput\.avg\.pct_of_peak_sustained_elapsed|"
                      r"smsp__average_warps_issue_stalled_)")


def cut_ncu(text, first_row, rows):
    lines = text.splitlines(keepends=True)
    pre = [l for l in lines[:8] if l.startswith("==")]
    body = [l for l in lines if not l.startswith("==") and l.strip()]
    if not body:
        return None
    header = next(csv.reader([body[0]]))
    if header and header[0] == "ID" and "Metric Name" not in header:
        # ncu --page raw: one column per metric; keep the ones the importer reads + a few.
        keep = [i for i, h in enumerate(header) if NCU_KEEP.match(h)] + list(range(8, 40, 4))
        keep = sorted(set(i for i in keep if i < len(header)))
        table = list(csv.reader(body))
        sel = table[:2] + table[2 + first_row:2 + first_row + rows]
        buf = io.StringIO()
        w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for r in sel:
            w.writerow([r[i] if i < len(r) else "" for i in keep])
        return "".join(l[:300] + ("\n" if len(l) > 300 else "") for l in pre) + buf.getvalue()
    data = body[1 + first_row:1 + first_row + rows] or body[1:1 + rows]
    return "".join(pre) + body[0] + "".join(data)


ncu_dir = os.path.join(shared, "ncu")
for root, _, files in sorted(os.walk(ncu_dir)) if os.path.isdir(ncu_dir) else []:
    for fname in sorted(files):
        if not fname.endswith(".csv") or fname.endswith(".reference.csv"):
            continue
        if "kernel_00" in fname and not fname.startswith(("kernel_0001", "kernel_0007")):
            continue  # two of the twenty details exports are enough
        with open(os.path.join(root, fname), encoding="utf-8", errors="replace") as f:
            text = f.read()
        stem = fname[:-4]
        for i, (first, rows) in enumerate([(0, 16), (100, 8)] if "raw" not in fname
                                          else [(0, 2), (1, 3)]):
            seed = cut_ncu(text, first, rows)
            if seed and len(seed) <= 60 * 1024:
                write("ncu_csv_fuzzer", f"{stem}_{i}.csv", seed)


# ---- profiles and envelopes --------------------------------------------------------------
def raw_literals(path):
    with open(path, encoding="utf-8") as f:
        return re.findall(r'R"\((.*?)\)"', f.read(), re.S)


for root in ["examples"]:
    for dirpath, _, files in sorted(os.walk(os.path.join(repo, root))):
        for fname in sorted(files):
            if fname.endswith(".profile"):
                with open(os.path.join(dirpath, fname), "rb") as f:
                    write("profile_fuzzer", fname, f.read())
with open(os.path.join(repo, "docs", "envelopes.md"), encoding="utf-8") as f:
    blocks = re.findall(r"```\n(.*?)```", f.read(), re.S)
for i, b in enumerate(x for x in blocks if "=" in x):
    write("profile_fuzzer", f"envelopes_md_{i}.envelope", b)
for test in ["tests/unit/release/workload_profile_test.cc", "tests/unit/mfu/hardware_envelope_test.cc"]:
    p = os.path.join(repo, test)
    if os.path.exists(p):
        for i, lit in enumerate(l for l in raw_literals(p) if "=" in l):
            write("profile_fuzzer", f"{os.path.basename(test)[:-3]}_{i}.txt", lit)

# ---- configs, tokens, store URLs, command lines -----------------------------------------
MODE = {"collector": b"\x00", "agent": b"\x01", "tokens": b"\x02", "url": b"\x03",
        "args": b"\x04", "values": b"\x05"}
cfg = os.path.join(repo, "deploy", "config")
for fname, mode in [("collector.conf", "collector"), ("agent.conf", "agent"),
                    ("tokens.example", "tokens")]:
    p = os.path.join(cfg, fname)
    if os.path.exists(p):
        with open(p, "rb") as f:
            write("config_fuzzer", fname, MODE[mode] + f.read())
urls = set()
for top in ["docs", "tests/unit/store", "tests/unit/collector", "deploy"]:
    for dirpath, _, files in os.walk(os.path.join(repo, top)):
        for fname in files:
            try:
                with open(os.path.join(dirpath, fname), encoding="utf-8") as f:
                    urls.update(re.findall(r'(?:clickhouse://|sqlite:)[^"`\'\s)\\]+', f.read()))
            except (UnicodeDecodeError, IsADirectoryError):
                pass
for i, u in enumerate(sorted(urls)[:40]):
    write("config_fuzzer", f"url_{i}.txt", MODE["url"] + u.encode())
write("config_fuzzer", "args_collector.txt", MODE["args"] +
      b"--listen\n127.0.0.1:7700\n--store=sqlite:/tmp/x.db\n--insecure-no-auth\n--raw-retention\n7d")
write("config_fuzzer", "args_agent.txt", MODE["args"] +
      b"--collector=h:7700\n--insecure\n--capture-window\n2s\n--spool-size=64MiB")
for i, v in enumerate(["1h30m", "500ms", "64MiB", "[::1]:7700", "true", "7d"]):
    write("config_fuzzer", f"value_{i}.txt", MODE["values"] + v.encode())

for k in sorted(written):
    print(f"make_seeds_real.py: {written[k]} seeds in {os.path.join(out, k)}")
