#!/usr/bin/env python3
"""Chooses score fusion's parameters on several judged sets at once, with leave-one-set-out cross-validation.

  Benchmarks/retrieval/loso_grid.py --rankings DIR [--sets queries,heldout,heldout2,heldout3] [--stores local,pg]
  Benchmarks/retrieval/loso_grid.py --rankings DIR --score SETTING --sets heldout4     # one setting, one set

DIR holds `replay.py fetch`'s rankings as r-STORE-SET.json (rankings of both stores fetched once per set). Every
setting is today's family of `sluice search --fusion score` (ScoreFusion.swift, replay.py `score_fusion`): the
vector weight is `largest × keyword doubt`, `largest` by the query's shape — `a` for most queries, `q` for a
question in words (QueryShape: nine or more plain words), 0 (or `a`, with `lookups=a`) for a look-up of codes —
and the doubt a ramp of the keyword ranking's tenth score over its first from `low` to `high`; vector scores
min-max normalized in their ranking (`minmax`) or divided by its first (`byfirst`). Each is scored as replay.py
scores (top 50 of each ranking fused, copies collapsed, nDCG@10 per kind).

The bar (issue 31): on every store, set and kind, at least the better of vector and keyword alone; above both
on natural questions. A setting's *margin* is its worst (fused − better part) over every store, set and kind
scored; the objective is the largest margin (ties: the larger mean nDCG@10 over the sets and stores, then
the setting closest to today's default).

Families (fewer free parameters first); for each, the leave-one-set-out estimate fits on all sets but one (the
largest margin there) and scores the one left out, for each set in turn; then the fit on all of them:
- `today`: a = 0.15, q = 0.8, ramp 0.3–0.8, min-max, look-ups 0 (no free parameter);
- `one weight`: q = a (no question rule), a free;
- `question weight`: q free, the rest today's;
- `a, q`: both free;
- `a, q, ramp`: and the ramp's ends;
- `a, q, ramp, norm, lookups`: and the vector normalization and the look-up rule.
Standard library only.
"""
import argparse, itertools, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate, replay  # noqa: E402

KINDS = replay.KINDS
DEPTH = replay.DEPTH
TODAY = dict(a=0.15, q=0.8, low=0.3, high=0.8, norm="minmax", lookups="zero")

