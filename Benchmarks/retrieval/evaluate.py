#!/usr/bin/env python3
"""Scores `sluice search` on the judged query set: a thin wrapper over `sluice eval`, and the reference scoring.

  Benchmarks/retrieval/evaluate.py [--sluice PATH] [--pipeline FILE] [--mode MODE ...] [--json]

Runs `sluice run PIPELINE` first (a no-op when the index is current), then `sluice eval PIPELINE --queries
queries.jsonl [--mode MODE ...] [--json]`, which prints recall@5, recall@10, MRR and nDCG@10 per mode and
kind (docs/USAGE.md, "Retrieval quality"). Standard library only.

The functions below are the scoring rules in Python, which `sluice eval` reproduces (EvalCLITests checks
that both give the same figures over `sluice search --json`); replay.py scores its replayed rankings with
them. A retrieved chunk hits a relevant entry when its document key is the entry's key, its page is the
entry's page (when the entry gives one), and its text contains the entry's phrase (runs of whitespace
compared as one space). Each relevant entry counts once: recall@k is the share of a query's entries hit
within the first k results; nDCG@10 uses binary gains (a result that hits an entry not hit before gains 1)
over the ideal ranking of min(entries, 10) hits. Scores are means over queries.
"""
import argparse, json, math, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def squash(text):
    return re.sub(r"\s+", " ", text).strip()


def load_queries(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def field(result, *names):
    for name in names:
        if name in result:
            return result[name]
    return None


def hits(result, relevant):
    """Indexes of the relevant entries this result hits. A result stands for every document holding its
    text (identical texts collapse into one result listing the others under `duplicates`)."""
    metadata = result.get("metadata") or {}
    holders = [(field(result, "document_key", "documentKey", "document"), field(result, "page") or metadata.get("page"))]
    holders += [(d.get("document_key"), d.get("page")) for d in result.get("duplicates") or []]
    text = squash(field(result, "text") or "")
    found = []
    for index, entry in enumerate(relevant):
        for key, page in holders:
            if entry["key"] != key:
                continue
            if "page" in entry and str(entry["page"]) != str(page):
                continue
            if squash(entry.get("contains", "")) in text:  # no phrase: any chunk of the document (page)
                found.append(index)
                break
    return found


def score(results, relevant):
    seen = {}  # relevant entry -> the rank of the first result that hit it
    dcg = 0.0
    for rank, result in enumerate(results[:10], start=1):
        new = [i for i in hits(result, relevant) if i not in seen]
        for i in new:
            seen[i] = rank
        if new:  # a result gains once, however many entries it hits (one per document and page: at most one)
            dcg += 1 / math.log2(rank + 1)
    recall5 = sum(1 for rank in seen.values() if rank <= 5) / len(relevant)
    recall10 = len(seen) / len(relevant)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(relevant), 10) + 1))
    return recall5, recall10, dcg / ideal


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sluice", default=os.path.join(ROOT, ".build", "release", "sluice"))
    parser.add_argument("--pipeline", default=os.path.join(ROOT, "Pipelines", "default.yaml"))
    parser.add_argument("--queries", default=os.path.join(HERE, "queries.jsonl"))
    parser.add_argument("--mode", action="append", default=[], help="search mode(s) to score (default: the store's default)")
    parser.add_argument("--json", action="store_true", help="print the scores as one JSON object")
    options = parser.parse_args()

    run = subprocess.run([options.sluice, "run", options.pipeline, "--quiet"], capture_output=True, text=True)
    if run.returncode not in (0, 2):
        sys.exit(f"evaluate: sluice run exited {run.returncode}: {run.stderr.strip()[-500:]}")
    command = [options.sluice, "eval", options.pipeline, "--queries", options.queries]
    command += [a for mode in options.mode for a in ("--mode", mode)] + (["--json"] if options.json else [])
    sys.exit(subprocess.run(command).returncode)


if __name__ == "__main__":
    main()
