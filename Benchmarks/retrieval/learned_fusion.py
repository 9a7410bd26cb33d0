#!/usr/bin/env python3
"""Issue 31's bar on all five judged sets at once: pooled per kind, and a fusion learned with leave-one-set-out.

  Benchmarks/retrieval/learned_fusion.py pooled --rankings DIR [--bootstrap 4000]
  Benchmarks/retrieval/learned_fusion.py loso --rankings DIR [--objective margin|mean] [--sweeps 4]
  Benchmarks/retrieval/learned_fusion.py check --rankings DIR      # the fast scorer against replay.py's default

DIR holds `replay.py fetch`'s rankings as r-STORE-SET.json (STORE local or pg; SET queries, heldout, heldout2,
heldout3, heldout4). Every ranking is scored as replay.py scores it: the first 50 of each ranking fused,
identical texts collapsed, nDCG@10 with evaluate.py's rules.

`pooled`: per store and kind, over the union of the five sets: the number of queries, vector alone, keyword
alone, main's default (score fusion, replay.py `score_fusion(question_alpha=0.8)`) and rrf (k = 10); the
default's margin over the better part (the better of the pooled vector and keyword means), with a bootstrap
90% interval over the kind's queries (queries resampled with replacement, the three means and the margin
recomputed each time), and whether the margin's sign rests on one query (taking out the single query that
helps it most flips it or makes it 0). Then each set's margins beside it.

`loso`: a fusion family richer than today's, still linear and small. The vector weight of a query is
  w = clip(b0 + b_question·[question in words] + b_lookup·[look-up of codes] + b_wh·[first word a question
           word] + b_code·[a word that is a code: digit, `_`, `.`, `-`, `/`, capitals] + b_len·min(words, 15)/15,
           0, 1) × ramp(keyword ranking's tenth score over its first; low, high)
and a candidate's score is
  (1 − w)·k + w·v + c_rv·rv + c_rk·rk + c_both·[in both rankings]
with v the vector score min-max normalized in its ranking, k the keyword score over its first (as today),
rv and rk the reciprocal ranks 10 / (10 + rank) (1 for a ranking's first, 0 when absent). Today's default is
the point b0 0.15, b_question 0.65, b_lookup −0.15, the rest 0, ramp 0.3–0.8. (No judged query holds a quoted
phrase, so a feature for one would never fire: left out.) The weights are fitted by coordinate ascent from
today's default, each coordinate over a grid in turn, for a few sweeps, on `--objective`: `margin`, issue 31's
bar — the worst over the training stores, sets and kinds of (fused − the better of vector and keyword; natural
questions must be above both), ties broken by the mean nDCG@10 — or `mean`, the mean nDCG@10 over the
training sets and stores. Leave-one-set-out: fitted on both stores' four sets, scored on the fifth, for each
set in turn; then fitted on all five. Standard library only.
"""
import argparse, json, math, os, random, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate, replay  # noqa: E402

SETS = ["queries", "heldout", "heldout2", "heldout3", "heldout4"]
STORES = ["local", "pg"]
KINDS = ["natural", "exact", "table-row", "json-record", "pdf-page", "heading", "scan"]
DEPTH = replay.DEPTH
WH = {"what", "which", "how", "when", "where", "why", "who", "whom", "whose", "can", "does", "do", "is", "are",
      "should", "could", "would", "will", "am", "may", "did", "has", "have"}

TODAY = dict(b0=0.15, b_question=0.65, b_lookup=-0.15, b_wh=0.0, b_code=0.0, b_len=0.0,
             low=0.3, high=0.8, c_rv=0.0, c_rk=0.0, c_both=0.0)
STEP = lambda lo, hi, step: [round(lo + step * i, 4) for i in range(int(round((hi - lo) / step)) + 1)]
GRID = dict(
    b0=STEP(0.0, 0.6, 0.05), b_question=STEP(-0.3, 0.9, 0.05), b_lookup=STEP(-0.6, 0.3, 0.05),
    b_wh=STEP(-0.5, 0.5, 0.05), b_code=STEP(-0.5, 0.5, 0.05), b_len=STEP(-0.5, 0.5, 0.05),
    low=STEP(0.0, 0.6, 0.1), high=STEP(0.5, 1.0, 0.1),
    c_rv=STEP(-0.1, 0.3, 0.02), c_rk=STEP(-0.1, 0.3, 0.02), c_both=STEP(-0.1, 0.3, 0.02),
)


