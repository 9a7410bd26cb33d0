#!/usr/bin/env python3
"""Writes the base and the queries of ivf_recall.py as .npy files, for `sluice-bench local-ivf`.

    split.py VECTORS.npz QUERIES.npz OUT_DIR [--heldout 500]

The same split as ivf_recall.py: copies of one vector kept once (first appearance), `--heldout` vectors
drawn at random (seed 33) leave the base; OUT_DIR/base.npy (the base, in the store's order),
OUT_DIR/heldout.npy and OUT_DIR/judged.npy (QUERIES.npz's vectors), all float32, C order; and for each
set of queries NAME-kth.npy, the exact 10th best cosine of each query over the base (the truth for
`sluice-bench local-ivf --truth`, when the store's own exact scan is too slow, as in a debug build).
"""
import argparse
import os

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("vectors")
parser.add_argument("queries")
parser.add_argument("out")
parser.add_argument("--heldout", type=int, default=500)
args = parser.parse_args()

vectors = np.load(args.vectors)["vectors"]
_, first_seen = np.unique(vectors.view(np.dtype((np.void, vectors.dtype.itemsize * vectors.shape[1]))),
                          return_index=True)
vectors = vectors[np.sort(first_seen)]
rng = np.random.default_rng(33)
held = np.zeros(len(vectors), dtype=bool)
held[rng.choice(len(vectors), args.heldout, replace=False)] = True
os.makedirs(args.out, exist_ok=True)
base = vectors[~held]
for name, part in (("base", base), ("heldout", vectors[held]), ("judged", np.load(args.queries)["vectors"])):
    np.save(os.path.join(args.out, name + ".npy"), np.ascontiguousarray(part, dtype="<f4"))
    print(name, part.shape)
    if name != "base":
        unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)
        scores = unit(part.astype(np.float64)) @ unit(base.astype(np.float64)).T
        kth = -np.partition(-scores, 9, axis=1)[:, 9]
        np.save(os.path.join(args.out, name + "-kth.npy"), np.ascontiguousarray(kth, dtype="<f4"))
