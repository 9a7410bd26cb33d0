#!/usr/bin/env bash
# The README's first command: set up, build (release) and run the default pipeline on samples/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh run
swift build -c release --product sluice
exec .build/release/sluice run Pipelines/default.yaml "$@"
