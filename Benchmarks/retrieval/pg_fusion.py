#!/usr/bin/env python3
"""Score fusion's parameters fitted for pgvector alone, leave-one-set-out over the five judged sets.

  Benchmarks/retrieval/pg_fusion.py calibrate --rankings DIR
  Benchmarks/retrieval/pg_fusion.py grid    --rankings DIR [--transform none|floor|power] [--objective margin|mean]
  Benchmarks/retrieval/pg_fusion.py learned --rankings DIR [--transform ...] [--objective ...] [--sweeps 4]
  Benchmarks/retrieval/pg_fusion.py score   --rankings DIR --setting a=…,q=…,low=…,high=…,norm=…,lookups=… [--transform …]

DIR holds `replay.py fetch`'s rankings as r-pg-SET.json (and r-local-SET.json for `calibrate`). Every ranking
is scored as replay.py scores it (the first 50 of each ranking fused, copies collapsed, nDCG@10).

The two stores' keyword scores come from different functions: the local store's BM25 (tf saturating from 1 to
k1 + 1 = 2.2 a word, and a chunk's length in it), pgvector's Σ idf · `ts_rank` (normalization 0: a word's
`ts_rank` goes from 0.061 for one occurrence to at most 0.1, no length for prose; rows and records with BM25's
length factor, docs/STORES.md). Score fusion reads two things from the keyword scores: each record's score over
the first, and the ranking's flatness (its tenth score over its first), which sets the vector weight. The
keyword transforms, applied to pgvector's scores before fusion (both readings then use the transformed scores;
the order is unchanged):
- `none`: as today;
- `floor`: the ranking's last score (of the 50 fused) subtracted, so the share every matching record holds
  (each word present counts at least 0.061 · idf) does not read as flatness; scores min-max in the ranking;
- `power`: scores over the first raised to a power p (`--power`; default the calibration's), which stretches
  a compressed ranking; p chosen without judgments, by `calibrate`: the power that makes the median of
  pgvector's flatness over the five sets' queries the local store's (log of one median over log of the other).

`grid`: today's family (loso_grid.py: vector weight a, question weight q, ramp ends, vector normalization,
look-ups at 0 or a; 3,136 settings), fitted on pgvector's four sets and scored on the fifth, each in turn; the
objective `margin` (issue 31's bar: the worst of fused − the better of vector and keyword over the training
sets' kinds, natural above both; ties the mean, then the setting nearest today's) or `mean` (the mean nDCG@10;
ties the margin). `learned`: learned_fusion.py's eleven-weight family, coordinate ascent from today's default,
on pgvector's sets alone. Both print, per held-out fold, the margins per kind of today's default (no transform)
and of the fit, the pooled margins per kind over the five held-out folds, and the merge test: the bar met on
every held-out fold, or better than today on every fold's worst kind and overall. Standard library only.
"""
import argparse, json, math, os, statistics, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate, learned_fusion, loso_grid, replay  # noqa: E402

SETS = learned_fusion.SETS
KINDS = learned_fusion.KINDS
DEPTH = replay.DEPTH


def flatness(keyword):
    keyword = keyword[:DEPTH]
    if len(keyword) < 10 or keyword[0]["score"] <= 0:
        return None
    return keyword[9]["score"] / keyword[0]["score"]


def transform(keyword, name, power):
    """A copy of the keyword ranking (its first 50) with each score mapped monotonically (the order kept)."""
    keyword = keyword[:DEPTH]
    if name == "none" or not keyword:
        return keyword
    first = keyword[0]["score"]
    if name == "floor":
        low = min(r["score"] for r in keyword)
        span = first - low
        # A ranking whose 50 scores are equal stays flat: every record 1, as min-max gives an equal ranking.
        return [dict(r, score=(r["score"] - low) / span if span > 0 else 1.0) for r in keyword]
    if name == "power":
        if first <= 0:
            return keyword
        return [dict(r, score=max(0.0, r["score"] / first) ** power) for r in keyword]
    raise SystemExit(f"unknown transform {name}")


def load_rankings(directory, store, name):
    with open(os.path.join(directory, "r-%s-%s.json" % (store, name)), encoding="utf-8") as f:
        return json.load(f)