def is_code(word):
    return any(c.isdigit() or c in "_./-=<>[]{}$@#%+*~" for c in word) or (len(word) >= 2 and word.isupper())


class Query:
    """One query's two rankings on one store, reduced to what scoring needs: per candidate its features, its
    place in the tie order, its text group and the relevant entries it hits (as a collapsed result's head and
    as a duplicate: evaluate.hits reads the page of each differently)."""

    def __init__(self, q, rankings, store, set_name):
        self.q, self.kind, self.store, self.set = q, q["kind"], store, set_name
        vector, keyword = rankings["vector"][:DEPTH], rankings["keyword"][:DEPTH]
        self.vector, self.keyword = vector, keyword
        words = [w.strip(replay.PUNCTUATION) for w in q["query"].split()]
        words = [w for w in words if w]
        self.shape = dict(
            question=float(replay.question_in_words(q["query"])),
            lookup=float(replay.lookup_of_codes(q["query"])),
            wh=float(bool(words) and words[0].lower() in WH),
            code=float(any(is_code(w) for w in words)),
            len=min(len(words), 15) / 15,
        )
        if not keyword:
            self.flat = None
        elif len(keyword) < 10 or keyword[0]["score"] <= 0:
            self.flat = -1.0
        else:
            self.flat = keyword[9]["score"] / keyword[0]["score"]
        nv, nk = replay.min_max(vector), replay.by_max(keyword)
        rank_v, rank_k = {}, {}
        for i, r in enumerate(vector):
            rank_v.setdefault(r["id"], i)
        for i, r in enumerate(keyword):
            rank_k.setdefault(r["id"], i)
        records = {r["id"]: r for r in keyword}
        records.update({r["id"]: r for r in vector})
        order = [r["id"] for r in vector] + [r["id"] for r in keyword if r["id"] not in nv]
        position = {x: i for i, x in enumerate(order)}
        ids = list(records)
        groups, self.group = {}, []
        self.nv, self.nk, self.rv, self.rk, self.both, self.pos = [], [], [], [], [], []
        self.head_hits, self.dup_hits = [], []
        for x in ids:
            r = records[x]
            self.nv.append(nv.get(x, 0))
            self.nk.append(nk.get(x, 0))
            self.rv.append(10 / (10 + rank_v[x]) if x in rank_v else 0.0)
            self.rk.append(10 / (10 + rank_k[x]) if x in rank_k else 0.0)
            self.both.append(1.0 if x in rank_v and x in rank_k else 0.0)
            self.pos.append(position[x])
            self.group.append(groups.setdefault(evaluate.squash(r["text"]), len(groups)))
            self.head_hits.append(frozenset(evaluate.hits(dict(r, duplicates=[]), q["relevant"])))
            as_dup = {"text": r["text"], "document_key": None,
                      "duplicates": [{"document_key": r["document_key"], "page": r.get("page")}]}
            self.dup_hits.append(frozenset(evaluate.hits(as_dup, q["relevant"])))
        self.ids = ids
        members = {}
        for i, g in enumerate(self.group):
            members.setdefault(g, []).append(i)
        self.members = members
        self.ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(q["relevant"]), 10) + 1))
        self.memo = {}
        self.alone = {"vector": self.ndcg_ranked(vector), "keyword": self.ndcg_ranked(keyword)}

    def ndcg_ranked(self, ranked):
        return evaluate.score(replay.collapse(ranked), self.q["relevant"])[2]

    def ndcg_order(self, order):
        """nDCG@10 of candidates in `order` (indexes), collapsed by text as replay.collapse does."""
        seen_groups, seen, dcg, rank = set(), set(), 0.0, 0
        for i in order:
            g = self.group[i]
            if g in seen_groups:
                continue
            seen_groups.add(g)
            rank += 1
            hit = set(self.head_hits[i])
            for j in self.members[g]:
                if j != i:
                    hit |= self.dup_hits[j]
            if hit - seen:
                seen |= hit
                dcg += 1 / math.log2(rank + 1)
            if rank == 10:
                break
        return dcg / self.ideal

    def doubt(self, low, high):
        if self.flat is None:
            return 1.0
        if self.flat < 0:
            return 0.0
        if high <= low:
            return 1.0 if self.flat >= high else 0.0
        return min(1, max(0, (self.flat - low) / (high - low)))

    def weight(self, s):
        sh = self.shape
        base = (s["b0"] + s["b_question"] * sh["question"] + s["b_lookup"] * sh["lookup"] + s["b_wh"] * sh["wh"]
                + s["b_code"] * sh["code"] + s["b_len"] * sh["len"])
        return min(1.0, max(0.0, base)) * self.doubt(s["low"], s["high"])

    def ndcg(self, s):
        w = self.weight(s)
        key = (round(w, 9), s["c_rv"], s["c_rk"], s["c_both"])
        if key not in self.memo:
            crv, crk, cb = s["c_rv"], s["c_rk"], s["c_both"]
            if crv == 0 and crk == 0 and cb == 0:
                score = [w * self.nv[i] + (1 - w) * self.nk[i] for i in range(len(self.ids))]
            else:
                score = [w * self.nv[i] + (1 - w) * self.nk[i] + crv * self.rv[i] + crk * self.rk[i]
                         + cb * self.both[i] for i in range(len(self.ids))]
            order = sorted(range(len(self.ids)), key=lambda i: (-score[i], self.pos[i]))
            self.memo[key] = self.ndcg_order(order)
        return self.memo[key]


