#!/usr/bin/env bash
# The README's first command: set up, build (debug, hot paths optimized) and run the default pipeline on samples/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh run
# `sluice` and its worker only: without the server's dependencies, which SwiftPM would otherwise resolve and check
# out for every build (Package.swift, `withServer`). `swift build -c release --product sluice-serve` adds them.
export SLUICE_WITHOUT_SERVER=1
# A debug build whose hot paths are optimized anyway (the MiniLM encoder and its kernels, the HNSW index:
# Package.swift, `optimizeKernelsInDebug`): half the compiler's work of a release build for about a sixth more
# CPU in the run (docs/INSTALL.md has the figures). Install a release build for real loads (docs/INSTALL.md).
swift build --product sluice
# The extract workers (PDF, OCR): `sluice` starts this lean executable when it is beside it (docs/EXTRACTORS.md).
swift build --product sluice-extract-worker
exec .build/debug/sluice run Pipelines/default.yaml "$@"
