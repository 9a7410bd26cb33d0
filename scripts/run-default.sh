#!/usr/bin/env bash
# The README's first command: set up, build (release) and run the default pipeline on samples/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh run
swift build -c release --product sluice
# The extract workers (PDF, OCR): `sluice` starts this lean executable when it is beside it (docs/EXTRACTORS.md).
swift build -c release --product sluice-extract-worker
exec .build/release/sluice run Pipelines/default.yaml "$@"
