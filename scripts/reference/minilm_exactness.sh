#!/usr/bin/env bash
# Exactness of the MiniLM embedder over many real texts: `sluice embed` against the independent NumPy
# reference (minilm_reference.py, float64), printing the min and median cosine.
#   scripts/reference/minilm_exactness.sh [COUNT]     (default 600 texts from samples/, mixed lengths)
set -euo pipefail
cd "$(dirname "$0")/../.."
count="${1:-600}"
SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}"
python="$SLUICE_CACHE_DIR/venv/bin/python"
swift build -c release --product sluice
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -c "
import json, sys
sys.path.insert(0, 'scripts/reference')
from real_texts import real_texts
for text in real_texts($count, seed=2026):
    print(json.dumps({'text': text}))" > "$work/texts.jsonl"
.build/release/sluice embed --provider minilm --input "$work/texts.jsonl" --output "$work/sluice.jsonl"
"$python" scripts/reference/minilm_reference.py embed < "$work/texts.jsonl" > "$work/reference.jsonl"
"$python" - "$work" <<'PY'
import json, statistics, sys
import numpy as np
work = sys.argv[1]
texts = [json.loads(l)["text"] for l in open(f"{work}/texts.jsonl")]
a = [np.array(json.loads(l)["embedding"]) for l in open(f"{work}/sluice.jsonl")]
b = [np.array(json.loads(l)["embedding"]) for l in open(f"{work}/reference.jsonl")]
assert len(a) == len(b) == len(texts)
cos = [float(x @ y / np.linalg.norm(x) / np.linalg.norm(y)) for x, y in zip(a, b)]
lengths = sorted(len(t) for t in texts)
print(f"{len(cos)} texts ({lengths[0]}-{lengths[-1]} characters, median {lengths[len(lengths)//2]}): "
      f"cosine min {min(cos):.9f}  median {statistics.median(cos):.9f}  below 0.9999: {sum(c < 0.9999 for c in cos)}")
PY
