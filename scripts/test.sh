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
# The test processes embed with MiniLM in process: give them the OpenBLAS kernels `sluice` gives itself on a CPU
# OpenBLAS does not know (docs/EMBEDDERS.md, "OpenBLAS on a CPU newer than itself"); a value already set is kept.
if [[ -z ${OPENBLAS_CORETYPE+set} ]]; then
  core=$(.build/debug/sluice blas-core | sed -n 's/^OPENBLAS_CORETYPE=\([A-Za-z]*\) .*/\1/p')
  if [[ -n $core && $core != unset ]]; then export OPENBLAS_CORETYPE=$core; fi
fi
swift test --skip-build "$@"
