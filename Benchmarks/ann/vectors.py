#!/usr/bin/env python3
"""Read the vectors a JSONL sink wrote (its file, or its journal while a run is still writing) into .npy.

    vectors.py OUT.npz VECTORS.jsonl[.journal] [--limit N]

Keeps the order of the file (the order the store received them), the records' document keys, and
L2-normalizes each vector (the local store ranks by cosine). Writes `vectors` (float32, n x d) and `keys`.
"""
import argparse
import json

import numpy as np


def read(path, limit=None):
    vectors, keys = [], []
    with open(path) as file:
        for line in file:
            try:
                item = json.loads(line)
            except json.JSONDecodeError:  # the journal's last line while the run writes it
                break
            if "op" in item:  # the journal: {"op": "upsert", "record": {...}}
                if item["op"] != "upsert":
                    continue
                item = item["record"]
            vectors.append(np.asarray(item["vector"], dtype=np.float32))
            keys.append(item.get("document_key", ""))
            if limit and len(vectors) >= limit:
                break
    matrix = np.vstack(vectors)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix, np.asarray(keys)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("jsonl")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    matrix, keys = read(args.jsonl, args.limit)
    np.savez(args.out, vectors=matrix, keys=keys)
    print(f"{matrix.shape[0]} vectors of {matrix.shape[1]} dimensions, {len(set(keys))} documents -> {args.out}")


if __name__ == "__main__":
    main()
