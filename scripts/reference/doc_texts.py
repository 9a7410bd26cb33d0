"""Writes a fixed set of real texts of mixed length from /usr/share/doc as JSON lines {"text": ...}.

    python doc_texts.py COUNT OUT.jsonl

Plain and gzip-compressed files (READMEs, changelogs, FAQs...), sorted by path, cut into paragraphs
(the first 100,000);
each text is 1 to 12 consecutive paragraphs (seeded), 40 to 2,000 characters: short lines, paragraphs
and passages long enough to fill the 256-token window.
"""
import gzip
import json
import pathlib
import random
import sys

count, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(2000)
paragraphs = []
for path in sorted(pathlib.Path("/usr/share/doc").rglob("*")):
    if not path.is_file() or path.is_symlink() or path.stat().st_size > 2_000_000:
        continue
    if path.suffix not in ("", ".gz", ".txt", ".md") or "copyright" in path.name:
        continue
    try:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        continue
    if "\x00" in text:
        continue
    paragraphs += [p.strip() for p in text.split("\n\n") if len(p.strip()) >= 40]
    if len(paragraphs) >= 100_000:
        break
texts = []
while len(texts) < count:
    start = rng.randrange(len(paragraphs))
    text = "\n\n".join(paragraphs[start:start + rng.randint(1, 12)])[:2000]
    texts.append(text)
with open(out, "w", encoding="utf-8") as f:
    for text in texts:
        f.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
print(f"{len(texts)} texts from {len(paragraphs)} paragraphs of /usr/share/doc", file=sys.stderr)
