#!/usr/bin/env bash
# The fault campaign (issue 14; docs/RELIABILITY.md, "Fault campaign"): builds, then runs every scenario of
# FaultCampaignTests with SLUICE_FAULT_CAMPAIGN=1 (kill -9 at every named point and at moments of slow runs
# of run, run --prune, run --reembed, sink drop and verify --repair; broken provider answers and transport
# faults; HTTP stores failing every few writes; bad documents, settings and state), and prints the tally:
#   faults injected: N → survived with nothing lost: M
#   bad inputs tried: N → handled cleanly: M
# Takes many minutes. Options are passed to `swift test` (e.g. --skip-build). The per-scenario results stay
# in $TMPDIR/sluice-fault-campaign/results-<date>.tsv (category, scenario, outcome, detail).
set -euo pipefail
cd "$(dirname "$0")/.."
skip_build=0
for argument in "$@"; do [ "$argument" = --skip-build ] && skip_build=1; done
if [ "$skip_build" = 0 ]; then
  ./scripts/setup.sh test
  log=$(mktemp)
  swift build --build-tests 2>&1 | tee "$log" | tail -5
  if grep -E "^$(pwd)/(Sources|Tests|Benchmarks)/.*: warning:" "$log" >/dev/null; then
    echo "fault-campaign: the build has warnings in Sluice's code (treated as errors):" >&2
    grep -E "^$(pwd)/(Sources|Tests|Benchmarks)/.*: warning:" "$log" | sort -u >&2
    exit 1
  fi
  set -- --skip-build "$@"
fi

folder="${TMPDIR:-/tmp}/sluice-fault-campaign"
mkdir -p "$folder"
results="$folder/results-$(date -u +%Y%m%dT%H%M%SZ).tsv"
: >"$results"
export OMP_THREAD_LIMIT=1 SLUICE_FAULT_CAMPAIGN=1 SLUICE_FAULT_RESULTS="$results"
set +e
swift test "$@" --filter FaultCampaignTests 2>&1 | tee "$folder/last-run.log" | grep -E "Test run|error:|recorded an issue"
status=${PIPESTATUS[0]}
set -e

awk -F'\t' '
  $1 == "fault" { faults++; if ($3 == "survived") survived++ }
  $1 == "input" { inputs++; if ($3 == "clean") clean++ }
  $3 == "lost" || $3 == "unclean" { print "  " $3 ": " $2 " — " $4 > "/dev/stderr" }
  END {
    printf "faults injected: %d → survived with nothing lost: %d\n", faults, survived
    printf "bad inputs tried: %d → handled cleanly: %d\n", inputs, clean
  }' "$results"
echo "results: $results (log: $folder/last-run.log)"
exit "$status"
