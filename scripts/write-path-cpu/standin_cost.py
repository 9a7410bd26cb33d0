"""CPU of the OpenAI stand-in's per-request work on a corpus's chunks (256-token pieces, 32 overlapping, as the
latency benchmark chunks): its token counting, vectors, base64, and JSON in and out for batches of 64 inputs
(Sluice) and of one (the cookbook's processor). Run with the tools venv's python (tiktoken):
    ~/.cache/sluice/venv/bin/python scripts/write-path-cpu/standin_cost.py /tmp/latency-corpus"""
import base64, json, os, struct, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../Sources/SluiceTesting/StandIns"))
import openai_standin as s
files = [os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs]
texts = []
for p in files:
    try:
        t = open(p, encoding="utf-8", errors="replace").read()
    except Exception:
        continue
    ids = s._ENC.encode_ordinary(t)
    for i in range(0, len(ids), 224):
        texts.append(s._ENC.decode(ids[i:i + 256]))
print("encoder:", type(s._ENC).__module__, "files", len(files), "chunks", len(texts), "chars", sum(map(len, texts)))
def cpu(f):
    t = time.process_time(); f(); return time.process_time() - t
tok = cpu(lambda: [s.count_tokens(x) for x in texts])
vec = cpu(lambda: [s.vector(x, 64) for x in texts])
vs = [s.vector(x, 64) for x in texts]
b64 = cpu(lambda: [base64.b64encode(b"".join(struct.pack("<f", x) for x in v)).decode() for v in vs])
def batches(n):
    for i in range(0, len(texts), n):
        body = json.dumps({"input": texts[i:i + n], "model": "m", "encoding_format": "base64", "dimensions": 64})
        req = json.loads(body)
        json.dumps({"object": "list", "data": [{"object": "embedding", "index": j, "embedding": "A" * 344} for j in range(len(req["input"]))]})
j64 = cpu(lambda: batches(64)); j1 = cpu(lambda: batches(1))
print("CPU-s: token counting %.3f, vectors %.3f, base64 %.3f, JSON in+out batches of 64 %.3f, of 1 %.3f" % (tok, vec, b64, j64, j1))
