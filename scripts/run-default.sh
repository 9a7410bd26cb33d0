#!/usr/bin/env bash
# The README's first command: set up, build (release) and run the default pipeline on samples/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh run
# `sluice` and its worker only: without the server's dependencies, which SwiftPM would otherwise resolve and check
# out for every build (Package.swift, `withServer`). `swift build -c release --product sluice-serve` adds them.
export SLUICE_WITHOUT_SERVER=1
swift build -c release --product sluice
# The extract workers (PDF, OCR): `sluice` starts this lean executable when it is beside it (docs/EXTRACTORS.md).
swift build -c release --product sluice-extract-worker
exec .build/release/sluice run Pipelines/default.yaml "$@"
