#!/usr/bin/env bash
# The MiniLM benchmark: a fixed set of real texts from /usr/share/doc, embedded by Sluice
# (`sluice-bench minilm`) and by onnxruntime (2 threads) in the same run, side by side.
#   scripts/bench-minilm.sh [COUNT] [REPEATS]      (defaults: 2000 texts, 3 timed passes each)
# Installs onnx and onnxruntime into the tools venv on first use (not part of setup: CI never needs them).
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-2000}"
repeats="${2:-3}"
SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}"
export SLUICE_CACHE_DIR
venv="$SLUICE_CACHE_DIR/venv"
./scripts/setup.sh
if ! "$venv/bin/python" -c "import onnx, onnxruntime" 2>/dev/null; then
  "$venv/bin/pip" install -q --disable-pip-version-check onnx onnxruntime
fi
swift build -c release --product sluice-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" scripts/reference/doc_texts.py "$count" "$work/texts.jsonl"
echo "== sluice (Swift, OpenBLAS sgemm, $(nproc) workers × 1 BLAS thread)"
.build/release/sluice-bench minilm --texts "$work/texts.jsonl" --repeats "$repeats" --vectors "$work/sluice.jsonl"
echo "== reference"
"$venv/bin/python" scripts/reference/minilm_onnx_bench.py "$work/texts.jsonl" --repeats "$repeats" --threads 2 --compare "$work/sluice.jsonl"
