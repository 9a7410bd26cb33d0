#!/usr/bin/env python3
"""Replays families of score-fusion rules against issue 31's bar, on both judged sets at once.

  Benchmarks/retrieval/fusion_grid.py --records records.jsonl --tuning tuning.json --heldout heldout.json

`records.jsonl` is `sluice export`'s output for the index; `tuning.json` and `heldout.json` are
`replay.py fetch`'s rankings for queries.jsonl and heldout.jsonl (only their vector rankings are used: the
keyword rankings are keyword_replay.py's BM25 over the records, the index's own). Each rule is scored as
replay.py scores (top 50 of each ranking fused, copies collapsed, nDCG@10 per kind), and checked against the
bar: at least the better of vector and keyword alone on every kind, above both on natural questions. Rules
meeting it on the tuning set come first, then by the tuning set's nDCG@10; the held-out figures are printed
beside them, for reading, not for choosing.

Families (2026-11-29, issue 31):
- `minmax` / `byfirst`: today's rule (ScoreFusion.swift) with the vector scores min-max normalized in their
  ranking, or divided by its first (a flat vector ranking stays flat), over the vector weight, the question
  weight and the keyword flatness ramp;
- `floor`: min-max with the vector ranking's n-th score as its floor (records below it add nothing);
- `vgap`: the vector weight also scaled by how far the vector ranking's first stands out, (v1 − v2) / (v1 − v10);
- `shape`: a query of plain words only, shorter than a question in words, gets its own vector weight.
Standard library only.
"""
import argparse, itertools, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate, keyword_replay, replay  # noqa: E402

KINDS = replay.KINDS


def combine(vector, keyword, weight, normalized_vector):
    nk = replay.by_max(keyword)
    records = {r["id"]: r for r in keyword}
    records.update({r["id"]: r for r in vector})
    in_vector = {r["id"] for r in vector}
    order = [r["id"] for r in vector] + [r["id"] for r in keyword if r["id"] not in in_vector]
    position = {x: i for i, x in enumerate(order)}
    score = {x: weight * normalized_vector.get(x, 0) + (1 - weight) * nk.get(x, 0) for x in records}
    return [records[x] for x in sorted(records, key=lambda x: (-score[x], position[x]))]


def doubt(keyword, low, high):
    if not keyword:
        return 1.0
    if len(keyword) < 10 or keyword[0]["score"] <= 0:
        return 0.0
    return min(1, max(0, (keyword[9]["score"] / keyword[0]["score"] - low) / (high - low)))


def min_max(vector, floor_rank=None):
    if not vector:
        return {}
    high, low = vector[0]["score"], min(r["score"] for r in vector)
    if floor_rank is not None and len(vector) > floor_rank:
        low = vector[floor_rank]["score"]
    return {r["id"]: max(0.0, (r["score"] - low) / (high - low)) if high > low else 1.0 for r in vector}


def by_first(vector):
    if not vector or vector[0]["score"] <= 0 or min(r["score"] for r in vector) < 0:
        return min_max(vector)
    return {r["id"]: r["score"] / vector[0]["score"] for r in vector}


def plain_words_only(query):
    words = [w.strip(replay.PUNCTUATION) for w in query.split()]
    return all(replay.question_in_words(w, 1) for w in words if w)


def rule(alpha, question_alpha, low=0.3, high=0.8, normalize="minmax", floor_rank=None, gap=None, words_alpha=None):
    def for_query(q):
        if replay.lookup_of_codes(q["query"]):
            largest = 0.0
        elif replay.question_in_words(q["query"]):
            largest = question_alpha
        elif words_alpha is not None and plain_words_only(q["query"]):
            largest = words_alpha
        else:
            largest = alpha

        def fuse(vector, keyword):
            weight = largest * doubt(keyword, low, high)
            if gap and len(vector) >= 10:
                spread = max(1e-9, vector[0]["score"] - vector[9]["score"])
                weight *= min(1, max(0, ((vector[0]["score"] - vector[1]["score"]) / spread - gap[0]) / (gap[1] - gap[0])))
            normalized = by_first(vector) if normalize == "byfirst" else min_max(vector, floor_rank)
            return combine(vector, keyword, weight, normalized)
        return fuse
    return for_query


