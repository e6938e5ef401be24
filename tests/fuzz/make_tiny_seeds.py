#!/usr/bin/env python3
"""Writes the tiny synthetic seeds committed under tests/fuzz/seeds/<fuzzer>/ (each at most
4 KiB; fuzz_replay runs them in the normal build, run_all.sh adds them to the corpora).

The batch, ring and capture seeds come from fuzz_seed_tool run on a two-kernel Kineto
trace written here, so they are in exactly the targets' formats; the others are written
directly. Rerun after a format change:
    tests/fuzz/make_tiny_seeds.py build-fuzz/fuzz/fuzz_seed_tool
"""
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
seeds = os.path.join(here, "seeds")
tool = sys.argv[1] if len(sys.argv) > 1 else None


def write(fuzzer, name, data):
    d = os.path.join(seeds, fuzzer)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    assert len(data) <= 4096, (fuzzer, name, len(data))
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# A Kineto trace: a step, an operator, its launch, the kernel (same correlation), a memcpy.
trace = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}],
         "traceEvents": [
             {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 7, "tid": 7,
              "ts": 100, "dur": 60},
             {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 105,
              "dur": 20, "args": {"External id": 3, "Input Dims": [[64, 32], [32, 16]]}},
             {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7,
              "ts": 110, "dur": 5, "args": {"correlation": 11, "External id": 3}},
             {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_64x32_nn", "pid": 0, "tid": 7,
              "ts": 120, "dur": 8, "args": {"device": 0, "stream": 7, "correlation": 11,
                                             "grid": [4, 1, 1], "block": [128, 1, 1]}},
             {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 7, "tid": 7,
              "ts": 130, "dur": 4, "args": {"correlation": 12}},
             {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)",
              "pid": 0, "tid": 7, "ts": 136, "dur": 3,
              "args": {"device": 0, "stream": 7, "correlation": 12, "bytes": 4096}},
         ]}
tiny_trace = json.dumps(trace, separators=(",", ":"))
write("kineto_importer_fuzzer", "tiny_step.json", tiny_trace)
write("kineto_importer_fuzzer", "tiny_array.json", json.dumps(trace["traceEvents"][2:4]))

if tool:
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "shared", "traces"))
        with open(os.path.join(tmp, "shared", "traces", "tiny.json"), "w") as f:
            f.write(tiny_trace)
        subprocess.run([tool, os.path.join(tmp, "shared"), os.path.join(tmp, "out")], check=True,
                       stdout=subprocess.DEVNULL)
        for fuzzer in ["batch_ingest_fuzzer", "ring_reader_fuzzer", "capture_file_fuzzer"]:
            src = os.path.join(tmp, "out", fuzzer)
            for name in sorted(os.listdir(src))[:2]:
                with open(os.path.join(src, name), "rb") as f:
                    write(fuzzer, name, f.read())

# Registration: a hello (HelloBody + metadata; one fd attached), a window-done, a status.
meta = b"model=tiny\npid=7\n"
hello_body = struct.pack("<IIQII", 2, 7, 65536, 3, len(meta)) + meta  # ring::kVersion
frame = lambda t, body: struct.pack("<IHHII", 0x434D504F, t, 0, len(body), 0) + body
done = struct.pack("<QqqQQ", 1, 100, 200, 5, 0)
status = struct.pack("<HHI", 2, 1, 9) + b"no driver"
write("control_message_fuzzer", "hello_window.bin",
      b"\x00\x01" + frame(1, hello_body) + frame(5, done) + frame(7, status))
write("control_message_fuzzer", "hello_no_fd.bin", b"\x00\x00" + frame(1, hello_body))
write("control_message_fuzzer", "attach.txt", b"\x01attach pid=42 duration_ms=2000 stalls=1\n")
write("control_message_fuzzer", "status.txt", b"\x01status json\n")
write("control_message_fuzzer", "answer.txt",
      b"\x02outcome=captured pid=42 window_ms=2000 records=9 drops=0 counters_len=0 message=ok")

# Nsight Systems: the importer's tables (every seed has these three), small pages.
NSYS_TABLES = """
  CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, streamId INT,
    correlationId INT, globalPid INT, demangledName INT, shortName INT, gridX INT,
    gridY INT, gridZ INT, blockX INT, blockY INT, blockZ INT, registersPerThread INT,
    staticSharedMemory INT, dynamicSharedMemory INT, graphId INT, graphNodeId INT);
  CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INT, end INT, globalTid INT,
    correlationId INT, nameId INT);
"""


def nsys_seed(name, sql):
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, name)
        c = sqlite3.connect(db)
        c.execute("PRAGMA page_size = 512")
        c.executescript(NSYS_TABLES + sql)
        c.commit()
        c.execute("VACUUM")
        c.close()
        with open(db, "rb") as f:
            data = f.read()
    if len(data) <= 4096:
        write("nsys_sqlite_fuzzer", name, data)
    else:
        print(f"make_tiny_seeds.py: nsys seed {name} is {len(data)} bytes; not written",
              file=sys.stderr)


