"""Real texts of mixed length from the repository's samples/ (text and Markdown files), deterministic.

Used by the MiniLM reference scripts: paragraphs as they are (short and long), single lines, and runs of
consecutive paragraphs long enough to be truncated at the model's 256-token window.
"""
import pathlib
import random

ROOT = pathlib.Path(__file__).resolve().parents[2]


def paragraphs():
    found = []
    for folder in ("text", "markdown"):
        for path in sorted((ROOT / "samples" / folder).glob("*")):
            text = path.read_text(encoding="utf-8", errors="replace")
            for block in text.split("\n\n"):
                block = block.strip()
                if len(block) >= 3:
                    found.append(block)
    return found


def real_texts(count, seed=4):
    rng = random.Random(seed)
    blocks = paragraphs()
    texts = []
    while len(texts) < count:
        kind = rng.random()
        start = rng.randrange(len(blocks))
        if kind < 0.2:
            lines = [line for line in blocks[start].splitlines() if line.strip()]
            texts.append(rng.choice(lines).strip())
        elif kind < 0.8:
            texts.append(blocks[start])
        else:
            texts.append("\n\n".join(blocks[start:start + rng.randint(2, 8)]))
    return texts
