#!/usr/bin/env python3
"""Replays the local store's keyword index with the rows of tables and the records of record files scored
one by one, against the index as it is (issue 31, "the bar's misses"):

  sluice export Pipelines/default.yaml -o records.jsonl
  Benchmarks/retrieval/row_replay.py --records records.jsonl [--queries FILE] [--rankings rankings.json]

A chunk of a CSV, TSV, XLSX or ODS file holds many rows (one a line), and a chunk of a JSON file many
records (one a block, blank-line separated); BM25 scores the chunk as one text, so a row that matches the
query is diluted by its neighbours, and a short passage or a one-record chunk that matches fewer of the
query's words passes it. `rows` scores each row or record as a text of its own — its terms and its length,
with the chunk's title or file name and headings as keyword_replay.py adds them — against the index's own
statistics (idf over chunks, the average chunk length), and a chunk scores as its best row. Other chunks
score as they do now (`chunks`, which gives the index's own keyword rankings). With `--rankings`
(replay.py fetch's output; only the vector rankings are read) the default score fusion is scored too.
Standard library only.
"""
import argparse, json, math, os, sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate, keyword_replay, replay  # noqa: E402

TABLES = {"csv", "tsv", "xlsx", "ods"}
RECORDS = {"json", "jsonl", "ndjson"}


def units(record, rows):
    """The texts a chunk is scored by: its rows or records (`rows`), or the chunk whole."""
    extension = record["document_key"].split("?")[0].rsplit(".", 1)[-1].lower()
    separator = "\n" if extension in TABLES else "\n\n" if extension in RECORDS else None
    if not rows or separator is None:
        return [record["text"]]
    return [u for u in record["text"].split(separator) if u.strip()] or [record["text"]]


class Index:
    """BM25 (k1 1.2, b 0.75, Lucene's idf) as KeywordIndex's, over chunks; a chunk's score is its best unit's."""

    def __init__(self, records, rows, k1=1.2, b=0.75):
        self.k1, self.b, self.docs, self.postings = k1, b, records, {}
        total, df, unit = 0.0, Counter(), 0
        for number, record in enumerate(records):
            context = Counter(keyword_replay.terms("\n".join(keyword_replay.context(record, True))))
            whole = Counter(keyword_replay.terms(record["text"])) + context
            total += sum(whole.values())
            df.update(whole.keys())
            for text in units(record, rows):
                tf = Counter(keyword_replay.terms(text)) + context
                length = sum(tf.values())
                for term, f in tf.items():
                    self.postings.setdefault(term, []).append((number, unit, f, length))
                unit += 1
        self.n, self.df, self.average = len(records), df, max(1, total / max(1, len(records)))

    def search(self, query, k=50):
        by_unit, owner = Counter(), {}
        for term in dict.fromkeys(keyword_replay.terms(query)):
            postings = self.postings.get(term, [])
            if not postings:
                continue
            idf = math.log(1 + (self.n - self.df[term] + 0.5) / (self.df[term] + 0.5))
            for number, unit, f, length in postings:
                by_unit[unit] += idf * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * length / self.average))
                owner[unit] = number
        best = {}
        for unit, score in by_unit.items():
            best[owner[unit]] = max(best.get(owner[unit], 0), score)
        ranked = sorted(best.items(), key=lambda p: (-p[1], self.docs[p[0]]["id"]))[:k]
        return [dict(self.docs[i], page=self.docs[i]["metadata"].get("page"), score=s) for i, s in ranked]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", required=True)
    parser.add_argument("--queries", default=os.path.join(HERE, "queries.jsonl"))
    parser.add_argument("--rankings", help="replay.py fetch's output (its vector rankings are used)")
    parser.add_argument("--per-query", action="store_true", help="list the queries whose nDCG@10 differs")
    options = parser.parse_args()
    records = [json.loads(line) for line in open(options.records, encoding="utf-8") if line.strip()]
    rankings = json.load(open(options.rankings, encoding="utf-8")) if options.rankings else None
    queries = evaluate.load_queries(options.queries)
    fuse = replay.score_fusion()
    print(f"nDCG@10 per kind, {len(queries)} queries ({os.path.basename(options.queries)})")
    print(f"{'index':8}{'mode':9}" + "".join(f"{kind[:9]:>10}" for kind in replay.KINDS))
    per_query = {}
    for label in ("chunks", "rows"):
        index = Index(records, rows=label == "rows")
        per_kind = {"keyword": {}, "hybrid": {}}
        for q in queries:
            keyword = index.search(q["query"], replay.DEPTH)
            ranked = [("keyword", keyword)]
            if rankings:
                ranked.append(("hybrid", fuse(q)(rankings[q["id"]]["vector"][: replay.DEPTH], keyword)))
            for mode, results in ranked:
                ndcg = evaluate.score(replay.collapse(results), q["relevant"])[2]
                per_query.setdefault((mode, q["id"]), {})[label] = ndcg
                for kind in (q["kind"], "all"):
                    per_kind[mode].setdefault(kind, []).append(ndcg)
        for mode, table in per_kind.items():
            if table:
                print(f"{label:8}{mode:9}" + "".join(
                    f"{sum(table.get(k, [0])) / max(1, len(table.get(k, []))):10.3f}" for k in replay.KINDS))
    if options.per_query:
        kinds = {q["id"]: q["kind"] for q in queries}
        for (mode, qid), ndcg in sorted(per_query.items()):
            if abs(ndcg["chunks"] - ndcg["rows"]) > 1e-9:
                print(f"{mode:8} {qid} {kinds[qid]:12} {ndcg['chunks']:.3f} -> {ndcg['rows']:.3f}")


if __name__ == "__main__":
    main()