# Two kernels, their launches and an NVTX range.
nsys_seed("tiny.sqlite", """
  CREATE TABLE NVTX_EVENTS (start INT, end INT, eventType INT, text TEXT, textId INT,
    globalTid INT);
  INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'cudaLaunchKernel'), (3, 'layer1');
  INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
    (1000, 1500, 0, 7, 11, 117440512, 1, 1, 4,1,1, 128,1,1, 32, 0, 0, NULL, NULL),
    (1600, 1900, 0, 7, 12, 117440512, 1, 1, 4,1,1, 128,1,1, 32, 0, 0, 5, 9);
  INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
    (900, 950, 117440519, 11, 2), (1550, 1580, 117440519, 12, 2);
  INSERT INTO NVTX_EVENTS VALUES (800, 2000, 59, NULL, 3, 117440519);
""")
# --cuda-graph-trace=node: a graph captured (two nodes created in captured launches),
# instantiated (cloned) and replayed once; no NVTX table, to stay within 4 KiB.
nsys_seed("graph_nodes.sqlite", """
  CREATE TABLE CUDA_GRAPH_NODE_EVENTS (start INT, end INT, globalTid INT,
    graphNodeId INT, originalGraphNodeId INT);
  INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'cudaLaunchKernel'),
    (4, 'cudaStreamBeginCapture'), (5, 'cudaStreamEndCapture'), (6, 'cudaGraphLaunch');
  INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 110, 117440519, 1, 4),
    (200, 210, 117440519, 2, 2), (300, 310, 117440519, 3, 2), (400, 410, 117440519, 4, 5),
    (1000, 1020, 117440519, 5, 6);
  INSERT INTO CUDA_GRAPH_NODE_EVENTS VALUES (205, 205, 117440519, 11, NULL),
    (305, 305, 117440519, 12, NULL), (500, 500, 117440519, 21, 11),
    (501, 501, 117440519, 22, 12);
  INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
    (1100, 1200, 0, 7, 5, 117440512, 1, 1, 4,1,1, 128,1,1, 32, 0, 0, 3, 21),
    (1200, 1300, 0, 7, 5, 117440512, 1, 1, 4,1,1, 128,1,1, 32, 0, 0, 3, 22);
""")

# Nsight Compute: one file per layout.
write("ncu_csv_fuzzer", "raw.csv",
      '"ID","Kernel Name","Device","Stream","gpu__time_duration.sum","dram__bytes_read.sum",'
      '"dram__bytes_write.sum","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"\n'
      '"","","","","nsecond","Kbyte","Kbyte","ratio"\n'
      '"0","gemm_kernel","0","7","1,234","12.5","4","3.5"\n'
      '"1","relu_kernel","0","7","n/a","1","1","0.25"\n')
write("ncu_csv_fuzzer", "details.csv",
      '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
      '"0","gemm_kernel","GPU Speed Of Light Throughput","Duration","usecond","1.50"\n'
      '"0","gemm_kernel","GPU Speed Of Light Throughput","DRAM Throughput","%","40.2"\n'
      '"1","relu_kernel","GPU Speed Of Light Throughput","Duration","nsecond","800"\n')
write("ncu_csv_fuzzer", "monai.csv",
      "kernel_name,gpu_time_duration_ns,stall_long_scoreboard_ratio,stall_branch_ratio\n"
      "conv_kernel,1500,2.5,0.1\nbn_kernel,300,0.5,0.05\n")

# Profiles and envelopes.
write("profile_fuzzer", "tiny.profile",
      "model = tiny\nparameters = 7.5B\nlayers = 2\nheads = 4\nhead_dim = 32\nhidden = 128\n"
      "kv_heads = 2\nprecision = bf16\nprefill_tokens = 32\ndecode_tokens = 8\nbatch = 2\n"
      "phase_mix = prefill=0.3,decode=0.7\nsla_p99_ms = 50\nquality_metric = acc\n"
      "quality.r1 = 0.9\nprecision.r2 = fp8\nsparsity.r2 = 2:4\n")
write("profile_fuzzer", "tiny.envelope",
      "base = NVIDIA H100\nname = H100 capped\nbf16_tflops = 700\nfp8_tflops = none\n"
      "power_mode = 500 W cap\n")

# Configs (mode byte first: 0 collector, 1 agent, 2 tokens, 3 URL, 4 args, 5 values).
write("config_fuzzer", "collector.conf",
      b"\x00listen = 127.0.0.1:7700\nstore = \"sqlite:/tmp/opmap.db\"\ntokens = /etc/t\n"
      b"raw-retention = 7d  # a week\nmax-streams = 10\nmax-streams-per-token = 5\n")
write("config_fuzzer", "agent.conf",
      b"\x01collector = h:7700\ninsecure = true\ncapture-window = 2s\ncapture-every = 1m\n"
      b"spool-size = 64MiB\ncapture-jitter = 0.1\n")
write("config_fuzzer", "tokens.txt",
      b"\x02# token role name\n0123456789abcdef0123 agent node-a agents=fleet-*\n"
      b"fedcba9876543210fedc analyst alice\nabcdefabcdefabcdefab admin root cert=ops\n")
write("config_fuzzer", "url_clickhouse.txt",
      b"\x03clickhouse://h1:8123,[::1]:9000/opmap?user=u&password=hunter22&cluster=c1"
      b"&connect_timeout_ms=500")
write("config_fuzzer", "args.txt", b"\x04--listen=[::1]:0\n--store\nsqlite:x.db\n--insecure-no-auth")
write("config_fuzzer", "values.txt", b"\x051h30m")
print(f"make_tiny_seeds.py: seeds in {seeds}")
