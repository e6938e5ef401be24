"""Real opmap processes for the framework tests and bench/framework_overhead.py: an
opmap-collector on 127.0.0.1 with a SQLite store, an opmap-agent streaming to it, and the
`opmap` CLI against both. Nothing is mocked; every process is one of build/'s binaries.

    with Stack(work_dir) as s:             # collector, then agent
        s.workload_env(model="m", revision="r")   # LD_PRELOAD etc. for a workload
        s.agent_status()                   # opmap-agent status --json
        s.query("latency", "--subject", "request", "--model", "m")   # --format json
        s.export_session("agent/session")  # opmap export --session: the raw events
"""

import decimal
import json
import os
import signal
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("OPMAP_BUILD_DIR", os.path.join(REPO, "build")))
BIN = os.path.join(BUILD, "bin")
LIB = os.path.join(BUILD, "lib", "libopmap_inject.so")
OPMAP = os.path.join(BIN, "opmap")
AGENT_TOKEN = "framework-test-agent-token-0123456789"
ANALYST_TOKEN = "framework-test-analyst-token-0123456789"
AGENT_ID = "framework-test"


def missing_binaries():
    return [p for p in (OPMAP, os.path.join(BIN, "opmap-agent"),
                        os.path.join(BIN, "opmap-collector"), LIB) if not os.path.exists(p)]


