"""Writes Tests/SluiceEmbedTests/Fixtures/wordpiece-parity.jsonl: texts and the token ids that the
Hugging Face fast tokenizer (Rust `tokenizers`, the one sentence-transformers uses) gives for them with
all-MiniLM-L6-v2's tokenizer.json, truncated to sentence_bert_config.json's max_seq_length (256).

Run with the tools venv: $SLUICE_CACHE_DIR/venv/bin/python scripts/reference/wordpiece_fixture.py
"""
import json
import os
import pathlib
import sys

from tokenizers import Tokenizer

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from real_texts import ROOT, real_texts  # noqa: E402

model_dir = pathlib.Path(os.environ.get("SLUICE_MODEL_DIR") or pathlib.Path(
    os.environ.get("SLUICE_CACHE_DIR", pathlib.Path.home() / ".cache/sluice")) / "models/all-MiniLM-L6-v2")
max_length = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
tokenizer.no_padding()
tokenizer.enable_truncation(max_length=max_length)

HANDWRITTEN = [
    "", " ", "   \t\n  ", "\n", "\u00a0\u2003\u3000", "Hello, world!", "HELLO WORLD", "hello world",
    "Café naïve résumé façade Ångström Ærøskøbing Straße İstanbul ΣΊΣΥΦΟΣ", "crème brûlée à la mode",
    "Ünïcödé Äpfel über Öl", "Ελληνικά κείμενα με τόνους", "Русский текст с ЗАГЛАВНЫМИ буквами Ёё",
    "東京は日本の首都です。", "我爱自然语言处理，你呢？", "한국어 텍스트도 있습니다", "日本語とEnglishのmixed文",
    "𠀀𠀁 CJK extension B 𪜀 and compatibility 豈", "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "ﬁ ligature ﬂ and ½ ² ℌ",
    "emoji 😀🎉👍🏽 👨‍👩‍👧 🥰 🤩 🫠 ❤️ ☃", "flags 🇩🇪🇯🇵 and keycaps 1️⃣",
    "https://example.com/path/to/page?query=1&x=%20y#frag", "mail me at someone.else+tag@example.org",
    "func embed(_ texts: [String]) async throws -> [[Float]] { return texts.map { $0.count } }",
    "for (int i = 0; i < n; ++i) { a[i] = b[i] * 2.5e-3; } // comment", "x<<=2; y>>>=1; z != w && p || q",
    "3.14159 2,718 1e10 -42 +7 0x1F 1_000_000 12:30 2024-01-31 $19.99 50% #1 №5",
    "The quick brown fox jumps over the lazy dog.", "don't won't can't it's o'clock rock'n'roll",
    "control\x00chars\x01here\x07and\x1bescape\x7fdel", "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom",
    "soft\u00adhyphen and \ufffdreplacement", "tabs\tand\nnewlines\r\nand\x0bvertical\x0cfeed",
    "private use \ue000\uf8ff and noncharacter \ufdd0 \uffff", "combining e\u0301 a\u0300 n\u0303 o\u0308",
    "a" * 99, "b" * 100, "c" * 101, "antidisestablishmentarianism supercalifragilisticexpialidocious",
    "[CLS] [SEP] [PAD] [MASK] [UNK] special tokens inside text", "hello[SEP]world[cls]lower",
    "x" + "[MASK]" * 3 + "y", "«guillemets» „quotes“ “curly” ‘single’ — em – en … ellipsis",
    "¿Qué? ¡Sí! 「括弧」『二重』【墨付き】", "math: ∑ ∫ √ ∞ ≠ ≤ ≥ ± × ÷ → ⇒ ∀ ∃ ∈", "currency € £ ¥ ₹ ₿ ¢",
    "Arabic النص العربي and Hebrew עברית", "Devanagari हिन्दी पाठ and Thai ข้อความภาษาไทย",
    "Vietnamese Tiếng Việt có dấu", "ǅungla ǈubljana ǋovak Ǳ", "ß ẞ ﬀ ŉ ǰ ΐ",
    "tab\u0009separated\u0009values", "line\u2028separator\u2029paragraph", "ogham\u1680space",
    "A" * 300, " ".join(["word"] * 400), "ab" * 80, "émoji🙂mixed🙂in🙂words", "#hashtag @mention $var %p",
    "C++ C# F# .NET node.js Python3.11 x86_64 arm64-v8a", "<html><body class=\"x\">Hi &amp; bye</body></html>",
    '{"key": [1, 2.5, null, true], "nested": {"a": "b"}}', "SELECT * FROM t WHERE id = 'x'; -- sql",
    "Ⅻ ⅻ ⓐ Ⓐ 🄰 𝐀𝐁𝐂 𝕏", "\u0130\u0049\u0131\u0069 dotted dotless", "Ǆ ǅ ǆ Ϊ ϓ ᾈ ᾼ ῌ",
]


def sweep(start, stop, width=64):
    texts = []
    for base in range(start, stop, width):
        chars = [chr(c) for c in range(base, min(base + width, stop)) if not 0xD800 <= c <= 0xDFFF]
        if chars:
            texts.append(" ".join(chars))
    return texts


texts = list(HANDWRITTEN)
texts += real_texts(400, seed=11)
texts += sweep(0, 0x10000)
for start, stop in [(0x10000, 0x10200), (0x1D400, 0x1D500), (0x1F000, 0x1FB00), (0x20000, 0x20100),
                    (0x2A6C0, 0x2A720), (0x2B700, 0x2B840), (0x2B900, 0x2B940), (0x2CEA0, 0x2CEC0),
                    (0x2F800, 0x2FA40), (0x30000, 0x30040), (0xE0000, 0xE0080), (0xF0000, 0xF0040)]:
    texts += sweep(start, stop)

out = ROOT / "Tests/SluiceEmbedTests/Fixtures/wordpiece-parity.jsonl"
with out.open("w", encoding="utf-8") as f:
    for text in texts:
        ids = tokenizer.encode(text).ids
        f.write(json.dumps({"text": text, "ids": " ".join(map(str, ids))}, ensure_ascii=False) + "\n")
print(f"wrote {len(texts)} texts to {out}", file=sys.stderr)
