#!/usr/bin/env python3
"""Replays fusion rules on the judged query set without rebuilding Sluice.

  Benchmarks/retrieval/replay.py fetch [--sluice PATH] [--pipeline FILE] [--queries FILE] [--out rankings.json]
  Benchmarks/retrieval/replay.py score [--rankings rankings.json] [--queries FILE]

`fetch` asks `sluice search --no-collapse -k 100 --json` for each query's vector and keyword rankings (with
their scores) once. `score` fuses the first 50 of each (the depth `sluice search` fuses at k = 10), collapses
identical texts as `sluice search` does, and scores the top 10 with evaluate.py's rules (nDCG@10 per kind),
for each rule below: reciprocal rank fusion as `Searcher` does it (its replay reproduces the measured
figures), a convex combination of min-max normalized scores, and that combination weighted per query by
how confident each ranking is (the vector ranking's top cosine, the keyword ranking's drop from its first to
its tenth score), and `sluice search`'s score fusion (the default: the vector weight from the keyword
ranking's flatness alone, with a larger weight for a question in words and none for a look-up of codes), and
the candidate of session 33 (`score_fusion(rows=True)`: a question in words whose keyword ranking's first is
a row or a record keeps the ordinary vector weight).
`--queries heldout.jsonl` replays the held-out set. Standard library only; evaluate.py's scoring is imported, so both count hits alike.
"""
import argparse, json, os, subprocess, sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import evaluate  # noqa: E402

DEPTH = 50
KINDS = ["all", "natural", "exact", "table-row", "json-record", "pdf-page", "heading", "scan"]


def fetch(options):
    queries = evaluate.load_queries(options.queries)
    rankings = {}
    for q in queries:
        rankings[q["id"]] = {}
        for mode in ["vector", "keyword"]:
            command = [options.sluice, "search", "-k", "100", "--json", "--no-collapse", "--mode", mode, "--", q["query"], options.pipeline]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"replay: sluice search exited {done.returncode}: {done.stderr.strip()[-500:]}")
            rankings[q["id"]][mode] = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    with open(options.out, "w", encoding="utf-8") as f:
        json.dump(rankings, f)
    print(f"{len(rankings)} queries' rankings in {options.out}")


def collapse(ranked, k=10):
    out, by_text = [], {}
    for result in ranked:
        text = evaluate.squash(result["text"])
        if text in by_text:
            out[by_text[text]]["duplicates"].append({"document_key": result["document_key"], "page": result.get("page")})
            continue
        if len(out) >= k:
            continue
        result = dict(result, duplicates=[])
        by_text[text] = len(out)
        out.append(result)
    return out


def rrf(k):
    def fuse(vector, keyword):
        scores, records, order = defaultdict(float), {}, []
        for ranking in (vector, keyword):
            for rank, r in enumerate(ranking):
                if r["id"] not in records:
                    records[r["id"]] = r
                    order.append(r["id"])
                scores[r["id"]] += 1 / (k + rank + 1)
        position = {x: i for i, x in enumerate(order)}
        return [records[x] for x in sorted(order, key=lambda x: (-scores[x], position[x]))]
    return fuse


def min_max(ranking):
    if not ranking:
        return {}
    low, high = min(r["score"] for r in ranking), max(r["score"] for r in ranking)
    return {r["id"]: (r["score"] - low) / (high - low) if high > low else 1.0 for r in ranking}


def by_max(ranking):
    """Scores over the ranking's first (BM25 is never negative): its last hit stays above a record it lacks."""
    if not ranking:
        return {}
    high = max(r["score"] for r in ranking)
    return {r["id"]: r["score"] / high if high > 0 else 0.0 for r in ranking}


def convex(alpha, keyword_norm=min_max):
    """alpha × the vector score + (1 − alpha) × the keyword score, the vector score min-max normalized in its
    ranking, the keyword score by `keyword_norm`."""
    def fuse(vector, keyword):
        nv, nk = min_max(vector), keyword_norm(keyword)
        records = {r["id"]: r for r in keyword}
        records.update({r["id"]: r for r in vector})
        order = [r["id"] for r in vector] + [r["id"] for r in keyword if r["id"] not in nv]
        position = {x: i for i, x in enumerate(order)}
        score = {x: alpha * nv.get(x, 0) + (1 - alpha) * nk.get(x, 0) for x in records}
        return [records[x] for x in sorted(records, key=lambda x: (-score[x], position[x]))]
    return fuse


def confident(cos_low, cos_high, alpha_max, drop_low, drop_high, keyword_norm=min_max):
    """`convex`, with alpha per query: alpha_max scaled by how far the vector ranking's top cosine is between
    cos_low and cos_high, and by how flat the keyword ranking is (its tenth score over its first, between
    drop_low and drop_high: a steep keyword ranking is a confident one)."""
    def fuse(vector, keyword):
        top = vector[0]["score"] if vector else 0
        vector_confidence = min(1, max(0, (top - cos_low) / (cos_high - cos_low)))
        flat = keyword[9]["score"] / keyword[0]["score"] if len(keyword) >= 10 else (0.0 if keyword else 1.0)
        keyword_doubt = min(1, max(0, (flat - drop_low) / (drop_high - drop_low)))
        return convex(alpha_max * vector_confidence * keyword_doubt, keyword_norm)(vector, keyword)
    return fuse


