#!/usr/bin/env python3
"""The reference side of `sluice-bench tokenizer`: tiktoken's `encode_ordinary`, one thread, over the same texts.

    tiktoken_bench.py TEXTS.json ENCODING REPEATS

TEXTS.json is a JSON array of strings (written by the benchmark, so both sides see the same text). The
encoding is built from the rank file in $SLUICE_CACHE_DIR/tiktoken (the one Sluice reads) with tiktoken's own
pattern and special tokens, so nothing is downloaded. One untimed pass, then REPEATS timed passes; prints one
JSON object: {"encoding", "version", "tokens", "seconds": [...]}.
"""
import json
import os
import sys
import time

import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public


def encoding(name):
    cache = os.environ.get("SLUICE_CACHE_DIR") or os.path.expanduser("~/.cache/sluice")
    path = os.path.join(cache, "tiktoken", name + ".tiktoken")
    # tiktoken's constructors name a URL; read the same ranks from the local file instead.
    openai_public.load_tiktoken_bpe = lambda *args, **kwargs: tiktoken.load.load_tiktoken_bpe(path)
    return tiktoken.Encoding(**getattr(openai_public, name)())


def main():
    texts_path, name, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(texts_path, encoding="utf-8") as f:
        texts = json.load(f)
    enc = encoding(name)
    encode = enc.encode_ordinary
    tokens = sum(len(encode(t)) for t in texts)
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for t in texts:
            encode(t)
        seconds.append(time.perf_counter() - start)
    print(json.dumps({"encoding": name, "version": tiktoken.__version__, "tokens": tokens, "seconds": seconds}))


if __name__ == "__main__":
    main()
