#!/bin/sh
# Direct runs of the write path, alternating configurations (issue 33 goal 1; docs/BENCHMARKS.md,
# "What serialises the local store's load"):
#   scripts/write-path-wait/runs.sh SLUICE CORPUS OUT REPEATS CONFIG...
# CONFIG is `local`, `jsonl`, or `local-shm` (the store's folder on /dev/shm, where fdatasync does not wait
# for a disk; the state stays on disk), each optionally followed by `-nogroup` (the same with
# SLUICE_GROUP_COMMIT=off: every write of the store and the state in a transaction of its own), or
# `local-upN` (the local store with `run.upsert_parallelism: N`, N upsert workers instead of 2). Each run starts from a fresh store and state under OUT and writes
# OUT/CONFIG-N.json (thread_times.py: per-thread run, run-queue and off-CPU time, user and system CPU).
set -eu
sluice=${1:?usage: $0 SLUICE CORPUS OUT REPEATS CONFIG...}
corpus=$2
out=$3
repeats=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
shm=/dev/shm/sluice-write-path-wait.$$
trap 'rm -rf "$shm" "$out/work"' EXIT
run=1
while [ "$run" -le "$repeats" ]; do
    for config in "$@"; do
        rm -rf "$out/work" "$shm"
        mkdir -p "$out/work"
        group=on
        extra=""
        base=$config
        case $config in *-nogroup) base=${config%-nogroup}; group=off ;; esac
        case $base in
        local) sink="{ kind: local, path: $out/work/index }" ;;
        local-up[0-9]*)
            sink="{ kind: local, path: $out/work/index }"
            extra="run: { upsert_parallelism: ${base#local-up} }"
            ;;
        local-shm) sink="{ kind: local, path: $shm/index }" ;;
        jsonl) sink="{ kind: jsonl, path: $out/work/vectors.jsonl }" ;;
        *) echo "unknown configuration $config" >&2; exit 64 ;;
        esac
        cat >"$out/work/pipeline.yaml" <<YAML
source: { path: $corpus, include: ["**/*"] }
chunk: { strategy: recursive, max_tokens: 256, overlap_tokens: 32 }
embed: { provider: hash, dimensions: 64, batch: 64 }
sink: $sink
state: $out/work/state
$extra
YAML
        echo "$config run $run" >&2
        SLUICE_GROUP_COMMIT=$group python3 "$here/thread_times.py" --json "$out/$config-$run.json" -- \
            "$sluice" run "$out/work/pipeline.yaml" --quiet --stats-json "$out/$config-$run.stats.json" >/dev/null
    done
    run=$((run + 1))
done
