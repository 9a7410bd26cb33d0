#!/bin/sh
# A batch's keyword segment, built as main did until session 27, in sessions 27-28, and as
# KeywordIndex.SegmentBuilder does now, outside the pipeline (issue 33
# goal 1; docs/BENCHMARKS.md, "The local store's extra CPU per load"):
#   scripts/bench-keyword-segment.sh CORPUS [PASSES]
set -eu
corpus=${1:?usage: $0 CORPUS [PASSES]}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/scripts/write-path-cpu/keyword_segment.swift" "$work/main.swift"  # top-level code: main.swift
swiftc -O -package-name bench -o "$work/keyword_segment" "$work/main.swift" "$root/scripts/write-path-cpu/corpus_chunks.swift" \
    "$root"/Sources/SluiceCore/KeywordTokenizer*.swift "$root/Sources/SluiceSinks/KeywordTermTable.swift" \
    "$root/Sources/SluiceSinks/KeywordPostings.swift" "$root/Sources/SluiceSinks/KeywordSegmentEntries.swift"
"$work/keyword_segment" "$corpus" "${2:-7}"
