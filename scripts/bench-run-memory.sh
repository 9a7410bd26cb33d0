#!/bin/bash
# Where a loading run's memory goes: runs `sluice run` with two LD_PRELOAD probes (scripts/mem-probe/) and prints
# the peak RSS and, at that peak, glibc's heap in use, free in the arenas and in mmapped blocks, the file-backed
# part, and the most dirty pages one LMDB commit held (LMDB keeps them for the store's life). A third probe
# (peak-probe.c) records the same split, with the file-backed part divided into LMDB's maps, the executable's
# and the libraries' pages (and glibc's arena count), just before each release `madvise` and heap trim: the
# moments at which the kernel records the high-water RSS that /usr/bin/time reports, which the 100 ms samples can miss.
#   scripts/bench-run-memory.sh NAME CORPUS [--set key=value …]     (after `swift build`; results in /tmp/sluice-mem/NAME)
# SLUICE_BIN names the binary to run (default: the debug build's .build/debug/sluice), e.g. a release build's
# SLUICE_BIN=.build-rel/release/sluice, or a copy, so that a rebuild cannot replace it mid-run.
# e.g. scripts/bench-run-memory.sh exact10x /tmp/store-corpus-10x --set sink.local_index=exact
# (corpora: `.build/debug/sluice-bench corpus --size-mb 10 [--copies 10] --out DIR`; docs/BENCHMARKS.md)
set -euo pipefail
name=$1; corpus=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=/tmp/sluice-mem/$name
bin=${SLUICE_BIN:-$root/.build/debug/sluice}
rm -rf "$out"; mkdir -p "$out"
cc -O2 -shared -fPIC -o "$out/mallinfo-probe.so" "$here/mem-probe/mallinfo-probe.c" -lpthread
cc -O2 -shared -fPIC -o "$out/lmdb-dirty-probe.so" "$here/mem-probe/lmdb-dirty-probe.c" -ldl -lpthread
cc -O2 -shared -fPIC -o "$out/peak-probe.so" "$here/mem-probe/peak-probe.c" -ldl -lpthread
# OMP_THREAD_LIMIT set: sluice does not re-execute itself (which would start a process without the probes' state).
OMP_THREAD_LIMIT=1 MI_OUT="$out/mi" LP_OUT="$out/lp" PP_OUT="$out/pp" \
    LD_PRELOAD="$out/mallinfo-probe.so:$out/lmdb-dirty-probe.so:$out/peak-probe.so" \
    /usr/bin/time -v -o "$out/time.txt" "$bin" run "$root/Pipelines/default.yaml" \
    --source "$corpus" --state "$out/state" --set sink.path="$out/store" --set 'source.include=["**/*"]' \
    --set embed.provider=hash --set chunk.strategy=recursive "$@" >"$out/run.log" 2>&1
python3 - "$out" <<'PY'
import glob, sys
out = sys.argv[1]
def rows(path, fields):
    return [dict(kv.split('=', 1) for kv in line.split()) for line in open(path) if line.count('=') == fields]
# The sluice process is the one with the largest RSS (/usr/bin/time is probed too).
runs = [rows(p, 9) for p in glob.glob(out + '/mi.*')]
samples = max((r for r in runs if r), key=lambda r: max(int(s['rss']) for s in r))
samples = [{k: int(v) for k, v in s.items()} for s in samples]
peak = max(samples, key=lambda s: s['rss'])
mb = lambda b: f"{b / 1048576:.1f}"
commits = [r for p in glob.glob(out + '/lp.*') for r in rows(p, 6)]
dirty = max((int(c['maxSingle']) for c in commits), default=0)
print(f"peak RSS {mb(peak['rss'])} MB: anonymous {mb(peak['rss'] - peak['filerss'])}, file-backed {mb(peak['filerss'])}")
print(f"  heap in use {mb(peak['inuse'])}, free in arenas {mb(peak['free'])} (trimmed or not), mmapped blocks {mb(peak['mmap'])}")
print(f"  free arena memory still resident ~{mb(peak['rss'] - peak['filerss'] - peak['inuse'] - peak['mmap'])}")
print(f"  most single dirty pages in one LMDB commit: {dirty} ({mb(dirty * 4096)} MB kept by LMDB), {len(commits)} commits")
# The highest RSS just before a release or trim (peak-probe.c), against the kernel's high-water mark.
hwm = max(s['hwm'] for s in samples)
moments = [{k: (v if k == 'event' else int(v)) for k, v in m.items()}
           for p in glob.glob(out + '/pp.*') for m in rows(p, 15)]
if moments:
    top = max(moments, key=lambda m: m['rss'])
    anon = top['rss'] - top['filerss']
    print(f"before a {top['event']}: RSS {mb(top['rss'])} MB (VmHWM {mb(hwm)}): anonymous {mb(anon)} = heap in use "
          f"{mb(top['inuse'])} + mmapped blocks {mb(top['mmap'])} + free heap resident ~{mb(anon - top['inuse'] - top['mmap'])}"
          f" (free in arenas {mb(top['free'])})")
    print(f"  file-backed {mb(top['filerss'])}: store's data.mdb {mb(top['store'])}, state's {mb(top['state'])}, "
          f"executable {mb(top['exe'])}, libraries {mb(top['libs'])}, other files {mb(top['otherfile'])}")
    print(f"  anonymous by mapping: brk heap {mb(top['brk'])}, other anonymous {mb(top['anonmaps'])}, main stack {mb(top['stacks'])}; "
          f"glibc arenas {top['arenas']}")
PY
grep "Maximum resident" "$out/time.txt"
