#!/usr/bin/env python3
"""Replays the local store's keyword index (BM25) over `sluice export` records, to measure what a record
should contribute to it without rebuilding Sluice or the index.

  sluice export Pipelines/default.yaml -o records.jsonl
  Benchmarks/retrieval/replay.py fetch --out rankings.json            # the vector rankings (and keyword)
  Benchmarks/retrieval/keyword_replay.py --records records.jsonl --rankings rankings.json [--queries FILE]

`Index` is KeywordIndex's BM25 (k1 1.2, b 0.75, Lucene's idf) over KeywordTokenizer's terms (lower-cased
letter and digit runs, Latin letters folded to their base letters, stop words out, Harman's S-stemmer; Han, Hiragana and Katakana as pairs) of each
record's text and context: its title, or without one its document's file name (`name`), and its heading
path, each once. `weight` scales the context's term counts and length (BM25F with one field weight; 1 is
the index as Sluice builds it). On 2026-11-29 it gave the index's own top-50 keyword rankings for all 70
held-out queries, ids and order, and the tuning set's figures. Each variant is scored with replay.py's
score fusion (today's default) against the fetched vector rankings, nDCG@10 per kind.
"""
import argparse, json, math, os, sys, unicodedata
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate, replay  # noqa: E402

STOP = set(
    "a an and are as at be by can do does for from how i in is it my of on or that the this to what when where "
    "which who why with you".split()
)


def stem(w):
    n = len(w)
    if n > 4 and w.endswith("ies") and not w.endswith(("eies", "aies")):
        return w[:-3] + "y"
    if n > 3 and w.endswith("es") and not w.endswith(("aes", "ees", "oes")):
        return w[:-1]
    if n > 3 and w.endswith("s") and not w.endswith(("us", "ss")):
        return w[:-1]
    return w


# KeywordTokenizer+Folding.swift: Latin letters fold to their base letters (NFD without combining marks, and
# this table for the letters that do not decompose); other scripts are kept.
FOLDED = {
    "ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i",
    "ħ": "h", "ŧ": "t", "ŋ": "n", "ſ": "s", "ĳ": "ij", "ŀ": "l", "ƀ": "b", "ƚ": "l", "ɨ": "i",
    "ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st",
}


def latin(c):
    v = ord(c)
    return 0x41 <= v <= 0x5A or 0x61 <= v <= 0x7A or 0xC0 <= v <= 0x24F or 0x1E00 <= v <= 0x1EFF or 0xFB00 <= v <= 0xFB06


def fold(c):
    if c in FOLDED:
        return FOLDED[c]
    if ord(c) < 0x80 or not latin(c):
        return c
    return "".join(FOLDED.get(x, x) for x in unicodedata.normalize("NFD", c) if unicodedata.category(x) != "Mn")


def unspaced(c):
    v = ord(c)
    return 0x3040 <= v <= 0x30FF or 0x3400 <= v <= 0x4DBF or 0x4E00 <= v <= 0x9FFF or 0xF900 <= v <= 0xFAFF or 0x20000 <= v <= 0x2FA1F


def terms(text):
    out, word, run = [], [], []

    def flush_word():
        if word:
            w = "".join(word)
            if w not in STOP:
                out.append(stem(w))
            word.clear()

    def flush_run():
        if len(run) == 1:
            out.append(run[0])
        elif len(run) > 1:
            out.extend(run[i - 1] + run[i] for i in range(1, len(run)))
        run.clear()

    last_latin = False  # a combining mark after a Latin letter belongs to it (Swift reads characters)
    for c in text.lower():
        if unspaced(c):
            flush_word()
            run.append(c)
        elif c.isalpha() or c.isnumeric():
            flush_run()
            word.append(fold(c))
            last_latin = latin(c)
            continue
        elif last_latin and word and unicodedata.category(c) == "Mn":
            continue
        else:
            flush_word()
            flush_run()
    flush_word()
    flush_run()
    return out