def load(directory):
    data = {}
    for store in STORES:
        for name in SETS:
            queries = evaluate.load_queries(os.path.join(HERE, name + ".jsonl"))
            with open(os.path.join(directory, "r-%s-%s.json" % (store, name)), encoding="utf-8") as f:
                rankings = json.load(f)
            data[(store, name)] = [Query(q, rankings[q["id"]], store, name) for q in queries]
    return data


def mean(values):
    return sum(values) / len(values) if values else float("nan")


# --- pooled ---------------------------------------------------------------------------------------------------

def per_query_modes(data, store):
    """{kind: [(id, vector, keyword, default, rrf)]} over the five sets of `store`."""
    default = replay.score_fusion(question_alpha=0.8)
    rrf = replay.rrf(10)
    out = {}
    for name in SETS:
        for x in data[(store, name)]:
            fused = x.ndcg_ranked(default(x.q)(x.vector, x.keyword))
            r = x.ndcg_ranked(rrf(x.vector, x.keyword))
            row = (x.q["id"], x.alone["vector"], x.alone["keyword"], fused, r)
            out.setdefault(x.kind, []).append(row)
            out.setdefault("all", []).append(row)
    return out


def margin_of(rows):
    v, k, d = mean([r[1] for r in rows]), mean([r[2] for r in rows]), mean([r[3] for r in rows])
    return d - max(v, k), ("vector" if v > k else "keyword")


def pooled(options):
    data = load(options.rankings)
    rng = random.Random(31)
    for store in STORES:
        table = per_query_modes(data, store)
        print(f"== {store}: nDCG@10 over the five sets pooled; margin = default − the better of vector and keyword")
        print(f"{'kind':12}{'n':>5}{'vector':>8}{'keyword':>8}{'default':>8}{'rrf':>8}{'margin':>9}"
              f"{'90% interval':>18}  better  one query?  wins/losses vs better")
        for kind in ["all"] + KINDS:
            rows = table.get(kind)
            if not rows:
                continue
            m, better = margin_of(rows)
            boot = []
            for _ in range(options.bootstrap):
                sample = [rows[rng.randrange(len(rows))] for _ in rows]
                boot.append(margin_of(sample)[0])
            boot.sort()
            lo, hi = boot[int(0.05 * len(boot))], boot[int(0.95 * len(boot)) - 1]
            col = 1 if better == "vector" else 2
            diffs = [r[3] - r[col] for r in rows]
            wins, losses = sum(d > 1e-9 for d in diffs), sum(d < -1e-9 for d in diffs)
            # does one query decide the sign? take out the query that helps the margin's sign most
            n = len(rows)
            if m > 0:
                rest = (sum(diffs) - max(diffs)) / (n - 1) if n > 1 else 0
                one = rest <= 0
            elif m < 0:
                rest = (sum(diffs) - min(diffs)) / (n - 1) if n > 1 else 0
                one = rest >= 0
            else:
                one = True
            # (the per-query difference is against the pooled better part; with the other part close, the
            # margin itself is recomputed above from the three means, so the test is a guide)
            print(f"{kind:12}{n:5d}{mean([r[1] for r in rows]):8.3f}{mean([r[2] for r in rows]):8.3f}"
                  f"{mean([r[3] for r in rows]):8.3f}{mean([r[4] for r in rows]):8.3f}{m:+9.3f}"
                  f"   [{lo:+.3f}, {hi:+.3f}]  {better:7} {'yes' if one else 'no':10}  {wins}/{losses}")
        print()
    print("== each set: the default's margin over the better part per kind (natural must be > 0)")
    print(f"{'store/set':18}" + "".join(f"{k:>12}" for k in ["all"] + KINDS))
    for store in STORES:
        for name in SETS:
            rows_by_kind = {}
            for x in data[(store, name)]:
                row = (x.q["id"], x.alone["vector"], x.alone["keyword"], x.ndcg(TODAY), 0)
                for kind in (x.kind, "all"):
                    rows_by_kind.setdefault(kind, []).append(row)
            by = {kind: margin_of(rows)[0] for kind, rows in rows_by_kind.items()}
            print(f"{store + '/' + name:18}" + "".join(
                f"{by[k]:+12.3f}" if k in by else f"{'':>12}" for k in ["all"] + KINDS))