def score(sets, for_query):
    out = {}
    for name, (queries, rankings) in sets.items():
        per_kind = {}
        for q in queries:
            vector, keyword = rankings[q["id"]]
            ndcg = evaluate.score(replay.collapse(for_query(q)(vector, keyword)), q["relevant"])[2]
            for kind in (q["kind"], "all"):
                per_kind.setdefault(kind, []).append(ndcg)
        out[name] = {kind: sum(v) / len(v) for kind, v in per_kind.items()}
    return out


def misses(result, parts, name):
    bad = []
    for kind in KINDS[1:]:
        best = max(parts["vector"][name].get(kind, 0), parts["keyword"][name].get(kind, 0))
        value = result[name].get(kind, 0)
        if (value <= best + 1e-9) if kind == "natural" else (value < best - 1e-9):
            bad.append(kind)
    return bad


def rules():
    for normalize, a, qa, (low, high) in itertools.product(
            ["minmax", "byfirst"], [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5], [0.5, 0.6, 0.7, 0.8, 0.9],
            [(0.3, 0.8), (0.2, 0.8), (0.3, 1.0), (0.1, 0.6)]):
        yield f"{normalize} {a}/{qa}/{low}-{high}", rule(a, qa, low, high, normalize)
    for floor_rank in [5, 10, 20, 30]:
        yield f"floor {floor_rank} 0.15/0.7/0.3-0.8", rule(0.15, 0.7, floor_rank=floor_rank)
    for a, qa, gap in itertools.product([0.15, 0.3, 0.5], [0.7, 0.9], [(0.0, 0.3), (0.0, 0.5), (0.1, 0.5), (0.2, 0.6)]):
        yield f"vgap {gap[0]}-{gap[1]} {a}/{qa}/0.3-0.8", rule(a, qa, gap=gap)
    for a, words in itertools.product([0.1, 0.15, 0.2], [0, 0.05, 0.1, 0.15, 0.3]):
        yield f"shape words {words} {a}/0.7/0.3-0.8", rule(a, 0.7, words_alpha=words)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", required=True)
    parser.add_argument("--tuning", required=True, help="replay.py fetch's rankings for queries.jsonl")
    parser.add_argument("--heldout", required=True, help="replay.py fetch's rankings for heldout.jsonl")
    parser.add_argument("--top", type=int, default=20, help="rules to print")
    options = parser.parse_args()
    records = [json.loads(line) for line in open(options.records, encoding="utf-8") if line.strip()]
    index = keyword_replay.Index(records)
    sets = {}
    for name, file, rankings_file in [("tuning", "queries.jsonl", options.tuning), ("heldout", "heldout.jsonl", options.heldout)]:
        queries = evaluate.load_queries(os.path.join(HERE, file))
        fetched = json.load(open(rankings_file, encoding="utf-8"))
        sets[name] = (queries, {q["id"]: (fetched[q["id"]]["vector"][:replay.DEPTH], index.search(q["query"], replay.DEPTH))
                                for q in queries})
    parts = {"vector": score(sets, lambda q: lambda v, k: v), "keyword": score(sets, lambda q: lambda v, k: k)}
    results = []
    for label, for_query in rules():
        result = score(sets, for_query)
        results.append((len(misses(result, parts, "tuning")), -result["tuning"]["all"], label, result))
    results.sort(key=lambda x: x[:2])
    print(f"{len(results)} rules; nDCG@10 tuning / held out; the kinds below the bar")
    for _, _, label, result in results[:options.top]:
        print(f"{label:34} {result['tuning']['all']:.3f} / {result['heldout']['all']:.3f}  "
              f"tuning: {', '.join(misses(result, parts, 'tuning')) or 'met'};  held out: {', '.join(misses(result, parts, 'heldout')) or 'met'}")


if __name__ == "__main__":
    main()
