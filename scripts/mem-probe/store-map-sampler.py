#!/usr/bin/env python3
# The local store's map over a run: every 0.5 s, for each running `sluice run` whose sink.path is under PREFIX
# (default /tmp/sluice-mem/, where scripts/bench-run-memory.sh puts its stores), the resident KB of its store's
# data.mdb mapping (the Rss lines of /proc/PID/smaps) and of the whole process (VmRSS). Appends
# "seconds store_kb rss_kb" lines to OUT/NAME.tsv (NAME: the folder the store is in), seconds counted from the
# first sample of that process. Runs until killed; start it before the runs, e.g.
#   scripts/mem-probe/store-map-sampler.py /tmp/store-map & SLUICE_BIN=… scripts/bench-run-memory.sh NAME …
# The peak probe (peak-probe.c) gives the map at the peak moment; this gives it over the whole run (the graph's
# build after the load's writes, for instance).
import os, re, sys, time

out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/store-map'
prefix = sys.argv[2] if len(sys.argv) > 2 else '/tmp/sluice-mem/'
os.makedirs(out, exist_ok=True)
pattern = re.compile(rb'sink\.path=' + re.escape(prefix.encode()) + rb'([^/ ]+)/store')
files = {}
while True:
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            command = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\0')
            if len(command) < 2 or not command[0].endswith(b'sluice') or command[1] != b'run':
                continue
            match = pattern.search(b' '.join(command))
            if not match:
                continue
            name = match.group(1).decode()
            store = f'{prefix}{name}/store/data.mdb'
            smaps = open(f'/proc/{pid}/smaps').read()
            rss = int(re.search(r'VmRSS:\s+(\d+)', open(f'/proc/{pid}/status').read()).group(1))
        except (OSError, AttributeError):
            continue
        store_kb, inside = 0, False
        for line in smaps.split('\n'):
            if re.match(r'^[0-9a-f]+-[0-9a-f]+ ', line):
                inside = line.endswith(store)
            elif inside and line.startswith('Rss:'):
                store_kb += int(line.split()[1])
        if (name, pid) not in files:
            files[(name, pid)] = (open(f'{out}/{name}.tsv', 'a'), time.time())
        file, start = files[(name, pid)]
        file.write(f'{time.time() - start:.1f}\t{store_kb}\t{rss}\n')
        file.flush()
    time.sleep(0.5)