def document_name(key):
    """KeywordIndex.name(of:): the key's last path component (a URL's too) without its extension."""
    key = key.split("?")[0].split("#")[0]
    last = key.split("/")[-1]
    dot = last.rfind(".")
    return last[:dot] if dot > 0 else last


def context(record, name=True):
    md = record["metadata"]
    parts = []
    if isinstance(md.get("title"), str) and md["title"]:
        parts.append(md["title"])
    elif name:
        parts.append(document_name(record["document_key"]))
    if isinstance(md.get("headings"), list):
        parts += md["headings"]
    seen, out = set(), []
    for p in parts:
        if p and p not in seen:
            seen.add(p)
            out.append(p)
    return out


class Index:
    def __init__(self, records, weight=1.0, name=True, k1=1.2, b=0.75):
        self.k1, self.b, self.docs, self.postings = k1, b, [], {}
        df, total = Counter(), 0.0
        for r in records:
            text = Counter(terms(r["text"]))
            ctx = Counter(terms("\n".join(context(r, name))))
            tf = {t: text[t] + weight * ctx[t] for t in set(text) | set(ctx) if text[t] + weight * ctx[t] > 0}
            length = sum(text.values()) + weight * sum(ctx.values())
            self.docs.append(r)
            for t, f in tf.items():
                self.postings.setdefault(t, []).append((len(self.docs) - 1, f, length))
            total += length
        self.n, self.average = len(records), max(1, total / max(1, len(records)))

    def search(self, query, k=50):
        scores = Counter()
        for t in dict.fromkeys(terms(query)):
            postings = self.postings.get(t, [])
            if not postings:
                continue
            idf = math.log(1 + (self.n - len(postings) + 0.5) / (len(postings) + 0.5))
            for i, f, length in postings:
                scores[i] += idf * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * length / self.average))
        ranked = sorted(scores.items(), key=lambda p: (-p[1], self.docs[p[0]]["id"]))[:k]
        return [dict(self.docs[i], page=self.docs[i]["metadata"].get("page"), score=s) for i, s in ranked]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", required=True)
    parser.add_argument("--rankings", required=True, help="replay.py fetch's output (its vector rankings are used)")
    parser.add_argument("--queries", default=os.path.join(HERE, "queries.jsonl"))
    options = parser.parse_args()
    records = [json.loads(line) for line in open(options.records, encoding="utf-8") if line.strip()]
    rankings = json.load(open(options.rankings, encoding="utf-8"))
    queries = evaluate.load_queries(options.queries)
    fuse = replay.score_fusion()
    print(f"nDCG@10 per kind, {len(queries)} queries ({os.path.basename(options.queries)})")
    print(f"{'index':30}{'mode':9}" + "".join(f"{kind[:9]:>10}" for kind in replay.KINDS))
    variants = [("title, headings (weight 1)", dict(name=False)), ("title, headings (weight 0.5)", dict(name=False, weight=0.5)),
                ("title, headings (weight 0.25)", dict(name=False, weight=0.25)), ("text alone", dict(name=False, weight=0)),
                ("title or name, headings", dict(name=True))]
    for label, settings in variants:
        index = Index(records, **settings)
        per_kind = {mode: {} for mode in ("keyword", "hybrid")}
        for q in queries:
            vector, keyword = rankings[q["id"]]["vector"][:replay.DEPTH], index.search(q["query"], replay.DEPTH)
            for mode, ranked in (("keyword", keyword), ("hybrid", fuse(q)(vector, keyword))):
                ndcg = evaluate.score(replay.collapse(ranked), q["relevant"])[2]
                for kind in (q["kind"], "all"):
                    per_kind[mode].setdefault(kind, []).append(ndcg)
        for mode, table in per_kind.items():
            print(f"{label:30}{mode:9}" + "".join(f"{sum(table.get(k, [0])) / max(1, len(table.get(k, []))):10.3f}" for k in replay.KINDS))


if __name__ == "__main__":
    main()