def calibrate(options, quiet=False):
    """p with median(pg flatness)^p = median(local flatness), over every query of the five sets that has ten
    keyword hits on both stores. Uses no judgment."""
    pg, local = [], []
    for name in SETS:
        rp, rl = load_rankings(options.rankings, "pg", name), load_rankings(options.rankings, "local", name)
        for qid in rp:
            a, b = flatness(rp[qid]["keyword"]), flatness(rl[qid]["keyword"])
            if a is not None and b is not None and a > 0 and b > 0:
                pg.append(a)
                local.append(b)
    mp, ml = statistics.median(pg), statistics.median(local)
    p = math.log(ml) / math.log(mp)
    if not quiet:
        qs = lambda xs: " ".join("%.3f" % statistics.quantiles(xs, n=4)[i] for i in range(3))
        print(f"{len(pg)} queries with ten keyword hits on both stores; flatness (tenth over first) quartiles:")
        print(f"  pgvector {qs(pg)}   local {qs(local)}")
        print(f"  p = log {ml:.4f} / log {mp:.4f} = {p:.3f}")
        pw = [x ** p for x in pg]
        print(f"  pgvector's flatness with p: quartiles {qs(pw)}")
    return p


def load_pg(options, family):
    data = {}
    for name in SETS:
        queries = evaluate.load_queries(os.path.join(HERE, name + ".jsonl"))
        rankings = load_rankings(options.rankings, "pg", name)
        out = []
        for q in queries:
            r = rankings[q["id"]]
            r = dict(r, keyword=transform(r["keyword"], options.transform, options.power))
            out.append(loso_grid.Query(q, r) if family == "grid" else learned_fusion.Query(q, r, "pg", name))
        data[("pg", name)] = out
    return data


def kind_margins(values, alone_v, alone_k):
    """{kind: mean fused − the better of the means of vector and keyword}, and 'all' as the mean nDCG@10."""
    out = {}
    for kind in ["all"] + KINDS:
        if kind in values:
            out[kind] = (statistics.fmean(values[kind]) if kind == "all"
                         else statistics.fmean(values[kind]) - max(statistics.fmean(alone_v[kind]),
                                                                   statistics.fmean(alone_k[kind])))
    return out


def worst_of(m):
    return min(m[k] - (1e-6 if k == "natural" and m[k] <= 0 else 0) for k in KINDS if k in m)


def below(m):
    return [k for k in KINDS if k in m and (m[k] < -1e-12 or (k == "natural" and m[k] <= 1e-12))]


def pooled_margins(per, names):
    """`kind_margins` over the queries of the named folds (each query: kind, vector, keyword, fused nDCG)."""
    values, v, k = {}, {}, {}
    for name in names:
        for kind, vv, kk, x in per[name]:
            for key in (kind, "all"):
                values.setdefault(key, []).append(x)
                v.setdefault(key, []).append(vv)
                k.setdefault(key, []).append(kk)
    return kind_margins(values, v, k)


def report(folds, today_q, fitted_q):
    """folds: [(set, description)]; today_q / fitted_q: {set: [(kind, vector, keyword, value)]}."""
    print(f"{'held out':10}{'rule':8}{'all':>8}" + "".join(f"{k:>12}" for k in KINDS) + "   worst  (all: nDCG@10; kinds: margin)")
    rows = []
    for name, _ in folds:
        line = {}
        for label, per in (("today", today_q), ("fit", fitted_q)):
            m = pooled_margins(per, [name])
            line[label] = m
            print(f"{name:10}{label:8}{m['all']:8.3f}" + "".join(
                (f"{m[k]:+12.3f}" if k in m else f"{'':>12}") for k in KINDS) + f"{worst_of(m):+8.3f}"
                  + ("   below: " + ", ".join(below(m)) if below(m) else ""))
        rows.append((name, line["today"], line["fit"]))
    # pooled over the five held-out folds
    print("pooled over the five held-out folds (each query scored by the fit that did not see its set):")
    pooled = {}
    for label, per in (("today", today_q), ("fit", fitted_q)):
        m = pooled_margins(per, [name for name, _ in folds])
        pooled[label] = m
        print(f"{'pooled':10}{label:8}{m['all']:8.3f}" + "".join(
            (f"{m[k]:+12.3f}" if k in m else f"{'':>12}") for k in KINDS) + f"{worst_of(m):+8.3f}")
    up = down = 0
    for name, _ in folds:
        for a, b in zip(today_q[name], fitted_q[name]):
            up += b[3] > a[3] + 1e-9
            down += b[3] < a[3] - 1e-9
    print(f"fit against today per query: higher on {up}, lower on {down}")
    bar = all(not below(fit) for _, _, fit in rows)
    better = all(worst_of(fit) > worst_of(today) and fit["all"] > today["all"] for _, today, fit in rows)
    print(f"merge test: the bar on every held-out fold: {bar}; better than today on every fold's worst kind and "
          f"overall: {better}  -> {'PASSES' if bar or better else 'fails'}")
    return bar or better


