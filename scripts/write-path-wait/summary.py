#!/usr/bin/env python3
"""Medians of runs.sh's runs, per configuration (issue 33 goal 1; docs/BENCHMARKS.md):

    summary.py OUT [OUT...]

For each CONFIG-N.json under the folders: wall, user + system CPU, and for the store's writer
(`sl-local-sink`), the syncer (`sl-local-sync`) and the state's thread (`sl-state`) their run,
run-queue and off-CPU seconds; medians over the runs, with the range of wall and CPU; and, from the run's
CONFIG-N.stats.json, the upsert stage's workers' busy and starved seconds (all workers together: busy near
workers × wall means the stage is what the run waits for).
"""
import glob
import json
import os
import re
import statistics
import sys

runs = {}
for folder in sys.argv[1:]:
    for path in glob.glob(os.path.join(folder, "*-[0-9]*.json")):
        if path.endswith(".stats.json"):
            continue
        config = re.sub(r"-\d+\.json$", "", os.path.basename(path))
        label = re.sub(r"-\d+$", "", os.path.basename(os.path.normpath(folder)))
        run = json.load(open(path))
        stats = path[: -len(".json")] + ".stats.json"
        if os.path.exists(stats):
            phases = json.load(open(stats)).get("phases", [])
            run["upsert"] = next((p for p in phases if p.get("name") == "upsert"), None)
        runs.setdefault(f"{label}/{config}", []).append(run)


def med(values):
    return statistics.median(values) if values else float("nan")


for name, items in sorted(runs.items()):
    wall = [r["wall"] for r in items]
    cpu = [r["user"] + r["system"] for r in items]
    line = f"{name:<22} n={len(items)} wall {med(wall):.2f} ({min(wall):.2f}-{max(wall):.2f}) cpu {med(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f})"
    for thread in ("sl-local-sink", "sl-local-sync", "sl-state"):
        groups = [r["groups"][thread] for r in items if thread in r["groups"]]
        if groups:
            line += (
                f" | {thread} run {med([g['run'] for g in groups]):.2f} runq {med([g['wait'] for g in groups]):.2f}"
                f" off {med([g['off'] for g in groups]):.2f} vcs {med([g['voluntary'] for g in groups]):.0f}"
            )
    upserts = [r["upsert"] for r in items if r.get("upsert")]
    if upserts:
        line += (
            f" | upsert x{upserts[0]['workers']} busy {med([u['busy_s'] for u in upserts]):.2f}"
            f" starved {med([u['starved_s'] for u in upserts]):.2f}"
        )
    print(line)
