"""An independent reference for Sluice's MiniLM embedder: all-MiniLM-L6-v2's forward pass in NumPy
(float64) from the same model.safetensors, with the Hugging Face fast tokenizer (`tokenizers`).

    python minilm_reference.py embed < texts.jsonl > vectors.jsonl   # {"text": ...} -> {"embedding": [...]}
    python minilm_reference.py fixture                               # writes the test fixture

Run with the tools venv ($SLUICE_CACHE_DIR/venv/bin/python). Written from the BERT architecture, not
from Sluice's Swift code: embeddings + LayerNorm, 6 layers of masked multi-head self-attention and an
exact-GELU feed-forward (residual + LayerNorm each), mean pooling over the attention mask, L2 norm.
"""
import json
import os
import pathlib
import struct
import sys

import numpy as np
from tokenizers import Tokenizer

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from real_texts import ROOT, real_texts  # noqa: E402

MODEL_DIR = pathlib.Path(os.environ.get("SLUICE_MODEL_DIR") or pathlib.Path(
    os.environ.get("SLUICE_CACHE_DIR", pathlib.Path.home() / ".cache/sluice")) / "models/all-MiniLM-L6-v2")


def load_safetensors(path):
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data, dtype="<f4", count=(end - begin) // 4, offset=8 + length + begin)
        tensors[name] = array.reshape(entry["shape"]).astype(np.float64)
    return tensors


def erf(x):
    """erf in float64 to ~1e-13: Maclaurin series for |x| < 2.5, continued fraction for erfc above."""
    a = np.abs(x)
    out = np.empty_like(x)
    small = a < 2.5
    s = a[small]
    term = s.copy()
    total = s.copy()
    for n in range(1, 80):
        term = term * -(s * s) / n
        total = total + term / (2 * n + 1)
    out[small] = 2 / np.sqrt(np.pi) * total
    b = a[~small]
    # erfc(b) = exp(-b^2)/sqrt(pi) * 1/(b + 1/2/(b + 1/(b + 3/2/(b + 2/(b + ...))))), evaluated backwards.
    frac = b.copy()
    for k in range(120, 0, -1):
        frac = b + (k / 2) / frac
    out[~small] = 1 - np.exp(-b * b) / np.sqrt(np.pi) / frac
    return np.sign(x) * out


def layer_norm(x, weight, bias, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class Reference:
    def __init__(self):
        self.w = load_safetensors(MODEL_DIR / "model.safetensors")
        config = json.loads((MODEL_DIR / "config.json").read_text())
        self.heads = config["num_attention_heads"]
        self.layers = config["num_hidden_layers"]
        self.eps = config["layer_norm_eps"]
        window = json.loads((MODEL_DIR / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=window)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def embed(self, texts):
        w = self.w
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings])
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float64)
        batch, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        hidden = x.shape[-1]
        d = hidden // self.heads
        additive = (1 - mask)[:, None, None, :] * -1e30
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def dense(t, name):
                return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def split(t):
                return t.reshape(batch, length, self.heads, d).transpose(0, 2, 1, 3)

            q = split(dense(x, "attention.self.query"))
            k = split(dense(x, "attention.self.key"))
            v = split(dense(x, "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + additive
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            probs = scores / scores.sum(-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = layer_norm(x + dense(context, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"],
                           w[p + "attention.output.LayerNorm.bias"], self.eps)
            inner = dense(x, "intermediate.dense")
            inner = 0.5 * inner * (1 + erf(inner / np.sqrt(2)))
            x = layer_norm(x + dense(inner, "output.dense"), w[p + "output.LayerNorm.weight"],
                           w[p + "output.LayerNorm.bias"], self.eps)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed_all(self, texts, batch=16):
        # Sorted by length so that batches pad little; returned in input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = [None] * len(texts)
        for start in range(0, len(order), batch):
            chunk = order[start:start + batch]
            for i, vector in zip(chunk, self.embed([texts[i] for i in chunk])):
                out[i] = vector
        return out


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else "embed"
    reference = Reference()
    if command == "embed":
        texts = [json.loads(line)["text"] for line in sys.stdin if line.strip()]
        for vector in reference.embed_all(texts):
            print(json.dumps({"embedding": [float(v) for v in vector]}))
    elif command == "fixture":
        texts = ["", "Hello, world!", "Café naïve résumé façade", "東京は日本の首都です。", "emoji 😀 and URLs https://example.com/x?y=1",
                 "[SEP] special [CLS] tokens", " ".join(["long"] * 400)] + real_texts(33, seed=7)
        out = ROOT / "Tests/SluiceEmbedTests/Fixtures/minilm-reference.jsonl"
        with out.open("w", encoding="utf-8") as f:
            for text, vector in zip(texts, reference.embed_all(texts)):
                f.write(json.dumps({"text": text, "embedding": [float(f"{v:.7g}") for v in vector]},
                                   ensure_ascii=False) + "\n")
        print(f"wrote {len(texts)} reference vectors to {out}", file=sys.stderr)
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
