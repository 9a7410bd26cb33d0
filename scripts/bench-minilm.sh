#!/usr/bin/env bash
# The MiniLM benchmark: a fixed set of real texts from /usr/share/doc, embedded by Sluice
# (`sluice-bench minilm`), by onnxruntime and by OpenVINO (2 threads each) in the same run, side by side.
#   scripts/bench-minilm.sh [COUNT] [REPEATS] [ENGINES]
#   (defaults: 2000 texts, 3 timed passes each, ENGINES=sluice,onnxruntime,openvino)
# Build first (`swift build -c release --product sluice-bench`): the script does not build, so that it can
# run on a quiet machine without compiling there. Installs onnx, onnxruntime, sympy (onnxruntime's BERT
# fusions) and openvino into the tools venv on first use (not part of setup: CI never needs them).
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-2000}"
repeats="${2:-3}"
engines="${3:-sluice,onnxruntime,openvino}"
SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}"
export SLUICE_CACHE_DIR
venv="$SLUICE_CACHE_DIR/venv"
./scripts/setup.sh
if ! "$venv/bin/python" -c "import onnx, onnxruntime, sympy, openvino" 2>/dev/null; then
  "$venv/bin/pip" install -q --disable-pip-version-check onnx onnxruntime sympy openvino
fi
bench=.build/release/sluice-bench
if [[ ! -x $bench ]]; then
  echo "bench-minilm: $bench is missing; run: swift build -c release --product sluice-bench" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" scripts/reference/doc_texts.py "$count" "$work/texts.jsonl"
compare=()
if [[ ,$engines, == *,sluice,* ]]; then
  echo "== sluice (Swift, OpenBLAS sgemm, $(nproc) workers × 1 BLAS thread)"
  "$bench" minilm --texts "$work/texts.jsonl" --repeats "$repeats" --vectors "$work/sluice.jsonl"
  compare=(--compare "$work/sluice.jsonl")
fi
references=$(tr ',' '\n' <<<"$engines" | grep -v '^sluice$' | paste -sd, || true)
if [[ -n $references ]]; then
  echo "== references"
  "$venv/bin/python" scripts/reference/minilm_onnx_bench.py "$work/texts.jsonl" --engines "$references" \
    --repeats "$repeats" --threads 2 "${compare[@]}"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
