#!/usr/bin/env python3
"""Per-thread CPU and off-CPU time of a command, from /proc (issue 33 goal 1; docs/BENCHMARKS.md,
"What serialises the local store's load").

    thread_times.py [--json FILE] -- COMMAND ARGS...

Samples /proc/PID/task/*/{comm,schedstat,stat} every 10 ms while COMMAND runs and keeps each thread's last
sample. For every thread: its life (first start to last sample), its run time and its run-queue wait (the
first two fields of schedstat: on a CPU, and runnable but not on one), and the rest of its life, off-CPU
(asleep: blocked in a system call such as fdatasync, or parked waiting for work). Threads are grouped by name
with the trailing `-N` index dropped (`sl-local-sink-0` -> `sl-local-sink`). Counts, not wall times alone,
survive a loaded machine: run time is CPU; off-CPU time of a thread that only waits for the disk is the disk.
"""
import json
import os
import re
import subprocess
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def uptime():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def sample(pid, threads, now):
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return False
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        try:
            with open(base + "/comm") as f:
                comm = f.read().strip()
            with open(base + "/schedstat") as f:
                run_ns, wait_ns, slices = (int(x) for x in f.read().split())
            with open(base + "/stat") as f:
                stat = f.read()
            with open(base + "/status") as f:
                status = f.read()
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        start = int(fields[19]) / TICKS  # field 22: starttime, in ticks since boot
        voluntary = int(re.search(r"voluntary_ctxt_switches:\s+(\d+)", status).group(1))
        involuntary = int(re.search(r"nonvoluntary_ctxt_switches:\s+(\d+)", status).group(1))
        threads[tid] = dict(
            comm=comm, start=start, last=now, run=run_ns / 1e9, wait=wait_ns / 1e9, slices=slices,
            voluntary=voluntary, involuntary=involuntary,
        )
    return True


def main():
    args = sys.argv[1:]
    out = None
    if args[:1] == ["--json"]:
        out, args = args[1], args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    threads = {}
    began = uptime()
    process = subprocess.Popen(args)
    while True:
        sample(process.pid, threads, uptime())
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid == process.pid:
            break
        time.sleep(0.01)
    wall = uptime() - began
    code = os.waitstatus_to_exitcode(status)
    groups = {}
    for t in threads.values():
        name = re.sub(r"-\d+$", "", t["comm"])
        g = groups.setdefault(name, dict(threads=0, life=0.0, run=0.0, wait=0.0, off=0.0, voluntary=0, involuntary=0))
        life = max(0.0, t["last"] - max(t["start"], began))
        g["threads"] += 1
        g["life"] += life
        g["run"] += t["run"]
        g["wait"] += t["wait"]
        g["off"] += max(0.0, life - t["run"] - t["wait"])
        g["voluntary"] += t["voluntary"]
        g["involuntary"] += t["involuntary"]
    print(f"wall {wall:.2f} s, user {usage.ru_utime:.2f} s, system {usage.ru_stime:.2f} s, exit {code}", file=sys.stderr)
    print(f"{'thread':<18}{'n':>3}{'life s':>9}{'run s':>8}{'runq s':>8}{'off s':>8}{'vol cs':>9}{'invol':>7}", file=sys.stderr)
    for name, g in sorted(groups.items(), key=lambda kv: -kv[1]["run"]):
        print(
            f"{name:<18}{g['threads']:>3}{g['life']:>9.2f}{g['run']:>8.2f}{g['wait']:>8.2f}{g['off']:>8.2f}"
            f"{g['voluntary']:>9}{g['involuntary']:>7}",
            file=sys.stderr,
        )
    if out:
        with open(out, "w") as f:
            json.dump(dict(wall=wall, user=usage.ru_utime, system=usage.ru_stime, exit=code, groups=groups), f, indent=1)
    sys.exit(code)


if __name__ == "__main__":
    main()