def wait_for(pred, timeout, what, poll=0.1):
    """pred() until truthy (returned) or timeout (AssertionError naming `what`)."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.0f s waiting for %s" % (timeout, what))
        time.sleep(poll)


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


class Child:
    """A child process with stdout/stderr in files (so nothing blocks on a pipe)."""

    def __init__(self, argv, work, name, env=None):
        self.name = name
        self.out_path = os.path.join(work, name + ".out")
        self.err_path = os.path.join(work, name + ".err")
        self.argv = argv
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env,
                                         stdin=subprocess.DEVNULL)
        self.pid = self.proc.pid

    def out(self):
        return _read(self.out_path)

    def err(self):
        return _read(self.err_path)

    def wait_line(self, text, timeout):
        def seen():
            if text in self.out():
                return True
            if self.proc.poll() is not None:
                raise AssertionError("%s exited %s before printing %r; stderr:\n%s" % (
                    self.name, self.proc.returncode, text, self.err()[-4000:]))
            return False
        wait_for(seen, timeout, "%s to print %r" % (self.name, text))

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("%s ran past %.0f s: killed; stderr:\n%s" % (
                self.name, timeout, self.err()[-4000:]))

    def kill(self, sig=signal.SIGKILL):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait()


class Stack:
    """A collector (unless `address` names a running one, or collector=False: the agent
    then spools only) and one agent. `name` prefixes the agent's sockets, spool and logs,
    so several agents can share a work dir and a collector."""

    def __init__(self, work, agent_flags=None, collector=True, name="agent", address=None,
                 agent_id=None):
        self.work = work
        self.name = name
        self.agent_id = agent_id or AGENT_ID
        self.with_collector = collector
        self.agent_flags = agent_flags if agent_flags is not None else [
            "--capture-window", "2s", "--capture-every", "2500ms", "--capture-jitter", "0",
            "--cpu-budget", "0.9", "--max-concurrent-captures", "2"]
        self.sock = os.path.join(work, name + ".sock")
        self.ctl = os.path.join(work, name + "-control.sock")
        self.collector = None
        self.address = address
        self.agent = None
        self.agent_starts = 0

    def __enter__(self):
        if self.with_collector and self.address is None:
            self.start_collector()
        self.start_agent()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        if self.agent is not None:
            self.agent.kill(signal.SIGTERM)
        if self.collector is not None:
            self.collector.kill(signal.SIGTERM)

    def start_collector(self):
        tokens = os.path.join(self.work, "tokens")
        with open(tokens, "w") as f:
            f.write("%s agent agent\n%s analyst analyst\n" % (AGENT_TOKEN, ANALYST_TOKEN))
        self.collector = Child(
            [os.path.join(BIN, "opmap-collector"), "--listen", "127.0.0.1:0", "--store",
             "sqlite:" + os.path.join(self.work, "collector.db"), "--tokens", tokens,
             "--metrics-listen", "127.0.0.1:0"], self.work, "collector")
        self.collector.wait_line("listening on ", 30)
        for line in self.collector.out().splitlines():
            if line.startswith("listening on "):
                self.address = line[len("listening on "):].strip()

    def start_agent(self):
        self.agent_starts += 1
        spool = os.path.join(self.work, self.name + "-spool")
        os.makedirs(spool, mode=0o700, exist_ok=True)
        argv = [os.path.join(BIN, "opmap-agent"), "--socket", self.sock, "--control-socket",
                self.ctl, "--spool-dir", spool, "--agent-id", self.agent_id]
        if self.with_collector:
            token = os.path.join(self.work, self.name + ".token")
            with open(token, "w") as f:
                f.write(AGENT_TOKEN + "\n")
            argv += ["--collector", self.address, "--insecure", "--token-file", token]
        self.agent = Child(argv + self.agent_flags, self.work,
                           "%s%d" % (self.name, self.agent_starts))
        self.agent.wait_line("agent ready", 30)

    def kill_agent(self):
        """SIGKILL: no clean shutdown, as a crash or an OOM kill."""
        self.agent.kill(signal.SIGKILL)

    def workload_env(self, model, revision, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OPMAP_", "NVTX_INJECTION", "CUDA_INJECTION", "LD_PRELOAD"))}
        env.update({"LD_PRELOAD": LIB, "OPMAP_AGENT_SOCKET": self.sock, "OPMAP_MODEL": model,
                    "OPMAP_MODEL_REVISION": revision, "HF_HUB_OFFLINE": "1",
                    "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
        env.update(extra or {})
        return env

    def agent_status(self):
        r = subprocess.run([os.path.join(BIN, "opmap-agent"), "status", "--control-socket",
                            self.ctl, "--json"], capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            return None
        return json.loads(r.stdout)

    def process_status(self, pid):
        st = self.agent_status()
        for p in (st or {}).get("processes", []):
            if p.get("pid") == pid:
                return p
        return None

    def cli(self, *args, timeout=60):
        return subprocess.run([OPMAP] + list(args), capture_output=True, text=True,
                              timeout=timeout)

    def query(self, what, *args):
        """`opmap query WHAT ... --format json` as a dict; AssertionError on failure."""
        argv = ["query", what, "--collector", self.address, "--token", ANALYST_TOKEN,
                "--format", "json"] + list(args)
        r = self.cli(*argv)
        if r.returncode != 0:
            raise AssertionError("opmap %s: exit %d\n%s%s" % (" ".join(argv), r.returncode,
                                                              r.stdout, r.stderr))
        return json.loads(r.stdout)

    def query_table(self, what, *args):
        r = self.cli("query", what, "--collector", self.address, "--token", ANALYST_TOKEN,
                     *args)
        return r.stdout + r.stderr

    def export_session(self, key):
        """The events of session `agent/session` (`--group-by session`'s key) from
        `opmap export --session`: (ranges, meta). Each range is a dict with name, start_ns,
        end_ns (ints: the file's microseconds with 3 decimals read exactly), tid, args."""
        agent, session = key.split("/", 1)
        out = os.path.join(self.work, "export-%s.json" % session)
        r = self.cli("export", "--collector", self.address, "--token", ANALYST_TOKEN,
                     "--agent", agent, "--session", session, "--out", out, "--quiet")
        if r.returncode != 0:
            raise AssertionError("opmap export --session %s: exit %d\n%s" % (
                key, r.returncode, r.stderr))
        with open(out) as f:
            doc = json.load(f, parse_float=decimal.Decimal)
        ranges, meta = [], []
        for e in doc["traceEvents"]:
            if e.get("ph") == "X":
                start = int(decimal.Decimal(e["ts"]) * 1000)
                ranges.append({"name": e["name"], "start_ns": start,
                               "end_ns": start + int(decimal.Decimal(e["dur"]) * 1000),
                               "tid": e.get("tid"), "args": e.get("args", {})})
            else:
                meta.append(e)
        return ranges, meta
