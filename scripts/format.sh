#!/usr/bin/env bash
# Formats every Swift file with swift-format (the toolchain's `swift format`, configured by .swift-format:
# swift-nio's settings, 4 spaces, 120 columns), then lints strictly. scripts/test.sh runs the lint alone
# (`scripts/format.sh --lint`) and fails on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Package.swift Sources Tests Benchmarks Fuzz)
if [ "${1:-}" != "--lint" ]; then
  swift format format --in-place --parallel --recursive "${paths[@]}"
fi
swift format lint --strict --parallel --recursive "${paths[@]}"