def keyword_flat(alpha_max=0.15, drop_low=0.3, drop_high=0.8):
    """`sluice search --fusion score` (ScoreFusion.swift): `convex` with keyword scores over the first and
    alpha = alpha_max × how flat the keyword ranking is (its tenth score over its first, from drop_low to
    drop_high; fewer than ten hits: 0; none: 1)."""
    def fuse(vector, keyword):
        if not keyword:
            doubt = 1.0
        elif len(keyword) < 10 or keyword[0]["score"] <= 0:
            doubt = 0.0
        else:
            doubt = min(1, max(0, (keyword[9]["score"] / keyword[0]["score"] - drop_low) / (drop_high - drop_low)))
        return convex(alpha_max * doubt, by_max)(vector, keyword)
    return fuse


PUNCTUATION = "?,:;!\"'()"


def question_in_words(query, minimum_words=9):
    """QueryShape.swift: at least `minimum_words` words, each plain letters (a capital only first) or a plural
    acronym (`UIDs`: two or more capitals and an `s`) once the punctuation around it is stripped."""
    words = [w.strip(PUNCTUATION) for w in query.split()]
    words = [w for w in words if w]
    plain = lambda w: w[0].isalpha() and all(c.isalpha() and c.islower() for c in w[1:])
    plural_acronym = lambda w: len(w) >= 3 and w[-1] == "s" and all(c.isalpha() and c.isupper() for c in w[:-1])
    return len(words) >= minimum_words and all(plain(w) or plural_acronym(w) for w in words)


def lookup_of_codes(query):
    """QueryShape.swift: no word is plain letters (`path.sep`, `DEVRANDOM_WAIT`, `RFC 7159`)."""
    words = [w.strip(PUNCTUATION) for w in query.split()]
    words = [w for w in words if w]
    return bool(words) and not any(question_in_words(w, 1) for w in words)


# The formats whose chunks are rows of a table or records of a JSON file (KeywordIndex+Units.swift scores them
# row by row, record by record), as the extractors name them in the chunk's `format` metadata.
ROW_FORMATS = {"csv", "tsv", "xlsx", "ods", "json", "jsonl"}


def is_row_or_record(hit):
    return (hit.get("metadata") or {}).get("format") in ROW_FORMATS


def score_fusion(alpha_max=0.15, question_alpha=0.7, minimum_words=9, lookups=True, rows=False):
    """`sluice search --fusion score` today: `keyword_flat` with `question_alpha` as the largest vector weight
    for a question in words (`search.question_weight`), 0 for a look-up of codes (`lookups`), `alpha_max`
    for every other query. With `rows` (the candidate of session 33, README "A fourth set"), a question in
    words whose keyword ranking's first is a table's rows or a JSON file's records keeps `alpha_max`: the
    sentence embedder ranks terse rows and records poorly, so its ranking is no better judge of them for a
    question than for any other query."""
    def for_query(q):
        if lookups and lookup_of_codes(q["query"]):
            return keyword_flat(alpha_max=0.0)
        words = question_in_words(q["query"], minimum_words)
        if words and rows:
            def fuse(vector, keyword):
                largest = alpha_max if keyword and is_row_or_record(keyword[0]) else question_alpha
                return keyword_flat(alpha_max=largest)(vector, keyword)
            return fuse
        return keyword_flat(alpha_max=question_alpha if words else alpha_max)
    return for_query


def score(rankings, queries, fuse):
    per_kind = defaultdict(list)
    for q in queries:
        vector, keyword = rankings[q["id"]]["vector"][:DEPTH], rankings[q["id"]]["keyword"][:DEPTH]
        rule = fuse(q) if getattr(fuse, "__name__", "") == "for_query" else fuse
        ndcg = evaluate.score(collapse(rule(vector, keyword)), q["relevant"])[2]
        per_kind[q["kind"]].append(ndcg)
        per_kind["all"].append(ndcg)
    return {kind: sum(v) / len(v) for kind, v in per_kind.items()}


def replay(options):
    with open(options.rankings, encoding="utf-8") as f:
        rankings = json.load(f)
    queries = evaluate.load_queries(options.queries)
    rules = [
        ("vector", lambda v, k: v),
        ("keyword", lambda v, k: k),
        ("rrf k=10 (today's hybrid)", rrf(10)),
        ("rrf k=60", rrf(60)),
        ("convex 0.3", convex(0.3)),
        ("convex 0.6", convex(0.6)),
        ("confident 0.3-0.8 0.5 0.2-0.6", confident(0.3, 0.8, 0.5, 0.2, 0.6)),
        ("confident, keyword by max", confident(0.3, 0.8, 0.5, 0.1, 1.0, by_max)),
        ("score, 0.15 for every query", keyword_flat()),
        ("score, no look-up rule", score_fusion(lookups=False)),
        ("score, question weight 0.7", score_fusion()),
        ("score, question weight 0.8", score_fusion(question_alpha=0.8)),
        ("score 0.8, rows keep 0.15", score_fusion(question_alpha=0.8, rows=True)),
    ]
    print(f"nDCG@10 per kind, {len(queries)} queries ({os.path.relpath(options.queries, ROOT)})")
    print(f"{'rule':32}" + "".join(f"{kind:>12}" for kind in KINDS))
    for name, fuse in rules:
        result = score(rankings, queries, fuse)
        print(f"{name:32}" + "".join(f"{result.get(kind, 0):12.3f}" for kind in KINDS))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["fetch", "score"])
    parser.add_argument("--sluice", default=os.path.join(ROOT, ".build", "release", "sluice"))
    parser.add_argument("--pipeline", default=os.path.join(ROOT, "Pipelines", "default.yaml"))
    parser.add_argument("--queries", default=os.path.join(HERE, "queries.jsonl"))
    parser.add_argument("--out", default="rankings.json")
    parser.add_argument("--rankings", default="rankings.json")
    options = parser.parse_args()
    fetch(options) if options.command == "fetch" else replay(options)


if __name__ == "__main__":
    main()
