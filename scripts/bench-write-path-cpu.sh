#!/bin/sh
# The local store's write-path CPU, part by part, outside the pipeline (issue 33 goal 1; docs/BENCHMARKS.md,
# "The local store's extra CPU per load"):
#   scripts/bench-write-path-cpu.sh CORPUS [BASE]
# 1. the graph's inserts (CHNSW as built here, clang++ -O3, no -march): 8,900 64-d vectors, 1 and 2 threads,
#    five runs each; also with SLUICE_HNSW_VECTOR_WIDTH=avx2 and =baseline; then the same 1-thread inserts
#    with uniform vectors (the OpenAI stand-in's: what the latency-bound benchmark's run inserts), and, with
#    STORE=DIR (a local store's index folder), that store's own vectors (scripts/write-path-cpu/store_vectors.c);
# 2. keyword term counting, BASE's tokenizer (default main) against this tree's byte path, swiftc -O;
# 3. the OpenAI stand-in's CPU per part on CORPUS's chunks (needs the tools venv's tiktoken).
set -eu
corpus=${1:?usage: $0 CORPUS [BASE]}
base=${2:-main}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
clang++ -O3 -std=c++17 -I"$root/Sources/CHNSW/include" "$root/scripts/write-path-cpu/hnsw_insert.cpp" \
    "$root/Sources/CHNSW/HNSWIndex.cpp" -o "$work/hnsw_insert" -lpthread
"$work/hnsw_insert" 8900 1 100 200  # recall@10
for threads in 1 2; do
    for run in 1 2 3 4 5; do "$work/hnsw_insert" 8900 "$threads" 100 0; done
done
for width in avx2 baseline; do
    echo "SLUICE_HNSW_VECTOR_WIDTH=$width"
    for run in 1 2 3; do SLUICE_HNSW_VECTOR_WIDTH=$width "$work/hnsw_insert" 8900 1 100 0; done
done
"$work/hnsw_insert" 8900 1 100 200 uniform
for run in 1 2 3; do "$work/hnsw_insert" 8900 1 100 0 uniform; done
if [ -n "${STORE:-}" ]; then
    cc -O2 -o "$work/store_vectors" "$root/scripts/write-path-cpu/store_vectors.c" -llmdb
    "$work/store_vectors" "$STORE" "$work/store.f32"
    for run in 1 2 3; do "$work/hnsw_insert" 1000000 1 100 0 "$work/store.f32"; done
fi
# BASE's tokenizer, every file of it (KeywordTokenizer.swift and its extensions), renamed OldTokenizer.
mkdir "$work/old"
for file in $(git -C "$root" ls-tree --name-only "$base" Sources/SluiceCore/ | grep '/KeywordTokenizer[+.]'); do
    git -C "$root" show "$base:$file" |
        sed 's/public enum KeywordTokenizer/enum OldTokenizer/; s/KeywordTokenizer/OldTokenizer/g' \
            >"$work/old/Old$(basename "$file")"
done
cp "$root/scripts/write-path-cpu/keyword_counting.swift" "$work/main.swift"  # top-level code: main.swift
swiftc -O -package-name bench -o "$work/keyword_counting" "$work/main.swift" \
    "$root"/Sources/SluiceCore/KeywordTokenizer*.swift \
    "$root/Sources/SluiceSinks/KeywordTermTable.swift" "$work"/old/*.swift
"$work/keyword_counting" "$corpus"
"${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}/venv/bin/python" "$root/scripts/write-path-cpu/standin_cost.py" "$corpus"
