#!/usr/bin/env python3
"""The reference side of `sluice-bench latency`: the whole job a user of the OpenAI cookbook's parallel
processor does to embed a folder of text files, timed from start to end in one process.

    cookbook_embed_reference.py --corpus DIR --url URL --work DIR [--max-tokens 256] [--overlap 32]
        [--batch 64] [--model M] [--dimensions 64] [--encoding cl100k_base] [--session shared|per-request]

1. Reads every regular file under DIR (sorted, UTF-8, invalid bytes replaced).
2. Chunks each with tiktoken into windows of --max-tokens tokens, consecutive windows sharing --overlap
   tokens (the token budget of Sluice's recursive chunker), decoded back to text.
3. Writes the request file: one embeddings request of --batch chunks per line (batched across files, as
   Sluice batches across documents), with metadata naming each chunk's file and index.
4. Runs the processor (PyPI `parareq` 0.1.0, a packaged copy of the cookbook's
   `api_request_parallel_processor.py`) on it against URL, with request and token limits that never bind,
   saving the results file.
Prints one JSON object: seconds (wall), cpu_seconds (this process), files, chunks, tokens, requests,
succeeded, failed.

What the harness changes in parareq, and why (nothing of its request loop, pacing or retries):
- parareq imports `OPENAI_API_KEY` from `synthgpt.secret`, its author's own module, which is on no index:
  an empty stand-in module is put on the path (the key is passed explicitly).
- `api_endpoint_from_url` accepts only `https://` URLs (as in the cookbook); the stand-in is plain HTTP on
  loopback, so the endpoint is read from the URL's path instead.
- parareq opens a new `aiohttp.ClientSession` (a new connection) per request, as the cookbook did in 2023;
  the cookbook today shares one session. `--session shared` (the default) gives parareq's requests one
  shared session, as the cookbook now does; `--session per-request` runs parareq as published.
- tiktoken's encodings are built from the rank files in $SLUICE_CACHE_DIR/tiktoken (nothing is downloaded).
"""
import argparse
import json
import logging
import os
import resource
import sys
import time
import types


def install_shims(session_mode):
    secret = types.ModuleType("synthgpt.secret")
    secret.OPENAI_API_KEY = None
    sys.modules.setdefault("synthgpt", types.ModuleType("synthgpt"))
    sys.modules["synthgpt.secret"] = secret

    import aiohttp
    import parareq.parareq as processor

    processor.api_endpoint_from_url = lambda url: url.split("/v1/", 1)[1].split("?", 1)[0]
    if session_mode == "shared":
        shared = {}

        class SharedSession:
            """What `aiohttp.ClientSession()` gives parareq's requests: one session for all of them."""

            async def __aenter__(self):
                if "session" not in shared:
                    shared["session"] = aiohttp.ClientSession()
                return shared["session"]

            async def __aexit__(self, *exc):
                return False

        processor.aiohttp = types.SimpleNamespace(ClientSession=SharedSession)
        run_loop = processor.APIRequestProcessor._process_api_requests_from_file

        async def run_then_close(self, *args):
            try:
                await run_loop(self, *args)
            finally:
                if "session" in shared:
                    await shared.pop("session").close()

        processor.APIRequestProcessor._process_api_requests_from_file = run_then_close
    return processor


def read_files(corpus):
    paths = []
    for root, dirs, files in os.walk(corpus):
        dirs.sort()
        paths += [os.path.join(root, name) for name in files]
    texts = []
    for path in sorted(paths):
        with open(path, "rb") as f:
            texts.append((os.path.relpath(path, corpus), f.read().decode("utf-8", errors="replace")))
    return texts


def chunk(enc, text, max_tokens, overlap):
    tokens = enc.encode_ordinary(text)
    step = max_tokens - overlap
    chunks = []
    start = 0
    while start < len(tokens):
        chunks.append(enc.decode(tokens[start:start + max_tokens]))
        if start + max_tokens >= len(tokens):
            break
        start += step
    return chunks


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", required=True)
    p.add_argument("--url", required=True, help="the embeddings endpoint, e.g. http://127.0.0.1:PORT/v1/embeddings")
    p.add_argument("--work", required=True, help="a new folder for the request and results files")
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--overlap", type=int, default=32)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--model", default="text-embedding-3-small")
    p.add_argument("--dimensions", type=int, default=64)
    p.add_argument("--encoding", default="cl100k_base")
    p.add_argument("--session", choices=["shared", "per-request"], default="shared")
    args = p.parse_args()

    start = time.perf_counter()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from tiktoken_bench import encoding  # the rank files Sluice reads; registers them with tiktoken

    processor = install_shims(args.session)
    import tiktoken.registry

    enc = encoding(args.encoding)
    tiktoken.registry.ENCODINGS[args.encoding] = enc  # what tiktoken.get_encoding returns from now on

    os.makedirs(args.work, exist_ok=True)
    requests_path = os.path.join(args.work, "requests.jsonl")
    results_path = os.path.join(args.work, "results.jsonl")
    files = read_files(args.corpus)
    chunks = 0
    requests = 0
    with open(requests_path, "w") as out:
        pending = []  # (file, chunk index, text), batched across files as Sluice batches across documents

        def flush():
            nonlocal requests
            out.write(json.dumps({"model": args.model, "input": [text for _, _, text in pending],
                                  "dimensions": args.dimensions,
                                  "metadata": {"chunks": [[name, index] for name, index, _ in pending]}}) + "\n")
            requests += 1
            pending.clear()

        for name, text in files:
            for index, piece in enumerate(chunk(enc, text, args.max_tokens, args.overlap)):
                pending.append((name, index, piece))
                chunks += 1
                if len(pending) == args.batch:
                    flush()
        if pending:
            flush()

    processor.APIRequestProcessor(
        requests_filepath=requests_path,
        save_filepath=results_path,
        request_url=args.url,
        api_key="sk-standin",
        max_requests_per_minute=1e12,
        max_tokens_per_minute=1e15,
        token_encoding_name=args.encoding,
        max_attempts=5,
        logging_level=logging.WARNING,
    ).run()
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)

    succeeded = failed = tokens = 0
    with open(results_path) as f:
        for line in f:
            entry = json.loads(line)
            answer = entry[1]
            if isinstance(answer, dict) and "data" in answer:
                succeeded += 1
                tokens += answer.get("usage", {}).get("prompt_tokens", 0)
            else:
                failed += 1
    print(json.dumps({"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime, "files": len(files),
                      "chunks": chunks, "tokens": tokens, "requests": requests, "succeeded": succeeded,
                      "failed": failed, "session": args.session}))


if __name__ == "__main__":
    main()
