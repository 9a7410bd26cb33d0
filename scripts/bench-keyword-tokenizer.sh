#!/bin/sh
# The keyword tokenizer before session 28 (kept in the tests as the reference) against this tree's, outside
# the pipeline (issue 33 goal 1; docs/BENCHMARKS.md, "The keyword tokenizer's CPU, and what
# the releaser's `madvise`s are"):
#   scripts/bench-keyword-tokenizer.sh CORPUS [PASSES]
set -eu
corpus=${1:?usage: $0 CORPUS [PASSES]}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/scripts/write-path-cpu/keyword_tokenizer.swift" "$work/main.swift"  # top-level code: main.swift
# The reference without its test target's imports (its KeywordIndex is the benchmark's own).
grep -v -e '^import Sluice' -e '^@testable import' "$root/Tests/SluiceSinksTests/ReferenceKeywordTokenizer.swift" \
    > "$work/ReferenceKeywordTokenizer.swift"
swiftc -O -package-name bench -o "$work/keyword_tokenizer" "$work/main.swift" "$work/ReferenceKeywordTokenizer.swift" \
    "$root/scripts/write-path-cpu/corpus_chunks.swift" \
    "$root"/Sources/SluiceCore/KeywordTokenizer*.swift
"$work/keyword_tokenizer" "$corpus" "${2:-7}"
