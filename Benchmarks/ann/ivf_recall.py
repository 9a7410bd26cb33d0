#!/usr/bin/env python3
"""Recall and cost of an IVF index with 8-bit codes on real vectors, against HNSW (issue 33 goals 2 and 3).

    ivf_recall.py VECTORS.npz [--queries QUERIES.npz] [--heldout 500] [--json OUT.json] [--skip-hnsw]

VECTORS.npz and QUERIES.npz come from vectors.py. Copies of one vector (one text in several documents) are kept once
unless `--keep-copies`. `--heldout` vectors drawn at random (seed 33) leave the base
and become queries, beside every vector of QUERIES.npz (the judged queries' embeddings). The truth is the
exact top 10 by cosine over the base, ties counted: a hit is any returned vector whose exact score reaches
the 10th best (copies of one text have one vector).

The IVF here is the design under test, simulated with NumPy over faiss's k-means and coarse search:
- centroids from k-means (faiss.Kmeans, L2, 10 iterations, seed 1, at most 64 training vectors a list) on a
  training set; every base vector in
  the list of its nearest centroid;
- a list holds each vector's 8-bit code exactly as the local store's graph does (CHNSW: L2-normalized, one
  float scale, the largest component at +-127), not a residual, so codes never depend on the centroids;
- a search takes the `nprobe` nearest centroids, scores every code in those lists, keeps the best
  k + max(k, 8) = 20 and ranks those by the float vectors (as the local store re-ranks the graph's labels).
It prints recall@10 of three rankings of the same probed lists: by the 8-bit scores alone (`int8`), the 20
best by 8 bits re-ranked by floats (`int8+rerank`, the design), and by floats over the whole lists (`float`,
what the 8 bits cost), with the codes scanned per query (mean and p99), for:
1. lists trained at full size, nlist = 2 and 4 x sqrt(n);
2. stale centroids: trained on the first 10,000 base vectors (the store's order; the size at which the local
   store starts indexing), nlist 100 and 2 x sqrt(n), all vectors then added; against the same nlist trained on
   everything; with the lists' size skew;
3. growth: the first n/4, n/2 and all n base vectors, nlist 2 x sqrt(size), the smallest nprobe reaching recall
   0.95 with the rerank and the codes it scans;
4. (`--parts sample`, not in the default set) the training sample's size: nlist 2 x sqrt(n) trained on at most
   8, 16 or 32 vectors a list;
5. timing on this CPU, one thread: faiss's IVF scan of 8-bit codes (IndexIVFScalarQuantizer, QT_8bit, not
   by residual) per query and per code, and HNSW (faiss IndexHNSWFlat, M 16, efConstruction 100, efSearch 64
   as the local store's defaults, 20 candidates re-ranked by floats) recall and time.
"""
import argparse
import json
import time

import faiss
import numpy as np

K = 10
CANDIDATES = K + max(K, 8)
NPROBES = [1, 2, 4, 8, 16, 32, 64, 128]


def sluice_int8(x):
    """The graph's 8-bit code of each (normalized) row, dequantized: scale * round(x / scale)."""
    scale = np.abs(x).max(axis=1, keepdims=True) / 127.0
    scale[scale == 0] = 1
    levels = np.clip(np.rint(x / scale), -127, 127)
    return (levels * scale).astype(np.float32)


class Truth:
    def __init__(self, base, queries):
        index = faiss.IndexFlatIP(base.shape[1])
        index.add(base)
        scores, _ = index.search(queries, K)
        self.kth = scores[:, K - 1]
        self.base, self.queries = base, queries

    def hits(self, found):
        """Per query, the share of the 10 returned ids (rows of `found`, -1 for none) whose exact score reaches
        the 10th best."""
        out = np.zeros(len(found))
        for q, ids in enumerate(found):
            ids = ids[ids >= 0]
            exact = self.base[ids] @ self.queries[q]
            out[q] = min(K, int((exact >= self.kth[q] - 1e-6).sum())) / K
        return out

    def recall(self, found):
        return float(self.hits(found).mean())


def kmeans(train, nlist, per_list=64):
    km = faiss.Kmeans(train.shape[1], nlist, niter=10, seed=1, verbose=False, max_points_per_centroid=per_list)
    km.train(train)
    return km.centroids


def skew(sizes):
    sizes = np.asarray(sizes, dtype=np.float64)
    mean = sizes.mean()
    return {
        "lists": len(sizes),
        "empty": int((sizes == 0).sum()),
        "max_over_mean": float(sizes.max() / mean),
        "cv": float(sizes.std() / mean),
        # the size of the list a random vector (or a query landing like one) is in
        "weighted_mean_over_mean": float((sizes**2).sum() / sizes.sum() / mean),
    }


