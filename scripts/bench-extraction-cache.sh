#!/usr/bin/env bash
# The extraction-cache benchmark: a second run over samples/ (without samples/bad) to which copies of the
# scanned samples (every image, the scanned and the mixed PDF) were added under new names, with the
# extraction cache (extract.cache_mb default) and without it (extract.cache_mb=0, for both runs). The
# first run of each is prepared once and restored before every timed second run.
#   scripts/bench-extraction-cache.sh prepare [WORK]     # CPU-heavy, not measured (run it under `heavy`)
#   scripts/bench-extraction-cache.sh measure [WORK] [REPEATS]   # the timed runs (run it under `quiet`)
# Hash embedder, so that the figures are extraction and pipeline, not the model. Uses the built binary
# (`swift build -c release --product sluice` and `--product sluice-extract-worker`, from the same checkout:
# a run starts the worker beside it; SLUICE=... to use another).
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:?prepare or measure}"
work="${2:-/tmp/sluice-bench-xcache}"
repeats="${3:-3}"
sluice="${SLUICE:-$PWD/.build/release/sluice}"
[[ -x $sluice ]] || { echo "bench-extraction-cache: $sluice is missing; run: swift build -c release --product sluice; swift build -c release --product sluice-extract-worker" >&2; exit 1; }
common=(Pipelines/default.yaml --set embed.provider=hash --quiet)
# SLUICE_BENCH_SET=extract.isolate=false extracts in process: /usr/bin/time then counts the OCR's CPU too
# (the worker processes' CPU is not in the parent's rusage).
[[ -n ${SLUICE_BENCH_SET:-} ]] && common+=(--set "$SLUICE_BENCH_SET")

run() {  # run VARIANT-DIR CACHE_MB [time-output]
  local dir=$1 cap=$2
  "$sluice" run "${common[@]}" --source "$dir/corpus" --state "$dir/state" --set "sink.path=$dir/index" \
    --set "extract.cache_mb=$cap" --stats-json "$dir/stats.json" >/dev/null || [[ $? == 2 ]]
}

case $mode in
prepare)
  rm -rf "$work"
  for variant in on off; do
    dir="$work/$variant"
    mkdir -p "$dir/corpus"
    (cd samples && tar --exclude=./bad -cf - .) | tar -xf - -C "$dir/corpus"
    cap=512; [[ $variant == off ]] && cap=0
    run "$dir" "$cap"
    mkdir -p "$dir/corpus/copies"
    for file in samples/images/*.{png,jpg,tiff,bmp,gif,webp} samples/pdf/xz-faq-scanned.pdf samples/pdf/mixed-text-and-scan.pdf; do
      name=$(basename "$file")
      cp "$file" "$dir/corpus/copies/copy-of-${name}"
    done
    cp -a "$dir/state" "$dir/state.first"
    cp -a "$dir/index" "$dir/index.first"
  done
  echo "prepared in $work"
  ;;
measure)
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-10s %-3s %8s %8s %8s %10s %10s %12s\n' cache run wall_s user_s sys_s maxrss_mb upserted from_cache
  for ((r = 1; r <= repeats; r++)); do
    for variant in on off; do
      dir="$work/$variant"
      rm -rf "$dir/state" "$dir/index"
      cp -a "$dir/state.first" "$dir/state"
      cp -a "$dir/index.first" "$dir/index"
      cap=512; [[ $variant == off ]] && cap=0
      /usr/bin/time -v -o "$dir/time.txt" "$sluice" run "${common[@]}" --source "$dir/corpus" --state "$dir/state" \
        --set "sink.path=$dir/index" --set "extract.cache_mb=$cap" --stats-json "$dir/stats.json" >/dev/null 2>&1 || true
      wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$dir/time.txt")
      user=$(awk -F': ' '/User time/ {print $2}' "$dir/time.txt")
      sys=$(awk -F': ' '/System time/ {print $2}' "$dir/time.txt")
      rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2/1024}' "$dir/time.txt")
      upserted=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["documents_upserted"], s.get("extractions_cached") or 0)' "$dir/stats.json")
      printf '%-10s %-3s %8s %8s %8s %10s %10s %12s\n' "$variant" "$r" "$wall" "$user" "$sys" "$rss" $upserted
    done
  done
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
  ;;
*) echo "usage: $0 prepare|measure [WORK] [REPEATS]" >&2; exit 1 ;;
esac