def grid(options):
    data = load_pg(options, "grid")
    plain = load_pg(argparse.Namespace(**dict(vars(options), transform="none")), "grid")
    settings = loso_grid.FAMILIES[-1][1]()
    print(f"today's family, {len(settings)} settings; pgvector alone; transform {options.transform}"
          + (f" (p {options.power:.3f})" if options.transform == "power" else "") + f"; objective {options.objective}")

    def fit(pairs):
        best = None
        for s in settings:
            margin, m, _ = loso_grid.evaluate_setting(data, s, pairs)
            key = ((round(margin, 9), round(m, 9)) if options.objective == "margin" else (round(m, 9), round(margin, 9)))
            key = key + (-loso_grid.distance(s),)
            if best is None or key > best[0]:
                best = (key, s)
        return best[1]

    folds, today_q, fitted_q = [], {}, {}
    for out in SETS:
        s = fit([("pg", se) for se in SETS if se != out])
        folds.append((out, loso_grid.name(s)))
        print(f"# fitted without {out}: {loso_grid.name(s)}")
        today_q[out] = [(x.kind, x.alone["vector"], x.alone["keyword"], x.ndcg(loso_grid.TODAY)) for x in plain[("pg", out)]]
        fitted_q[out] = [(x.kind, x.alone["vector"], x.alone["keyword"], x.ndcg(s)) for x in data[("pg", out)]]
    report(folds, today_q, fitted_q)
    s = fit([("pg", se) for se in SETS])
    margin, m, detail = loso_grid.evaluate_setting(data, s, [("pg", se) for se in SETS])
    loso_grid.FUSED.clear()  # its cache is keyed by setting and set, not by the transform
    tmargin, tm, _ = loso_grid.evaluate_setting(plain, loso_grid.TODAY, [("pg", se) for se in SETS])
    print(f"# fitted on all five: {loso_grid.name(s)}: worst margin {margin:+.3f}, mean nDCG@10 {m:.4f} "
          f"(today {tmargin:+.3f}, {tm:.4f}); below: {', '.join(loso_grid.below(detail)) or 'none'}")


def learned(options):
    data = load_pg(options, "learned")
    plain = load_pg(argparse.Namespace(**dict(vars(options), transform="none")), "learned")
    scorer = learned_fusion.Scorer(data)
    print(f"learned_fusion.py's family; pgvector alone; transform {options.transform}"
          + (f" (p {options.power:.3f})" if options.transform == "power" else "") + f"; objective {options.objective}")
    folds, today_q, fitted_q = [], {}, {}
    for out in SETS:
        s, _ = learned_fusion.fit(scorer, [("pg", se) for se in SETS if se != out], options.objective, options.sweeps)
        folds.append((out, learned_fusion.describe(s)))
        print(f"# fitted without {out}: {learned_fusion.describe(s)}")
        today_q[out] = [(x.kind, x.alone["vector"], x.alone["keyword"], x.ndcg(learned_fusion.TODAY)) for x in plain[("pg", out)]]
        fitted_q[out] = [(x.kind, x.alone["vector"], x.alone["keyword"], x.ndcg(s)) for x in data[("pg", out)]]
    report(folds, today_q, fitted_q)


def score(options):
    data = load_pg(options, "grid")
    s = loso_grid.parse_setting(options.setting)
    loso_grid.table(data, s, [("pg", se) for se in SETS])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["calibrate", "grid", "learned", "score"])
    parser.add_argument("--rankings", required=True, help="folder of r-STORE-SET.json")
    parser.add_argument("--transform", choices=["none", "floor", "power"], default="none")
    parser.add_argument("--power", type=float, help="p for --transform power (default: calibrate's)")
    parser.add_argument("--objective", choices=["margin", "mean"], default="margin")
    parser.add_argument("--sweeps", type=int, default=4)
    parser.add_argument("--setting", help="for score: a=…,q=…,low=…,high=…,norm=…,lookups=…")
    options = parser.parse_args()
    if options.command == "calibrate":
        calibrate(options)
        return
    if options.transform == "power" and options.power is None:
        options.power = calibrate(options, quiet=True)
    {"grid": grid, "learned": learned, "score": score}[options.command](options)


if __name__ == "__main__":
    main()
