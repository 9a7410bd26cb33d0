#!/usr/bin/env bash
# The README's second command: set up, build everything (warnings in Sluice's own code fail the build)
# and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh test
# Formatting is checked before building: `scripts/format.sh` fixes what it finds.
./scripts/format.sh --lint || { echo "test: swift-format found the above; run scripts/format.sh" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --build-tests 2>&1 | tee "$log"
if grep -E "^$(pwd)/(Sources|Tests|Benchmarks)/.*: warning:" "$log" >/dev/null; then
  echo "test: the build has warnings in Sluice's code (treated as errors):" >&2
  grep -E "^$(pwd)/(Sources|Tests|Benchmarks)/.*: warning:" "$log" | sort -u >&2
  exit 1
fi
# Debian's tesseract uses OpenMP: without this, OCR costs 3-5x more CPU (PLATFORM.md).
export OMP_THREAD_LIMIT=1
swift test --skip-build "$@"