# --- loso -----------------------------------------------------------------------------------------------------

class Scorer:
    def __init__(self, data):
        self.data = data
        self.alone = {}
        for pair, qs in data.items():
            v, k = {}, {}
            for x in qs:
                for kind in (x.kind, "all"):
                    v.setdefault(kind, []).append(x.alone["vector"])
                    k.setdefault(kind, []).append(x.alone["keyword"])
            self.alone[pair] = ({a: mean(b) for a, b in v.items()}, {a: mean(b) for a, b in k.items()})

    def fused(self, s, pair):
        out = {}
        for x in self.data[pair]:
            value = x.ndcg(s)
            out.setdefault(x.kind, []).append(value)
            out.setdefault("all", []).append(value)
        return {a: mean(b) for a, b in out.items()}

    def evaluate(self, s, pairs):
        worst, total, detail = float("inf"), 0.0, {}
        for pair in pairs:
            fused = self.fused(s, pair)
            v, k = self.alone[pair]
            margins = {}
            for kind, value in fused.items():
                m = value - max(v[kind], k[kind])
                margins[kind] = m
                if kind == "all":
                    continue
                if kind == "natural" and m <= 0:
                    m -= 1e-6
                worst = min(worst, m)
            total += fused["all"]
            detail[pair] = (fused, margins)
        return worst, total / len(pairs), detail


def key_of(objective, worst, mean_all):
    return (round(worst, 9), round(mean_all, 9)) if objective == "margin" else (round(mean_all, 9), round(worst, 9))


def fit(scorer, pairs, objective, sweeps):
    s = dict(TODAY)
    worst, m, _ = scorer.evaluate(s, pairs)
    best = key_of(objective, worst, m)
    for _ in range(sweeps):
        moved = False
        for name, values in GRID.items():
            for value in values:
                if value == s[name]:
                    continue
                t = dict(s, **{name: value})
                if t["high"] <= t["low"]:
                    continue
                worst, m, _ = scorer.evaluate(t, pairs)
                k = key_of(objective, worst, m)
                if k > best:
                    best, s, moved = k, t, True
        if not moved:
            break
    return s, best


def describe(s):
    return " ".join(f"{k} {s[k]:g}" for k in TODAY if s[k] != 0 or k in ("b0", "low", "high"))


def below(detail):
    out = []
    for (store, set_name), (fused, margins) in sorted(detail.items()):
        for kind in KINDS:
            if kind in margins and (margins[kind] < -1e-12 or (kind == "natural" and margins[kind] <= 1e-12)):
                out.append("%s/%s/%s %+.3f" % (store, set_name, kind, margins[kind]))
    return out


