#!/usr/bin/env bash
# The MiniLM benchmark: a fixed set of real texts from /usr/share/doc, embedded by Sluice in fp32 and int8
# (`sluice-bench minilm`), by onnxruntime (fp32, and its own quantize_dynamic int8 model) and by OpenVINO
# (2 threads each) in the same run, side by side, ending with texts/s and the ratios.
#   scripts/bench-minilm.sh [COUNT] [REPEATS] [ENGINES]
#   (defaults: 2000 texts, 3 timed passes each,
#    ENGINES=sluice,sluice-int8,onnxruntime,onnxruntime-int8,openvino)
# Build first (`swift build -c release --product sluice-bench`): the script does not build, so that it can
# run on a quiet machine without compiling there. Installs onnx, onnxruntime, sympy (onnxruntime's BERT
# fusions) and openvino into the tools venv on first use (not part of setup: CI never needs them).
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-2000}"
repeats="${2:-3}"
engines="${3:-sluice,sluice-int8,onnxruntime,onnxruntime-int8,openvino}"
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
for precision in fp32 int8; do
  engine=sluice; [[ $precision == int8 ]] && engine=sluice-int8
  [[ ,$engines, == *,$engine,* ]] || continue
  echo "== $engine (Swift, $precision, $(nproc) workers × 1 thread)"
  "$bench" minilm --texts "$work/texts.jsonl" --repeats "$repeats" --precision "$precision" \
    --vectors "$work/$engine.jsonl" | tee -a "$work/results.txt"
done
if [[ -f $work/sluice.jsonl ]]; then
  compare=(--compare "$work/sluice.jsonl")
  if [[ -f $work/sluice-int8.jsonl ]]; then
    "$venv/bin/python" - "$work/sluice.jsonl" "$work/sluice-int8.jsonl" <<'PY'
import json, statistics, sys
import numpy as np
a, b = ([np.array(json.loads(line)["embedding"]) for line in open(path)] for path in sys.argv[1:3])
cosines = [float(np.dot(x, y) / np.linalg.norm(x) / np.linalg.norm(y)) for x, y in zip(a, b)]
print(f"cosine sluice vs sluice-int8: min {min(cosines):.5f}  median {statistics.median(cosines):.5f}")
PY
  fi
fi
references=$(tr ',' '\n' <<<"$engines" | grep -v '^sluice' | paste -sd, || true)
if [[ -n $references ]]; then
  echo "== references"
  "$venv/bin/python" scripts/reference/minilm_onnx_bench.py "$work/texts.jsonl" --engines "$references" \
    --repeats "$repeats" --threads 2 "${compare[@]}" | tee -a "$work/results.txt"
fi
echo "== texts/s (medians of $repeats passes) and ratios"
awk '$1 == "result" { rate[$2] = $3; order[n++] = $2 }
  END {
    for (i = 0; i < n; i++) printf "  %-18s %8.1f texts/s\n", order[i], rate[order[i]]
    peer = ""; for (e in rate) if (e !~ /^sluice/ && e !~ /int8$/ && (peer == "" || rate[e] > rate[peer])) peer = e
    if ("sluice-int8" in rate) {
      if ("sluice" in rate) printf "  sluice-int8 / sluice (fp32):            %.2f\n", rate["sluice-int8"] / rate["sluice"]
      if (peer != "") printf "  sluice-int8 / fastest fp32 peer (%s): %.2f\n", peer, rate["sluice-int8"] / rate[peer]
      if ("onnxruntime-int8" in rate) printf "  sluice-int8 / onnxruntime-int8:         %.2f\n", rate["sluice-int8"] / rate["onnxruntime-int8"]
    }
    if ("sluice" in rate && peer != "") printf "  sluice (fp32) / fastest fp32 peer (%s): %.2f\n", peer, rate["sluice"] / rate[peer]
  }' "$work/results.txt"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
