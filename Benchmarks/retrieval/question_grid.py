#!/usr/bin/env python3
"""Replays rules for a question in words that overturns a keyword lead, on the three judged sets and both stores.

  Benchmarks/retrieval/question_grid.py --rankings DIR [--sets queries,heldout,heldout2]

`DIR` holds `replay.py fetch`'s rankings as `r-<store>-<set>.json` (store `local` and `pg`, set the query
file's name without `.jsonl`). Each rule changes only the largest vector weight of a question in words
(QueryShape.swift, the question weight 0.8 today); everything else is `replay.score_fusion`. A rule is checked
against issue 31's bar on every store and set: at least the better of vector and keyword alone on every kind,
above both on natural questions; and against today's default: no set's overall or natural figure lower. Printed
per rule: the store/set/kinds newly below the bar, those no longer below it, and the figures it lowers.

Families (session 33, 2026-11-30; README, "A fourth set, written blind"):
- `lead a-b`: the question weight falls towards the ordinary vector weight as keyword's first stands out,
  its lead (k1 − k2) / (k1 − k10) going from a to b;
- `absent N`: the ordinary vector weight when keyword's first is not in the vector ranking's first N;
- `rows F`: weight F when keyword's first is a table's row or a JSON file's record (`replay.ROW_FORMATS`):
  the sentence embedder ranks those poorly, so a question's vector ranking is no better judge of them.
Standard library only.
"""
import argparse, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate, replay  # noqa: E402

KINDS = replay.KINDS
QUESTION, VECTOR = 0.8, 0.15


def lead(keyword):
    if len(keyword) < 10 or keyword[0]["score"] <= 0:
        return None
    k1, k2, k10 = keyword[0]["score"], keyword[1]["score"], keyword[9]["score"]
    return (k1 - k2) / (k1 - k10) if k1 > k10 else 0.0


def question_rule(largest):
    """`replay.score_fusion(question_alpha=0.8)` with `largest(vector, keyword)` as a question's largest weight."""
    def for_query(q):
        if replay.lookup_of_codes(q["query"]):
            return replay.keyword_flat(alpha_max=0.0)
        if not replay.question_in_words(q["query"]):
            return replay.keyword_flat(alpha_max=VECTOR)
        return lambda vector, keyword: replay.keyword_flat(alpha_max=largest(vector, keyword))(vector, keyword)
    return for_query


def by_lead(a, b):
    def largest(vector, keyword):
        x = lead(keyword)
        if x is None:
            return QUESTION
        return VECTOR + (QUESTION - VECTOR) * (1 - min(1, max(0, (x - a) / (b - a))))
    return largest


def by_absence(n):
    return lambda vector, keyword: VECTOR if keyword and keyword[0]["id"] not in {h["id"] for h in vector[:n]} else QUESTION


def by_rows(weight):
    return lambda vector, keyword: weight if keyword and replay.is_row_or_record(keyword[0]) else QUESTION


def per_kind(rankings, queries, fuse):
    found = {}
    for q in queries:
        vector, keyword = rankings[q["id"]]["vector"][:replay.DEPTH], rankings[q["id"]]["keyword"][:replay.DEPTH]
        rule = fuse(q) if getattr(fuse, "__name__", "") == "for_query" else fuse
        ndcg = evaluate.score(replay.collapse(rule(vector, keyword)), q["relevant"])[2]
        found.setdefault(q["kind"], []).append(ndcg)
        found.setdefault("all", []).append(ndcg)
    return {kind: sum(v) / len(v) for kind, v in found.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rankings", required=True, help="folder of replay.py fetch's r-<store>-<set>.json")
    parser.add_argument("--sets", default="queries,heldout,heldout2")
    options = parser.parse_args()
    data = {}
    for store in ("local", "pg"):
        for name in options.sets.split(","):
            with open(os.path.join(options.rankings, f"r-{store}-{name}.json"), encoding="utf-8") as f:
                data[(store, name)] = (replay.json.load(f), evaluate.load_queries(os.path.join(HERE, f"{name}.jsonl")))
    parts = {key: {"vector": per_kind(r, qs, lambda v, k: v), "keyword": per_kind(r, qs, lambda v, k: k),
                   "default": per_kind(r, qs, replay.score_fusion(question_alpha=QUESTION))}
             for key, (r, qs) in data.items()}

    def verdict(fuse):
        below, lower = [], []
        for key, (r, qs) in data.items():
            got, p = per_kind(r, qs, fuse), parts[key]
            for kind in KINDS[1:]:
                if kind not in got:
                    continue
                best = max(p["vector"][kind], p["keyword"][kind])
                if not (got[kind] > best + 1e-9 if kind == "natural" else got[kind] >= best - 1e-9):
                    below.append(f"{key[0]}/{key[1]}/{kind}")
            lower += [f"{key[0]}/{key[1]}/{kind}" for kind in ("all", "natural") if got[kind] < p["default"][kind] - 1e-9]
        return below, lower

    today, _ = verdict(replay.score_fusion(question_alpha=QUESTION))
    print("today's default (question weight 0.8) below the bar:", ", ".join(today) or "nowhere")
    rules = [(f"lead {a}-{b}", question_rule(by_lead(a, b)))
             for a in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5) for b in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0) if b > a]
    rules += [(f"absent {n}", question_rule(by_absence(n))) for n in (5, 10, 20, 30, 50)]
    rules += [(f"rows {w}", question_rule(by_rows(w))) for w in (0.0, 0.15, 0.3, 0.4, 0.5, 0.6, 0.7)]
    for name, fuse in rules:
        below, lower = verdict(fuse)
        new = [x for x in below if x not in today]
        fixed = [x for x in today if x not in below]
        print(f"{name:12} newly below: {', '.join(new) or '-'} | no longer below: {', '.join(fixed) or '-'} | "
              f"lowers: {', '.join(lower) or '-'}")


if __name__ == "__main__":
    main()