A = [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
Q = [round(0.15 + 0.05 * i, 2) for i in range(16)]  # 0.15 … 0.9
RAMPS = [(0.3, 0.8), (0.2, 0.8), (0.4, 0.8), (0.3, 0.7), (0.3, 0.9), (0.2, 0.9), (0.0, 1.0)]
FAMILIES = [
    ("today", lambda: [TODAY]),
    ("one weight", lambda: [dict(TODAY, a=a, q=a) for a in A + [0.4, 0.5, 0.6, 0.7, 0.8]]),
    ("question weight", lambda: [dict(TODAY, q=q) for q in Q]),
    ("a, q", lambda: [dict(TODAY, a=a, q=q) for a in A for q in Q]),
    ("a, q, ramp", lambda: [dict(TODAY, a=a, q=q, low=lo, high=hi) for a in A for q in Q for lo, hi in RAMPS]),
    ("a, q, ramp, norm, lookups", lambda: [dict(TODAY, a=a, q=q, low=lo, high=hi, norm=n, lookups=lk)
                                           for a in A for q in Q for lo, hi in RAMPS
                                           for n in ("minmax", "byfirst") for lk in ("zero", "a")]),
]


def by_first(vector):
    if not vector or vector[0]["score"] <= 0 or min(r["score"] for r in vector) < 0:
        return replay.min_max(vector)
    return {r["id"]: r["score"] / vector[0]["score"] for r in vector}


class Query:
    """One query's rankings on one store, with what every setting needs precomputed; nDCG memoized by weight."""

    def __init__(self, q, rankings):
        self.q, self.kind = q, q["kind"]
        self.vector = rankings["vector"][:DEPTH]
        self.keyword = rankings["keyword"][:DEPTH]
        self.lookup = replay.lookup_of_codes(q["query"])
        self.question = replay.question_in_words(q["query"])
        keyword = self.keyword
        if not keyword:
            self.flat = None
        elif len(keyword) < 10 or keyword[0]["score"] <= 0:
            self.flat = -1.0  # doubt 0 whatever the ramp
        else:
            self.flat = keyword[9]["score"] / keyword[0]["score"]
        self.nk = replay.by_max(keyword)
        self.nv = {"minmax": replay.min_max(self.vector), "byfirst": by_first(self.vector)}
        self.records = {r["id"]: r for r in keyword}
        self.records.update({r["id"]: r for r in self.vector})
        in_vector = {r["id"] for r in self.vector}
        order = [r["id"] for r in self.vector] + [r["id"] for r in keyword if r["id"] not in in_vector]
        self.position = {x: i for i, x in enumerate(order)}
        self.memo = {}
        self.alone = {"vector": self.ndcg_of(self.vector), "keyword": self.ndcg_of(self.keyword)}

    def ndcg_of(self, ranked):
        return evaluate.score(replay.collapse(ranked), self.q["relevant"])[2]

    def doubt(self, low, high):
        if self.flat is None:
            return 1.0
        if self.flat < 0:
            return 0.0
        return min(1, max(0, (self.flat - low) / (high - low)))

    def ndcg(self, s):
        if self.lookup:
            largest = 0.0 if s["lookups"] == "zero" else s["a"]
        else:
            largest = s["q"] if self.question else s["a"]
        weight = round(largest * self.doubt(s["low"], s["high"]), 9)
        key = (weight, s["norm"] if weight > 0 else "-")
        if key not in self.memo:
            nv, nk = self.nv[s["norm"]], self.nk
            score = {x: weight * nv.get(x, 0) + (1 - weight) * nk.get(x, 0) for x in self.records}
            ranked = [self.records[x] for x in sorted(self.records, key=lambda x: (-score[x], self.position[x]))]
            self.memo[key] = self.ndcg_of(ranked)
        return self.memo[key]


def load(directory, stores, sets, here=HERE):
    data = {}
    for store in stores:
        for name in sets:
            queries = evaluate.load_queries(os.path.join(here, name + ".jsonl"))
            with open(os.path.join(directory, "r-%s-%s.json" % (store, name)), encoding="utf-8") as f:
                rankings = json.load(f)
            data[(store, name)] = [Query(q, rankings[q["id"]]) for q in queries]
    return data


def means(values_by_kind):
    return {k: sum(v) / len(v) for k, v in values_by_kind.items() if v}


def per_kind(queries, value):
    out = {}
    for x in queries:
        v = value(x)
        out.setdefault(x.kind, []).append(v)
        out.setdefault("all", []).append(v)
    return means(out)


ALONE = {}


def alone(data, pair):
    if pair not in ALONE:
        qs = data[pair]
        ALONE[pair] = (per_kind(qs, lambda x: x.alone["vector"]), per_kind(qs, lambda x: x.alone["keyword"]))
    return ALONE[pair]


FUSED = {}


def fused_of(data, s, pair):
    key = (tuple(sorted(s.items())), pair)
    if key not in FUSED:
        FUSED[key] = per_kind(data[pair], lambda x: x.ndcg(s))
    return FUSED[key]


def evaluate_setting(data, s, pairs):
    """(margin, mean all, {pair: (fused per kind, vector per kind, keyword per kind)}) over `pairs`."""
    worst, total, detail = float("inf"), 0.0, {}
    for pair in pairs:
        fused = fused_of(data, s, pair)
        vec, key = alone(data, pair)
        for kind in fused:
            if kind == "all":
                continue
            margin = fused[kind] - max(vec[kind], key[kind])
            if kind == "natural" and margin <= 0:
                margin -= 1e-6  # natural questions must be above both parts: a tie fails
            worst = min(worst, margin)
        total += fused["all"]
        detail[pair] = (fused, vec, key)
    return worst, total / len(pairs), detail


def distance(s):
    return sum(abs(s[k] - TODAY[k]) for k in ("a", "q", "low", "high")) + (s["norm"] != TODAY["norm"]) + (
        s["lookups"] != TODAY["lookups"])


def fit(data, settings, pairs):
    best = None
    for s in settings:
        margin, mean, _ = evaluate_setting(data, s, pairs)
        key = (round(margin, 9), round(mean, 9), -distance(s))
        if best is None or key > best[0]:
            best = (key, s, margin, mean)
    return best[1], best[2], best[3]


def name(s):
    return "a=%.2f q=%.2f ramp=%.1f-%.1f %s lookups=%s" % (s["a"], s["q"], s["low"], s["high"], s["norm"], s["lookups"])


def below(detail):
    out = []
    for (store, set_name), (fused, vec, key) in sorted(detail.items()):
        for kind in KINDS[1:]:
            if kind in fused:
                margin = fused[kind] - max(vec[kind], key[kind])
                if margin < 0 or (kind == "natural" and margin <= 0):
                    out.append("%s/%s/%s %+.3f" % (store, set_name, kind, margin))
    return out


def reach(data, settings, pairs):
    """Prints, per store, set and kind below the bar today, the best margin any of `settings` reaches there
    alone: a kind no setting lifts to the bar cannot be met by this family, whatever the other kinds do."""
    best = {}
    for s in settings:
        _, _, detail = evaluate_setting(data, s, pairs)
        for pair, (fused, vec, key) in detail.items():
            for kind in fused:
                if kind != "all":
                    m = fused[kind] - max(vec[kind], key[kind])
                    if (pair, kind) not in best or m > best[(pair, kind)][0] + 1e-12:
                        best[(pair, kind)] = (m, s)
    _, _, today = evaluate_setting(data, TODAY, pairs)
    for (pair, kind), (m, s) in sorted(best.items()):
        fused, vec, key = today[pair]
        now = fused[kind] - max(vec[kind], key[kind])
        if now < 0 or (kind == "natural" and now <= 0) or m < 0:
            print(f"{'/'.join(pair):16} {kind:12} today {now:+.3f}  best {m:+.3f} at {name(s)}")


def parse_setting(text):
    s = dict(TODAY)
    for part in text.split(","):
        k, v = part.split("=")
        s[k] = v if k in ("norm", "lookups") else float(v)
    return s


def table(data, s, pairs):
    _, _, detail = evaluate_setting(data, s, pairs)
    print(f"{'store/set':22}{'rule':10}" + "".join(f"{k:>12}" for k in KINDS))
    for pair in pairs:
        fused, vec, key = detail[pair]
        for label, row in (("vector", vec), ("keyword", key), ("fused", fused)):
            print(f"{'/'.join(pair):22}{label:10}" + "".join(f"{row.get(k, float('nan')):12.3f}" for k in KINDS))
    print("below the bar: " + (", ".join(below(detail)) or "none"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rankings", required=True, help="folder of r-STORE-SET.json")
    parser.add_argument("--sets", default="queries,heldout,heldout2,heldout3")
    parser.add_argument("--stores", default="local,pg")
    parser.add_argument("--score", help="score one setting (a=…,q=…,low=…,high=…,norm=…,lookups=…) and stop")
    parser.add_argument("--reach", action="store_true",
                        help="for every store, set and kind, the best margin any setting of the largest family reaches")
    parser.add_argument("--families", help="comma-separated family numbers (0-based) to run; default all")
    options = parser.parse_args()
    sets, stores = options.sets.split(","), options.stores.split(",")
    data = load(options.rankings, stores, sets)
    everything = [(st, se) for st in stores for se in sets]
    if options.score:
        table(data, parse_setting(options.score), everything)
        return
    if options.reach:
        reach(data, FAMILIES[-1][1](), everything)
        return
    chosen = [FAMILIES[int(i)] for i in options.families.split(",")] if options.families else FAMILIES
    for family, settings in chosen:
        settings = settings()
        print(f"== {family} ({len(settings)} settings)")
        worst_out = float("inf")
        for out in sets:
            pairs = [(st, se) for st in stores for se in sets if se != out]
            s, margin_in, _ = fit(data, settings, pairs)
            margin_out, mean_out, detail = evaluate_setting(data, s, [(st, out) for st in stores])
            worst_out = min(worst_out, margin_out)
            alls = " ".join("%s %.3f" % (st, detail[(st, out)][0]["all"]) for st in stores)
            nat = " ".join("%s %.3f" % (st, detail[(st, out)][0].get("natural", float("nan"))) for st in stores)
            print(f"  fit without {out:9} {name(s):52} margin on the three {margin_in:+.3f}; on {out}: "
                  f"{margin_out:+.3f} (all {alls}; natural {nat}); below: {', '.join(below(detail)) or 'none'}")
        s, margin, mean = fit(data, settings, everything)
        _, _, detail = evaluate_setting(data, s, everything)
        print(f"  leave-one-set-out worst margin {worst_out:+.3f}")
        print(f"  fit on all {len(sets)}: {name(s)} margin {margin:+.3f} mean nDCG@10 {mean:.4f}; below: "
              f"{', '.join(below(detail)) or 'none'}")


if __name__ == "__main__":
    main()