def loso(options):
    data = load(options.rankings)
    scorer = Scorer(data)
    print(f"objective: {options.objective}; grid sweeps: at most {options.sweeps}")
    print(f"{'held out':10}{'store':7}{'rule':8}{'all':>8}" + "".join(f"{k:>12}" for k in KINDS) + "   worst")
    rows, held = [], {}
    for out in SETS:
        train = [(st, se) for st in STORES for se in SETS if se != out]
        s, best = fit(scorer, train, options.objective, options.sweeps)
        for st in STORES:
            for x in data[(st, out)]:
                row = (x.q["id"], x.alone["vector"], x.alone["keyword"], x.ndcg(TODAY), x.ndcg(s))
                for kind in (x.kind, "all"):
                    held.setdefault((st, kind), []).append(row)
        test = [(st, out) for st in STORES]
        _, _, learned = scorer.evaluate(s, test)
        _, _, today = scorer.evaluate(TODAY, test)
        print(f"# fitted without {out}: {describe(s)}; training {options.objective} key {best}")
        for st in STORES:
            for label, detail in (("today", today), ("learned", learned)):
                fused, margins = detail[(st, out)]
                worst = min(margins[k] for k in KINDS if k in margins)
                print(f"{out:10}{st:7}{label:8}{fused['all']:8.3f}" + "".join(
                    f"{margins[k]:+12.3f}" if k in margins else f"{'':>12}" for k in KINDS)
                      + f"{worst:+8.3f}   (all: nDCG; kinds: margin)")
            rows.append((out, st, today[(st, out)], learned[(st, out)]))
        print(f"  below the bar, today: {', '.join(below(today)) or 'none'}")
        print(f"  below the bar, learned: {', '.join(below(learned)) or 'none'}")
    print("# pooled over the five held-out folds (each query scored by the fit that did not see its set): nDCG@10, "
          "and the margin over the better part pooled")
    print(f"{'store':7}{'kind':12}{'n':>5}{'vector':>8}{'keyword':>8}{'today':>8}{'learned':>8}{'today m':>9}"
          f"{'learned m':>10}  learned vs today per query (better/worse)")
    for st in STORES:
        for kind in ["all"] + KINDS:
            r = held.get((st, kind))
            if not r:
                continue
            v, k, t, l = (mean([x[i] for x in r]) for i in (1, 2, 3, 4))
            up, down = sum(x[4] > x[3] + 1e-9 for x in r), sum(x[4] < x[3] - 1e-9 for x in r)
            print(f"{st:7}{kind:12}{len(r):5d}{v:8.3f}{k:8.3f}{t:8.3f}{l:8.3f}{t - max(v, k):+9.3f}"
                  f"{l - max(v, k):+10.3f}  {up}/{down}")
    everything = [(st, se) for st in STORES for se in SETS]
    s, best = fit(scorer, everything, options.objective, options.sweeps)
    worst, m, detail = scorer.evaluate(s, everything)
    tw, tm, tdetail = scorer.evaluate(TODAY, everything)
    print(f"# fitted on all five: {describe(s)}; worst margin {worst:+.3f}, mean nDCG@10 {m:.4f} "
          f"(today {tw:+.3f}, {tm:.4f}); below: {', '.join(below(detail)) or 'none'}")
    better_everywhere = all(
        min(l[1][k] for k in KINDS if k in l[1]) > min(t[1][k] for k in KINDS if k in t[1]) and l[0]["all"] > t[0]["all"]
        for _, _, t, l in rows)
    bar_everywhere = all(not below({("x", "y"): l}) for _, _, _, l in rows)
    print(f"held out: meets the bar on every fold and store: {bar_everywhere}; better than today on every fold's "
          f"worst kind and overall: {better_everywhere}")


def check(options):
    """The fast scorer (Query.ndcg at today's point) against replay.py's `score_fusion(question_alpha=0.8)`,
    query by query on both stores and five sets."""
    data = load(options.rankings)
    worst = 0.0
    for pair, qs in data.items():
        for x in qs:
            slow = x.ndcg_ranked(replay.score_fusion(question_alpha=0.8)(x.q)(x.vector, x.keyword))
            fast = x.ndcg(TODAY)
            worst = max(worst, abs(slow - fast))
            if abs(slow - fast) > 1e-12:
                print(f"{pair} {x.q['id']}: replay {slow:.6f}, fast {fast:.6f}")
    print(f"largest difference over every query of both stores and five sets: {worst:.2e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["pooled", "loso", "check"])
    parser.add_argument("--rankings", required=True, help="folder of r-STORE-SET.json")
    parser.add_argument("--bootstrap", type=int, default=4000)
    parser.add_argument("--objective", choices=["margin", "mean"], default="margin")
    parser.add_argument("--sweeps", type=int, default=4)
    options = parser.parse_args()
    {"pooled": pooled, "loso": loso, "check": check}[options.command](options)


if __name__ == "__main__":
    main()