def ivf_sweep(base, deq, truth, centroids, nprobes=NPROBES, heldout=None):
    quantizer = faiss.IndexFlatL2(base.shape[1])
    quantizer.add(centroids)
    _, assign = quantizer.search(base, 1)
    assign = assign[:, 0]
    order = np.argsort(assign, kind="stable")
    sizes = np.bincount(assign, minlength=len(centroids))
    starts = np.concatenate([[0], np.cumsum(sizes)])
    nprobes = [p for p in nprobes if p <= max(1, len(centroids) // 4)]  # at most a quarter of the lists
    top = max(nprobes)
    _, probes = quantizer.search(truth.queries, top)
    nq = len(truth.queries)
    found = {(p, how): np.full((nq, K), -1, dtype=np.int64) for p in nprobes for how in ("int8", "rerank", "float")}
    scanned = np.zeros((len(nprobes), nq), dtype=np.int64)
    for q in range(nq):
        lists = probes[q]
        ids = np.concatenate([order[starts[c] : starts[c + 1]] for c in lists])
        rank = np.concatenate([np.full(sizes[c], r) for r, c in enumerate(lists)])
        s8 = deq[ids] @ truth.queries[q]
        sf = base[ids] @ truth.queries[q]
        for i, p in enumerate(nprobes):
            mask = rank < p
            scanned[i, q] = mask.sum()
            pid, p8, pf = ids[mask], s8[mask], sf[mask]
            if len(pid) == 0:
                continue
            best8 = np.argsort(-p8, kind="stable")[:CANDIDATES]
            found[(p, "int8")][q, : min(K, len(best8))] = pid[best8[:K]]
            rer = best8[np.argsort(-pf[best8], kind="stable")[:K]]
            found[(p, "rerank")][q, : len(rer)] = pid[rer]
            bestf = np.argsort(-pf, kind="stable")[:K]
            found[(p, "float")][q, : len(bestf)] = pid[bestf]
    rows = []
    for i, p in enumerate(nprobes):
        rerank = truth.hits(found[(p, "rerank")])
        rows.append(
            {
                "nprobe": p,
                "int8": truth.recall(found[(p, "int8")]),
                "rerank": float(rerank.mean()),
                "rerank_heldout": float(rerank[:heldout].mean()),
                "rerank_judged": float(rerank[heldout:].mean()) if heldout < nq else float("nan"),
                "float": truth.recall(found[(p, "float")]),
                "scanned_mean": float(scanned[i].mean()),
                "scanned_p99": float(np.percentile(scanned[i], 99)),
            }
        )
    return rows, sizes


def print_sweep(title, rows, n, extra=""):
    print(f"\n{title}{extra}")
    print("| nprobe | recall@10 int8 | int8 + rerank 20 (held out / judged) | float | codes scanned mean | p99 | share of n |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['nprobe']} | {r['int8']:.3f} | {r['rerank']:.3f} ({r['rerank_heldout']:.3f} / {r['rerank_judged']:.3f}) | "
            f"{r['float']:.3f} | "
            f"{r['scanned_mean']:,.0f} | {r['scanned_p99']:,.0f} | {r['scanned_mean'] / n:.2%} |"
        )


def smallest(rows, target=0.95):
    for r in rows:
        if r["rerank"] >= target:
            return r
    return None


def timed_faiss_ivf(base, queries, centroids, nprobes):
    d = base.shape[1]
    quantizer = faiss.IndexFlatL2(d)
    index = faiss.IndexIVFScalarQuantizer(quantizer, d, len(centroids), faiss.ScalarQuantizer.QT_8bit,
                                          faiss.METRIC_INNER_PRODUCT, False)
    quantizer.add(centroids)
    index.train(base[:: max(1, len(base) // 20000)])  # the scalar quantizer's ranges only; the lists are set
    index.add(base)
    out = []
    for p in nprobes:
        if p > len(centroids):
            continue
        index.nprobe = p
        faiss.cvar.indexIVF_stats.reset()
        index.search(queries[:50], CANDIDATES)  # warm
        faiss.cvar.indexIVF_stats.reset()
        start = time.process_time()
        for q in range(len(queries)):
            index.search(queries[q : q + 1], CANDIDATES)
        cpu = time.process_time() - start
        ndis = faiss.cvar.indexIVF_stats.ndis
        out.append({"nprobe": p, "cpu_us_per_query": cpu / len(queries) * 1e6,
                    "ns_per_code": cpu / max(1, ndis) * 1e9, "codes_per_query": ndis / len(queries)})
    return out


def timed_hnsw(base, truth, heldout, efs=(64, 128, 256)):
    d = base.shape[1]
    index = faiss.IndexHNSWFlat(d, 16, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 100
    faiss.omp_set_num_threads(2)
    start = time.time()
    index.add(base)
    build = time.time() - start
    faiss.omp_set_num_threads(1)
    rows = []
    for ef in efs:
        index.hnsw.efSearch = ef
        found = np.full((len(truth.queries), K), -1, dtype=np.int64)
        start = time.process_time()
        for q in range(len(truth.queries)):
            _, ids = index.search(truth.queries[q : q + 1], CANDIDATES)
            ids = ids[0][ids[0] >= 0]
            exact = base[ids] @ truth.queries[q]
            found[q, : min(K, len(ids))] = ids[np.argsort(-exact, kind="stable")[:K]]
        cpu = time.process_time() - start
        hits = truth.hits(found)
        rows.append({"ef": ef, "recall": float(hits.mean()), "heldout": float(hits[:heldout].mean()),
                     "judged": float(hits[heldout:].mean()) if heldout < len(hits) else float("nan"),
                     "cpu_us_per_query": cpu / len(truth.queries) * 1e6})
    faiss.omp_set_num_threads(2)
    return {"rows": rows, "build_wall_s_2_threads": build}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vectors")
    parser.add_argument("--queries")
    parser.add_argument("--heldout", type=int, default=500)
    parser.add_argument("--json")
    parser.add_argument("--skip-hnsw", action="store_true")
    parser.add_argument("--stale-size", type=int, default=10_000)
    parser.add_argument("--parts", default="hnsw,fresh,stale,growth,timing",
                        help="which measurements, comma-separated: hnsw, fresh, stale, growth, timing, sample")
    parser.add_argument("--keep-copies", action="store_true", help="keep repeated vectors (copies of one text)")
    args = parser.parse_args()
    faiss.omp_set_num_threads(2)

    data = np.load(args.vectors)
    vectors = data["vectors"]
    total = len(vectors)
    if not args.keep_copies:  # one vector per distinct text, in the order of first appearance
        _, first_seen = np.unique(vectors.view(np.dtype((np.void, vectors.dtype.itemsize * vectors.shape[1]))),
                                  return_index=True)
        vectors = vectors[np.sort(first_seen)]
    rng = np.random.default_rng(33)
    held = np.zeros(len(vectors), dtype=bool)
    held[rng.choice(len(vectors), args.heldout, replace=False)] = True
    base, queries = vectors[~held], vectors[held]
    judged = 0
    if args.queries:
        extra = np.load(args.queries)["vectors"]
        judged = len(extra)
        queries = np.vstack([queries, extra])
    n, d = base.shape
    unique = len(np.unique(base.view(np.dtype((np.void, base.dtype.itemsize * d)))))
    print(f"{total:,} vectors read; base {n:,} vectors ({unique:,} distinct) of {d} dimensions; "
          f"queries {args.heldout} held out + {judged} judged")
    results = {"read": total, "n": n, "distinct": unique, "queries": len(queries)}
    deq = sluice_int8(base)
    truth = Truth(base, queries)
    root = int(round(np.sqrt(n)))

    held_n = args.heldout

    # HNSW at the local store's settings, for comparison.
    parts = set(args.parts.split(","))
    if args.skip_hnsw:
        parts.discard("hnsw")
    if "hnsw" in parts:
        results["hnsw"] = timed_hnsw(base, truth, held_n)
        print(f"\nHNSW (faiss IndexHNSWFlat, M 16, efConstruction 100, {CANDIDATES} candidates re-ranked by floats), "
              f"built in {results['hnsw']['build_wall_s_2_threads']:.0f} s wall on 2 threads")
        print("| efSearch | recall@10 (held out / judged) | CPU us per query, one thread |")
        print("|---|---|---|")
        for r in results["hnsw"]["rows"]:
            print(f"| {r['ef']} | {r['recall']:.3f} ({r['heldout']:.3f} / {r['judged']:.3f}) | {r['cpu_us_per_query']:.0f} |")

    # 1. Lists trained at full size.
    results["fresh"] = {}
    centroids_by_nlist = {}
    for mult in (2, 4) if "fresh" in parts else ():
        nlist = mult * root
        t = time.time()
        centroids = kmeans(base, nlist)
        train_s = time.time() - t
        centroids_by_nlist[nlist] = centroids
        rows, sizes = ivf_sweep(base, deq, truth, centroids, heldout=held_n)
        results["fresh"][nlist] = {"rows": rows, "skew": skew(sizes), "train_wall_s": train_s}
        print_sweep(f"IVF trained on all {n:,}, nlist {nlist} ({mult} x sqrt(n))", rows, n,
                    f"; k-means {train_s:.1f} s wall, 2 threads; lists {skew(sizes)}")

    # 2. Stale centroids.
    first = base[: args.stale_size]
    results["stale"] = {}
    for nlist in (int(round(np.sqrt(args.stale_size))), 2 * root) if "stale" in parts else ():
        centroids = kmeans(first, nlist)
        rows, sizes = ivf_sweep(base, deq, truth, centroids, heldout=held_n)
        fresh = results["fresh"].get(nlist)
        if fresh is None:
            centroids_by_nlist[nlist] = kmeans(base, nlist)
            frows, fsizes = ivf_sweep(base, deq, truth, centroids_by_nlist[nlist], heldout=held_n)
            results["fresh"][nlist] = {"rows": frows, "skew": skew(fsizes)}
            fresh = {"rows": frows, "skew": skew(fsizes)}
            print_sweep(f"IVF trained on all {n:,}, nlist {nlist}", frows, n, f"; lists {skew(fsizes)}")
        results["stale"][nlist] = {"rows": rows, "skew": skew(sizes), "fresh_skew": fresh["skew"]}
        print_sweep(f"IVF trained on the first {args.stale_size:,} only, nlist {nlist}, all {n:,} added", rows, n,
                    f"; lists {skew(sizes)}")

    # 3. Growth: the first n/4, n/2 of the base (the whole base is the fresh 2 x sqrt(n) run above).
    results["growth"] = []
    if "growth" in parts:
        print("\n| base | nlist | smallest nprobe with recall@10 >= 0.95 (int8 + rerank) | recall | codes scanned mean | p99 |")
        print("|---|---|---|---|---|---|")
    for part in (4, 2, 1) if "growth" in parts else ():
        size = n // part
        nlist = 2 * int(round(np.sqrt(size)))
        if nlist in results["fresh"] and part == 1:
            rows = results["fresh"][nlist]["rows"]
        else:
            sub = base[:size]
            rows, _ = ivf_sweep(sub, deq[:size], Truth(sub, queries), kmeans(sub, nlist), heldout=held_n)
        best = smallest(rows)
        results["growth"].append({"n": size, "nlist": nlist, "rows": rows, "smallest": best})
        if best:
            print(f"| {size:,} | {nlist} | {best['nprobe']} | {best['rerank']:.3f} | {best['scanned_mean']:,.0f} | "
                  f"{best['scanned_p99']:,.0f} |")
        else:
            last = rows[-1]
            print(f"| {size:,} | {nlist} | none up to {last['nprobe']} (a quarter of the lists): "
                  f"{last['rerank']:.3f} there | | {last['scanned_mean']:,.0f} | {last['scanned_p99']:,.0f} |")

    # 3b. The training sample's size: nlist 2 x sqrt(n) trained on at most 8, 16 or 32 vectors a list drawn from
    # the whole base (64 is the fresh run above).
    if "sample" in parts:
        nlist = 2 * root
        print("\n| nlist | training vectors a list | nprobe | recall@10 + rerank (held out / judged) | codes scanned mean | p99 |")
        print("|---|---|---|---|---|---|")
        results["sample"] = {}
        for per_list in (8, 16, 32):
            rows, sizes = ivf_sweep(base, deq, truth, kmeans(base, nlist, per_list), nprobes=[32, 64], heldout=held_n)
            results["sample"][per_list] = {"rows": rows, "skew": skew(sizes)}
            for r in rows:
                print(f"| {nlist} | {per_list} | {r['nprobe']} | {r['rerank']:.3f} ({r['rerank_heldout']:.3f} / "
                      f"{r['rerank_judged']:.3f}) | {r['scanned_mean']:,.0f} | {r['scanned_p99']:,.0f} |")

    # 4. Timing, one thread.
    nlist = 2 * root
    if "timing" not in parts:
        nlist = None
    elif nlist not in centroids_by_nlist:
        centroids_by_nlist[nlist] = kmeans(base, nlist)
    faiss.omp_set_num_threads(1)
    timing = timed_faiss_ivf(base, queries, centroids_by_nlist[nlist], NPROBES) if nlist else []
    results["timing_ivf"] = {"nlist": nlist, "rows": timing}
    if timing:
        print(f"\nfaiss IVF, 8-bit codes, nlist {nlist}, one thread, one query at a time, {CANDIDATES} results")
        print("| nprobe | codes per query | CPU us per query | ns per code |")
        print("|---|---|---|---|")
    for r in timing:
        print(f"| {r['nprobe']} | {r['codes_per_query']:,.0f} | {r['cpu_us_per_query']:.0f} | {r['ns_per_code']:.2f} |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1, default=float)


if __name__ == "__main__":
    main()
