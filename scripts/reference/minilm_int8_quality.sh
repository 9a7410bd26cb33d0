#!/usr/bin/env bash
# The int8 path's quality against fp32: both precisions of `sluice embed` on the tokenizer fixture's 1,541
# texts (edge cases, 400 real paragraphs, every BMP code point), the cosine of each pair, and its minimum,
# 1st percentile and median; then the same on real texts from /usr/share/doc (COUNT, default 1000).
#   scripts/reference/minilm_int8_quality.sh [SLUICE] [COUNT]     # default .build/release/sluice
set -euo pipefail
cd "$(dirname "$0")/../.."
sluice="${1:-.build/release/sluice}"
count="${2:-1000}"
SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}"
venv="$SLUICE_CACHE_DIR/venv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp Tests/SluiceEmbedTests/Fixtures/wordpiece-parity.jsonl "$work/fixture.jsonl"
"$venv/bin/python" scripts/reference/doc_texts.py "$count" "$work/docs.jsonl" >/dev/null
for set in fixture docs; do
  for precision in fp32 int8; do
    "$sluice" embed --precision "$precision" --input "$work/$set.jsonl" --output "$work/$set-$precision.jsonl"
  done
  "$venv/bin/python" - "$work/$set-fp32.jsonl" "$work/$set-int8.jsonl" "$set" <<'PY'
import json, statistics, sys
import numpy as np
a, b = ([np.array(json.loads(line)["embedding"]) for line in open(path)] for path in sys.argv[1:3])
cosines = sorted(float(np.dot(x, y) / np.linalg.norm(x) / np.linalg.norm(y)) for x, y in zip(a, b))
print(f"{sys.argv[3]}: {len(cosines)} texts, cosine int8 vs fp32: min {cosines[0]:.5f}  "
      f"p1 {cosines[len(cosines) // 100]:.5f}  median {statistics.median(cosines):.5f}")
PY
done
