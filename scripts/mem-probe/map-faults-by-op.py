#!/usr/bin/env python3
"""Which operations fault an LMDB map in: a run's page faults in the map, by LMDB operation and caller.

Record a release run with sampled faults (their addresses and stacks) and the releaser's madvise calls:
  OMP_THREAD_LIMIT=1 perf record -e page-faults/period=10,call-graph=dwarf,stack-size=4096/ \
      -e syscalls:sys_enter_madvise/call-graph=no/ -c 1 -d -o pf.data -- sluice run … --set sink.path=STORE
  perf script -i pf.data --show-mmap-events | grep 'r--s STORE/data.mdb'      # the map's start address
  perf script -i pf.data -F comm,tid,time,event,addr,ip,sym,dso,trace > pf.txt
  scripts/mem-probe/map-faults-by-op.py pf.txt 0xSTART [PERIOD]
Prints the map's faults over the run by operation (`get in KeywordIndexV4kill`: an LMDBTransaction.get called
from KeywordIndex.kill), then the same over the windows between two releases (MADV_DONTNEED of the map) that
took the most faults: what the map holds when it is largest. Faults are counts, not pages: each may map up to
16 cached neighbours with it (fault-around).
"""
import bisect
import collections
import re
import sys

path, start = sys.argv[1], int(sys.argv[2], 16)
period = int(sys.argv[3]) if len(sys.argv) > 3 else 10
end = start + 0x4000000000  # the store's map size (256 GB); faults past the file's end cannot happen
callers = ('KeywordIndexV4kill', 'KeywordIndexV3add', 'KeywordIndexV9planMerge', 'KeywordIndexV5apply',
           'KeywordIndexV5flush', 'LocalSinkC6commit', 'LocalSinkC11beginChange', 'KeywordIndex', 'LocalSink')


def classify(frames, comm):
    op = None
    for frame in frames:
        name = frame.split(' (')[0]
        if op is None:
            if 'mdb_txn_commit' in frame:
                return 'commit'
            for key, label in (('LMDBTransactionV3get', 'get'), ('LMDBTransactionV3put', 'put'),
                               ('LMDBTransactionV11deleteRange', 'deleteRange'), ('LMDBTransactionV6delete', 'delete'),
                               ('LMDBTransactionV7forEach', 'forEach')):
                if key in frame:
                    op = label
        if op and 'SluiceSinks' in name:
            return f'{op} in ' + next((c for c in callers if c in name), name[:60])
    return f'{op or "other"} ({comm})'


faults, releases = [], []  # (time, class), time
block = []


def flush(block):
    if not block:
        return
    head = block[0]
    when = re.search(r' (\d+\.\d+):', head)
    if not when:
        return
    if 'sys_enter_madvise' in head:
        m = re.search(r'start: (0x[0-9a-f]+)', head)
        if m and int(m.group(1), 16) == start and 'behavior: 0x00000004' in head:
            releases.append(float(when.group(1)))
        return
    m = re.search(r'page-faults\S*:\s+([0-9a-f]+)', head)
    if m and start <= int(m.group(1), 16) < end:
        frames = [re.sub(r'^\s*[0-9a-f]+ ', '', line) for line in block[1:]]
        faults.append((float(when.group(1)), classify(frames, head.split()[0])))


header = re.compile(r'^\s*\S.*?\s\d+\s+\d+\.\d+:')
for line in open(path, errors='replace'):
    if not line.strip():
        continue
    if header.match(line):  # a sample's first line (a comm may start with a space); its stack lines follow
        flush(block)
        block = [line.rstrip()]
    else:
        block.append(line.rstrip())
flush(block)
faults.sort()
releases.sort()


def report(counter, title):
    total = sum(counter.values()) or 1
    print(title)
    for name, count in counter.most_common(10):
        print(f'  {count * period:9d} {100 * count / total:5.1f}%  {name}')


report(collections.Counter(c for _, c in faults), f'faults in the map (1 in {period} sampled, scaled), '
       f'{len(releases)} releases of it')
times = [t for t, _ in faults]
windows = []
for a, b in zip(releases, releases[1:]):
    lo, hi = bisect.bisect_left(times, a), bisect.bisect_left(times, b)
    windows.append((hi - lo, lo, hi))
windows.sort(reverse=True)
sizes = sorted(n for n, _, _ in windows)
if sizes:
    print(f'faults between two releases: median {sizes[len(sizes) // 2] * period}, '
          f'p99 {sizes[int(len(sizes) * 0.99)] * period}, most {sizes[-1] * period}')
top = collections.Counter()
for _, lo, hi in windows[:200]:
    top.update(c for _, c in faults[lo:hi])
report(top, 'the 200 windows between two releases with the most faults')
