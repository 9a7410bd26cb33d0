"""Real text vectors for the ANN harness, without building Sluice: Debian's documentation (/usr/share/doc,
plain text and .gz) cut into chunks of about 48 words, copies dropped, embedded with all-MiniLM-L6-v2 (the
store's local model, fp32) by a NumPy forward pass of its BERT encoder (mean pooling, normalized, as
sentence-transformers does; GELU by an erf approximation with error < 1.5e-7), written as a float32 .npy of
shape (n, 384) in a random order (seed 33), which hnsw_pread.cpp reads with --npy (the last --queries rows are
the queries).

    python embed_docs.py OUT.npy [--chunks 30000] [--model DIR] [--batch 64]

The model folder is the one Sluice's MiniLM embedder reads (model.safetensors, tokenizer.json).
"""

import argparse
import gzip
import json
import os
import struct
import sys
import time

import numpy as np
from tokenizers import Tokenizer


def load_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype=np.float32).reshape(info["shape"])
    return tensors


def erf(x):
    # Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7).
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(
        -x * x
    )
    return sign * y


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def encode(weights, ids, mask):
    batch, length = ids.shape
    x = weights["embeddings.word_embeddings.weight"][ids]
    x = x + weights["embeddings.position_embeddings.weight"][:length][None]
    x = x + weights["embeddings.token_type_embeddings.weight"][0][None, None]
    x = layer_norm(x, weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"])
    heads, size = 12, 32
    bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
    for i in range(6):
        p = f"encoder.layer.{i}."

        def dense(v, name):
            return v @ weights[p + name + ".weight"].T + weights[p + name + ".bias"]

        q = dense(x, "attention.self.query").reshape(batch, length, heads, size).transpose(0, 2, 1, 3)
        k = dense(x, "attention.self.key").reshape(batch, length, heads, size).transpose(0, 2, 3, 1)
        v = dense(x, "attention.self.value").reshape(batch, length, heads, size).transpose(0, 2, 1, 3)
        scores = q @ k * np.float32(1 / np.sqrt(size)) + bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, heads * size)
        x = layer_norm(x + dense(context, "attention.output.dense"), weights[p + "attention.output.LayerNorm.weight"],
                       weights[p + "attention.output.LayerNorm.bias"])
        h = dense(x, "intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h * np.float32(0.7071067811865476)))
        x = layer_norm(x + dense(h, "output.dense"), weights[p + "output.LayerNorm.weight"],
                       weights[p + "output.LayerNorm.bias"])
    m = mask[:, :, None].astype(np.float32)
    pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def chunks(root, words_per_chunk, wanted):
    seen = set()
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            try:
                if name.endswith(".gz"):
                    raw = gzip.open(path).read(4_000_000)
                elif "." not in name or name.endswith((".txt", ".md", ".rst")):
                    with open(path, "rb") as f:
                        raw = f.read(4_000_000)
                else:
                    continue
                text = raw.decode("utf-8")
            except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
                continue
            words = text.split()
            for start in range(0, len(words), words_per_chunk):
                chunk = " ".join(words[start:start + words_per_chunk])
                if len(chunk) < 40 or chunk in seen:
                    continue
                seen.add(chunk)
                yield chunk
                if len(seen) >= wanted:
                    return


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--chunks", type=int, default=30000)
    parser.add_argument("--model", default=os.path.expanduser("~/.cache/sluice/models/all-MiniLM-L6-v2"))
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--words", type=int, default=48)
    args = parser.parse_args()
    weights = load_safetensors(os.path.join(args.model, "model.safetensors"))
    tokenizer = Tokenizer.from_file(os.path.join(args.model, "tokenizer.json"))
    tokenizer.no_padding()  # the file pads to 128: pad per batch instead
    tokenizer.enable_truncation(128)
    texts = list(chunks("/usr/share/doc", args.words, args.chunks))
    print(f"{len(texts)} distinct chunks", file=sys.stderr)
    encoded = tokenizer.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
    vectors = np.zeros((len(texts), 384), dtype=np.float32)
    start = time.time()
    for first in range(0, len(order), args.batch):
        part = order[first:first + args.batch]
        length = max(len(encoded[i].ids) for i in part)
        ids = np.zeros((len(part), length), dtype=np.int64)
        mask = np.zeros((len(part), length), dtype=np.int64)
        for row, i in enumerate(part):
            ids[row, :len(encoded[i].ids)] = encoded[i].ids
            mask[row, :len(encoded[i].ids)] = 1
        vectors[part] = encode(weights, ids, mask)
        if (first // args.batch) % 25 == 0:
            print(f"{first + len(part)} embedded, {time.time() - start:.0f} s", file=sys.stderr, flush=True)
    # Copies of one text give one vector: keep it once.
    _, keep = np.unique(np.round(vectors, 5), axis=0, return_index=True)
    vectors = vectors[np.sort(keep)]
    vectors = vectors[np.random.default_rng(33).permutation(len(vectors))]
    np.save(args.out, vectors)
    print(f"{len(vectors)} vectors to {args.out}, {time.time() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
