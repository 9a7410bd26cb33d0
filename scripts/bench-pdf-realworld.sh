#!/usr/bin/env bash
# Real-world PDFs with the default OCR setting (issue 33, goal 6): the whole `sluice run` (the default pipeline's
# extract settings, OCR `auto`, the hash embedder, the JSONL sink, no extraction cache) against `pdftotext` in two
# processes (`xargs -P 2`) over the same files, in alternating rounds; prints each round, the medians and the
# ratio (pdftotext's wall time / Sluice's: above 1 is faster than pdftotext).
#
#   scripts/bench-pdf-realworld.sh [ROUNDS] [FILES]          (defaults: 3 rounds, 200 PDFs)
#
# The corpus: PDFs of Debian's TeX Live documentation (`texlive-latex-base-doc`, `texlive-latex-recommended-doc`,
# installed by this script if missing; about 160 MB), those of at most 300 pages, the first FILES in the order of
# the SHA-1 of their paths (a fixed sample: 200 files, 3,525 pages on 2026-11-29), copied to a work folder.
# SLUICE is the binary (default .build/release/sluice). Sluice's CPU is not printed: its extract workers are
# not waited for by `time`. Pages OCR'd and skipped come from the run's --stats-json.
set -euo pipefail
rounds="${1:-3}"
files="${2:-200}"
root="$(cd "$(dirname "$0")/.." && pwd)"
sluice="${SLUICE:-$root/.build/release/sluice}"
[ -x "$sluice" ] || { echo "bench-pdf-realworld: build first: swift build -c release --product sluice --product sluice-extract-worker" >&2; exit 1; }
docs=/usr/share/doc/texlive-doc/latex
if [ ! -d "$docs/base" ] || [ ! -d "$docs/koma-script" ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    texlive-latex-base-doc texlive-latex-recommended-doc >/dev/null
fi
work=$(mktemp -d -t sluice-bench-pdf.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
python3 - "$docs" "$work/corpus" "$files" <<'PY'
import hashlib, os, shutil, subprocess, sys
docs, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
found = []
for folder, _, names in os.walk(docs):
    for name in names:
        if name.endswith(".pdf"):
            found.append(os.path.join(folder, name))
sample, pages = [], 0
for path in sorted(found, key=lambda p: hashlib.sha1(p.encode()).hexdigest()):
    info = subprocess.run(["pdfinfo", path], capture_output=True, text=True).stdout
    n = [int(line.split()[1]) for line in info.splitlines() if line.startswith("Pages:")]
    if n and n[0] <= 300:
        sample.append(path); pages += n[0]
    if len(sample) == count:
        break
for i, path in enumerate(sample):
    shutil.copy(path, os.path.join(out, "%03d-%s" % (i, os.path.basename(path))))
print("bench-pdf-realworld: %d PDFs, %d pages" % (len(sample), pages), file=sys.stderr)
PY
now() { date +%s.%N; }
echo "round side wall_s"
for ((r = 1; r <= rounds; r++)); do
  sides=(sluice pdftotext)
  ((r % 2 == 0)) && sides=(pdftotext sluice)
  for side in "${sides[@]}"; do
    if [ "$side" = sluice ]; then
      rm -rf "$work/state" "$work/out.jsonl"
      start=$(now)
      OMP_THREAD_LIMIT=1 "$sluice" run "$root/Pipelines/default.yaml" --source "$work/corpus" --state "$work/state" \
        --set sink.kind=jsonl --set sink.path="$work/out.jsonl" --set embed.provider=hash \
        --set 'source.include=["**/*.pdf"]' --set extract.cache_mb=0 --stats-json "$work/stats-$r.json" --quiet \
        >/dev/null 2>"$work/run.err" || [ $? -eq 2 ]  # 2: some documents failed (e.g. a PDF without text)
    else
      start=$(now)
      find "$work/corpus" -name '*.pdf' -print0 | xargs -0 -P 2 -I{} pdftotext -q {} /dev/null
    fi
    echo "$r $side $(awk -v a="$(now)" -v b="$start" 'BEGIN { printf "%.2f", a - b }')"
  done
done | tee "$work/rounds.txt"
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
times = {"sluice": [], "pdftotext": []}
for line in open(work + "/rounds.txt").read().splitlines():
    r, side, wall = line.split()
    times[side].append(float(wall))
stats = json.load(open(work + "/stats-1.json"))
s, p = statistics.median(times["sluice"]), statistics.median(times["pdftotext"])
print("median wall s: sluice %.2f, pdftotext -P 2 %.2f; pdftotext / sluice %.2f" % (s, p, p / s))
print("documents: %d upserted, %d failed %s; OCR: %d pages read, %d read as nothing, %d skipped (no image to read)" % (
    stats["documents_upserted"], stats["documents_failed"], stats.get("failures_by_code", {}),
    stats.get("ocr_pages", 0), stats.get("ocr_empty_pages", 0), stats.get("ocr_skipped_pages", 0)))
PY
