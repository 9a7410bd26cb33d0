"""The benchmark's references: all-MiniLM-L6-v2 in onnxruntime and in OpenVINO (fp32, 2 threads), and
onnxruntime's own dynamically quantized model (int8), on the same texts as `sluice-bench minilm`.

    python minilm_onnx_bench.py TEXTS.jsonl [--engines onnxruntime,onnxruntime-int8,openvino] [--repeats 3]
                                [--threads 2] [--compare SWIFT_VECTORS.jsonl]

The ONNX graph is built here from the same model.safetensors (standard BERT operators, in the shapes a
PyTorch export of BertModel has: Gather, LayerNormalization, MatMul, Softmax, Erf, the attention mask as
Unsqueeze-Cast-Sub-Mul). onnxruntime runs it after its BERT optimizer's fusions (fused Attention,
SkipLayerNormalization, BiasGelu: `optimize_model(..., opt_level=0)`, the Python fusions alone, which
need sympy but not torch) with every session-level graph optimization on, 2 intra-op threads. OpenVINO
reads the plain ONNX graph itself (`Core.read_model`) and compiles it for the CPU with 2 inference
threads, the latency hint and f32 inference precision (on a CPU with AVX-512 BF16 its default would be
bf16). Both take batches of 64 texts sorted by length, padded to the longest in the batch. The packages
are installed into the tools venv on demand by scripts/bench-minilm.sh (not part of setup: CI does not
need them). GFLOP/s counts the model's work on the unpadded tokens, as `sluice-bench minilm` does.

onnxruntime-int8 is the fused graph after `onnxruntime.quantization.quantize_dynamic` with its defaults
(int8 weights per tensor, uint8 activations quantized at run time: MatMul becomes MatMulInteger/
DynamicQuantizeMatMul, the fused Attention QAttention), in the same session settings. Each engine ends
with a line `result ENGINE TEXTS_PER_SECOND` that scripts/bench-minilm.sh collects.
"""
import argparse
import json
import os
import pathlib
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from minilm_reference import MODEL_DIR, load_safetensors  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("texts")
parser.add_argument("--repeats", type=int, default=3)
parser.add_argument("--threads", type=int, default=2)
parser.add_argument("--batch", type=int, default=64)
parser.add_argument("--compare")
parser.add_argument("--engines", default="onnxruntime,openvino")
args = parser.parse_args()

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

cache = pathlib.Path(os.environ.get("SLUICE_CACHE_DIR", pathlib.Path.home() / ".cache/sluice")) / "bench"
cache.mkdir(parents=True, exist_ok=True)
plain_path, fused_path = cache / "minilm-v2.onnx", cache / "minilm-v2-fused.onnx"
quantized_path = cache / "minilm-v2-fused-int8.onnx"


