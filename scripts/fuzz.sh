#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer + AddressSanitizer, release build: preconditions and bounds checks
# stay on) of the code that reads untrusted bytes: the JSON, CSV, HTML, DOCX, PPTX, XLSX, EPUB and text extractors, the
# extract workers' line protocol, the extraction-cache decoder, the local store's record decoder and the
# zlib stream that inflates PDF streams. Not part of the test suite: it runs for a bounded time.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]      (default 120 s, every target)
#
# Corpora grow in .build-fuzz/corpus/TARGET (seeded from samples/); a crash, a hang (-timeout) or
# runaway memory (-rss_limit_mb) stops that target and leaves its input in .build-fuzz/crashes/TARGET/.
# Prints one line per target (executions, seconds, corpus size, crashes) and exits 1 if any crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-120}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(json csv html docx pptx xlsx epub odt ods odp rtf text worker-protocol extraction-cache local-record local-record-fields pdf-flate)

SLUICE_FUZZ=1 swift build -c release --scratch-path .build-fuzz --product SluiceFuzz \
  --sanitize=fuzzer --sanitize=address \
  -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp 2>&1 | grep -E 'error|warning: .*Fuzz|Compiling SluiceFuzz|Build' || true
binary=.build-fuzz/release/SluiceFuzz
[ -x "$binary" ] || { echo "fuzz: build failed" >&2; exit 1; }

seed() {  # target -> sample folders
  case "$1" in
    json) echo json ;; csv) echo csv ;; html) echo html ;; docx | pptx | xlsx | epub) echo "docx pptx xlsx epub" ;; text) echo "text markdown" ;;
    odt | ods | odp) echo "odt docx" ;; rtf) echo rtf ;;
    *) echo "" ;;
  esac
}

failed=0
for target in "${targets[@]}"; do
  corpus=".build-fuzz/corpus/$target"
  crashes=".build-fuzz/crashes/$target"
  mkdir -p "$corpus" "$crashes"
  for folder in $(seed "$target"); do
    for f in samples/"$folder"/* samples/bad/*; do [ -f "$f" ] && cp -n "$f" "$corpus/" 2>/dev/null || true; done
  done
  # DOCX with footnotes and endnotes, a PPTX, an XLSX and an EPUB: test fixtures, not samples (each ZIP-based
  # target reads them all).
  case "$target" in
    docx | pptx | xlsx | epub | odt | ods | odp)
      for f in Tests/SluiceExtractTests/Fixtures/*.docx Tests/SluiceExtractTests/Fixtures/*.pptx \
        Tests/SluiceExtractTests/Fixtures/*.xlsx Tests/SluiceExtractTests/Fixtures/*.epub \
        Tests/SluiceExtractTests/Fixtures/*.od[tsp]; do
        cp -n "$f" "$corpus/" 2>/dev/null || true
      done ;;
    rtf)
      for f in Tests/SluiceExtractTests/Fixtures/*.rtf; do cp -n "$f" "$corpus/" 2>/dev/null || true; done ;;
  esac
  # Inputs that multiply their text by reference (HostileDocuments): the bound on a document's text is checked
  # on every input the fuzzer derives from them.
  printf '\n' > ".build-fuzz/one-input"
  SLUICE_FUZZ_TARGET="$target" SLUICE_FUZZ_SEEDS="$corpus" "$binary" ".build-fuzz/one-input" >/dev/null 2>&1 || true
  [ -n "$(ls -A "$corpus")" ] || printf '\n' > "$corpus/empty"
  log=".build-fuzz/$target.log"
  set +e
  SLUICE_FUZZ_TARGET="$target" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
    "$binary" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1
  status=$?
  set -e
  # (A crash ends the run without a "Done" line: every look-up here may find nothing.)
  runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  took=$(grep -E '^Done [0-9]+ runs in' "$log" | awk '{print $5}' || true)
  found=$(find "$crashes" -type f | wc -l)
  echo "fuzz: $target: ${runs:-?} executions in ${took:-?} s, corpus $(find "$corpus" -type f | wc -l) inputs, exit $status, $found crash file(s) in $crashes"
  [ "$status" -eq 0 ] || failed=1
done
exit $failed