def build_graph():
    w = {k: v.astype(np.float32) for k, v in load_safetensors(MODEL_DIR / "model.safetensors").items()}
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, inputs, name, **attrs):
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    h, heads = 384, 12
    d = h // heads
    words = node("Gather", [const("word", w["embeddings.word_embeddings.weight"]), "input_ids"], "words")
    positions = node("Gather", [const("pos", w["embeddings.position_embeddings.weight"]), "position_ids"], "positions")
    x = node("Add", [words, positions], "emb0")
    x = node("Add", [x, const("type0", w["embeddings.token_type_embeddings.weight"][0])], "emb1")
    x = node("LayerNormalization", [x, const("eln_w", w["embeddings.LayerNorm.weight"]),
                                     const("eln_b", w["embeddings.LayerNorm.bias"])], "emb", epsilon=1e-12, axis=-1)
    # The additive mask as BertModel's export computes it (the shape onnxruntime's Attention fusion matches).
    mask3 = node("Unsqueeze", ["attention_mask", const("axis1", np.array([1], dtype=np.int64))], "mask3")
    mask4 = node("Unsqueeze", [mask3, const("axis2", np.array([2], dtype=np.int64))], "mask4")
    maskf = node("Cast", [mask4], "maskf", to=TensorProto.FLOAT)
    inverted = node("Sub", [const("one", np.float32(1)), maskf], "inv")
    additive = node("Mul", [inverted, const("neg", np.float32(-10000))], "madd")
    shape_heads = const("shape_heads", np.array([0, 0, heads, d], dtype=np.int64))
    shape_hidden = const("shape_hidden", np.array([0, 0, h], dtype=np.int64))
    for i in range(6):
        p = f"encoder.layer.{i}."

        def dense(t, name, tag):
            m = node("MatMul", [t, const(f"{tag}_w{i}", w[p + name + ".weight"].T.copy())], f"{tag}_mm{i}")
            return node("Add", [m, const(f"{tag}_b{i}", w[p + name + ".bias"])], f"{tag}{i}")

        def heads_of(t, tag, perm):
            r = node("Reshape", [t, shape_heads], f"{tag}_r{i}")
            return node("Transpose", [r], f"{tag}_t{i}", perm=perm)

        q = heads_of(dense(x, "attention.self.query", "q"), "q", [0, 2, 1, 3])
        k = heads_of(dense(x, "attention.self.key", "k"), "k", [0, 2, 3, 1])
        v = heads_of(dense(x, "attention.self.value", "v"), "v", [0, 2, 1, 3])
        s = node("MatMul", [q, k], f"s{i}")
        s = node("Div", [s, const(f"sqrtd{i}", np.float32(np.sqrt(d)))], f"sd{i}")
        s = node("Add", [s, additive], f"sm{i}")
        probs = node("Softmax", [s], f"p{i}", axis=-1)
        c = node("MatMul", [probs, v], f"c{i}")
        c = node("Transpose", [c], f"ct{i}", perm=[0, 2, 1, 3])
        c = node("Reshape", [c, shape_hidden], f"cr{i}")
        a = dense(c, "attention.output.dense", "ao")
        x = node("Add", [x, a], f"res1_{i}")
        x = node("LayerNormalization", [x, const(f"aln_w{i}", w[p + "attention.output.LayerNorm.weight"]),
                                         const(f"aln_b{i}", w[p + "attention.output.LayerNorm.bias"])],
                 f"aln{i}", epsilon=1e-12, axis=-1)
        f = dense(x, "intermediate.dense", "f1")
        g = node("Div", [f, const(f"sqrt2_{i}", np.float32(np.sqrt(2)))], f"gd{i}")
        g = node("Erf", [g], f"ge{i}")
        g = node("Add", [g, const(f"one_{i}", np.float32(1))], f"ga{i}")
        g = node("Mul", [f, g], f"gm{i}")
        g = node("Mul", [g, const(f"half_{i}", np.float32(0.5))], f"gh{i}")
        o = dense(g, "output.dense", "f2")
        x = node("Add", [x, o], f"res2_{i}")
        x = node("LayerNormalization", [x, const(f"oln_w{i}", w[p + "output.LayerNorm.weight"]),
                                         const(f"oln_b{i}", w[p + "output.LayerNorm.bias"])],
                 f"oln{i}", epsilon=1e-12, axis=-1)
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
              for n in ("input_ids", "attention_mask", "position_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", h])
    graph = helper.make_graph(nodes, "all-MiniLM-L6-v2", inputs, [output], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what onnxruntime releases load
    onnx.save(model, plain_path)


def onnxruntime_session(quantized=False):
    import onnxruntime as ort
    path = plain_path
    try:
        from onnxruntime.transformers import optimizer
        if not fused_path.exists():
            optimized = optimizer.optimize_model(
                str(plain_path), model_type="bert", num_heads=12, hidden_size=384, opt_level=0)
            print(f"onnxruntime fusions: {optimized.get_fused_operator_statistics()}", file=sys.stderr)
            optimized.save_model_to_file(str(fused_path))
        path = fused_path
    except Exception as error:  # the fusion is an optimization; the plain graph is still the same model
        print(f"onnxruntime BERT fusion unavailable ({error}); using the plain graph", file=sys.stderr)
    graph = "fused" if path == fused_path else "plain"
    if quantized:
        from onnxruntime.quantization import QuantType, quantize_dynamic
        if not quantized_path.exists():
            # The fused operators (com.microsoft) defeat ONNX shape inference; their tensors are float.
            quantize_dynamic(str(path), str(quantized_path), weight_type=QuantType.QInt8,
                             extra_options={"DefaultTensorType": TensorProto.FLOAT})
        path = quantized_path
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    used = {i.name for i in session.get_inputs()}
    precision = "quantize_dynamic int8" if quantized else "fp32"
    name = f"onnxruntime {ort.__version__} ({graph} graph, {precision})"
    return name, lambda feeds: session.run(None, {k: v for k, v in feeds.items() if k in used})[0]


def openvino_session():
    import openvino as ov
    core = ov.Core()
    model = core.read_model(str(plain_path))
    compiled = core.compile_model(model, "CPU", {
        "INFERENCE_NUM_THREADS": args.threads,
        "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": "f32",
    })
    request = compiled.create_infer_request()
    used = {i.get_any_name() for i in compiled.inputs}
    precision = compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
    name = f"openvino {ov.__version__.split('-')[0]} (ONNX graph, {precision}, latency hint)"

    def run(feeds):
        request.infer({k: v for k, v in feeds.items() if k in used})
        return request.get_output_tensor(0).data.copy()
    return name, run


if not plain_path.exists():
    build_graph()

tokenizer = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
tokenizer.enable_truncation(max_length=256)
tokenizer.no_padding()
texts = [json.loads(line)["text"] for line in open(args.texts, encoding="utf-8") if line.strip()]
lengths = [len(e.ids) for e in tokenizer.encode_batch(texts)]
tokens = sum(lengths)
h, wide, layers = 384, 1536, 6
flops = sum(layers * (2 * n * h * (4 * h + 2 * wide) + 4 * n * n * h) for n in lengths)


def embed_all(run, texts):
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = [None] * len(texts)
    for start in range(0, len(order), args.batch):
        chunk = order[start:start + args.batch]
        encodings = tokenizer.encode_batch([texts[i] for i in chunk])
        length = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(chunk), length), dtype=np.int64)
        mask = np.zeros((len(chunk), length), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, :len(e.ids)] = e.ids
            mask[row, :len(e.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask,
                 "position_ids": np.broadcast_to(np.arange(length, dtype=np.int64), ids.shape).copy()}
        hidden = run(feeds)
        pooled = (hidden * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        for i, vector in zip(chunk, pooled):
            out[i] = vector
    return out


swift = [np.array(json.loads(line)["embedding"]) for line in open(args.compare)] if args.compare else None
for engine in args.engines.split(","):
    name, run = {"onnxruntime": onnxruntime_session, "onnxruntime-int8": lambda: onnxruntime_session(True),
                 "openvino": openvino_session}[engine]()
    embed_all(run, texts[:64])  # warm-up (first shapes, allocations)
    times = []
    for rep in range(args.repeats):
        start = time.perf_counter()
        vectors = embed_all(run, texts)
        times.append(time.perf_counter() - start)
        print(f"{engine} pass {rep + 1}: {times[-1]:.2f} s", file=sys.stderr)
    median = statistics.median(times)
    print(f"{name}, {args.threads} threads: median {median:.2f} s  {len(texts) / median:.1f} texts/s  "
          f"{tokens / median:.0f} tokens/s  {flops / median / 1e9:.1f} GFLOP/s")
    print(f"result {engine} {len(texts) / median:.2f}")
    if swift:
        cosines = [float(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b)) for a, b in zip(vectors, swift)]
        print(f"cosine sluice vs {engine}: min {min(cosines):.7f}  median {statistics.median(cosines):.7f}")
