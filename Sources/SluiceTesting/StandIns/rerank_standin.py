#!/usr/bin/env python3
"""A rerank stand-in for tests (loopback only, stdlib): the two shapes of `/rerank` that serving stacks expose,
scoring by a known rule so that a test can say which order is right.

  POST /rerank                    Hugging Face TEI: {query, texts, truncate, raw_scores} -> [{index, score}]
                                  (sorted by score, best first, as TEI answers)
  POST /v1/rerank, /v2/rerank     Cohere's shape (Jina, vLLM): {model, query, documents, top_n}
                                  -> {id, results: [{index, relevance_score}], meta}
and, for tests:
  GET  /stats     counters as JSON
  POST /control   JSON to change faults at run time (same names as the options below)

The rule: a document's score is the number of distinct query words it contains (words: lower-cased runs of
letters and digits).

The real APIs' limits and errors, enforced:
  --max-documents N       TEI: 413 {"error": "batch size B > maximum allowed batch size N", "error_type":
                          "Validation"} (its --max-client-batch-size, default 32); Cohere's shape: 400
                          {"message": "too many documents …"}
  --max-document-chars N  a document longer than N characters: TEI with truncate=false answers 413 ("Input
                          validation error: `inputs` must have less than … tokens"), with truncate=true it is cut;
                          Cohere's shape answers 400 (vLLM's "This model's maximum context length is …")
  empty documents list    TEI 413 "`texts` cannot be empty"; Cohere's shape 400
  --require-model         Cohere's shape: 400 when `model` is missing (Cohere and Jina require it)
  --api-key KEY           Authorization: Bearer KEY required; a wrong one answers 401 with a message that echoes
                          the token it got (as some servers do), so that a test sees the client scrub it
Faults (options or /control):
  delay_ms                every answer waits this long first (a slow server: the caller's deadline)
  fail_count, fail_status the next fail_count requests answer fail_status (503 by default)
  rate_limit_count, retry_after
                          the next rate_limit_count requests answer 429 with Retry-After: retry_after (seconds)
Prints "PORT <n>" once listening on 127.0.0.1.
"""
import argparse, json, os, re, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text):
    return set(m.group(0).lower() for m in WORD.finditer(text))


def score(query, document):
    return float(len(words(query) & words(document)))


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.args = args
        self.faults = {"delay_ms": args.delay_ms, "fail_count": 0, "fail_status": 503,
                       "rate_limit_count": 0, "retry_after": "1"}
        self.counters = {"requests": 0, "ok": 0, "rate_limited": 0, "server_errors": 0, "too_large": 0,
                         "unauthorized": 0, "invalid": 0, "documents": 0, "max_documents_seen": 0,
                         "max_document_chars_seen": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    @property
    def state(self):
        return self.server.state

    def send_json(self, status, payload, headers=()):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, str(value))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def count(self, name, amount=1):
        with self.state.lock:
            self.state.counters[name] += amount

    def do_GET(self):
        if urlparse(self.path).path == "/stats":
            with self.state.lock:
                payload = dict(self.state.counters)
            return self.send_json(200, payload)
        self.send_json(404, {"error": "not found"})

    def do_POST(self):
        path = urlparse(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path == "/control":
            changes = json.loads(raw or b"{}")
            with self.state.lock:
                for key, value in changes.items():
                    if key == "reset_counters":
                        for name in self.state.counters:
                            self.state.counters[name] = 0
                    else:
                        self.state.faults[key] = value
            return self.send_json(200, {"ok": True})
        if path == "/rerank":
            shape = "tei"
        elif path in ("/v1/rerank", "/v2/rerank"):
            shape = "cohere"
        else:
            return self.send_json(404, {"error": "not found"})
        self.count("requests")
        self.rerank(shape, raw)

    def error(self, shape, status, message, error_type="Validation"):
        if shape == "tei":
            return self.send_json(status, {"error": message, "error_type": error_type})
        return self.send_json(status, {"message": message})

    def rerank(self, shape, raw):
        st = self.state
        args = st.args
        key = args.api_key
        if key and self.headers.get("Authorization") != "Bearer " + key:
            self.count("unauthorized")
            got = (self.headers.get("Authorization") or "").replace("Bearer ", "")
            return self.error(shape, 401, "invalid api token: %s" % got, "Unhealthy")
        with st.lock:
            faults = dict(st.faults)
            rate_limited = faults["rate_limit_count"] > 0
            if rate_limited:
                st.faults["rate_limit_count"] -= 1
                st.counters["rate_limited"] += 1
            failing = not rate_limited and faults["fail_count"] > 0
            if failing:
                st.faults["fail_count"] -= 1
                st.counters["server_errors"] += 1
        if faults["delay_ms"]:
            time.sleep(faults["delay_ms"] / 1000.0)
        if rate_limited:
            if shape == "tei":
                return self.send_json(429, {"error": "Model is overloaded", "error_type": "overloaded"},
                                      [("Retry-After", faults["retry_after"])])
            return self.send_json(429, {"message": "You are making requests too quickly."},
                                  [("Retry-After", faults["retry_after"])])
        if failing:
            return self.error(shape, int(faults["fail_status"]), "the backend failed", "backend")
        try:
            request = json.loads(raw)
        except ValueError:
            self.count("invalid")
            return self.error(shape, 422 if shape == "tei" else 400, "invalid JSON body", "tokenizer")
        query = request.get("query")
        documents = request.get("texts" if shape == "tei" else "documents")
        if not isinstance(query, str) or not isinstance(documents, list) or \
                not all(isinstance(d, str) for d in documents):
            self.count("invalid")
            field = "texts" if shape == "tei" else "documents"
            return self.error(shape, 422 if shape == "tei" else 400,
                              "`query` must be a string and `%s` a list of strings" % field)
        if shape == "cohere":
            if args.require_model and not isinstance(request.get("model"), str):
                self.count("invalid")
                return self.error(shape, 400, "invalid request: model is required")
            top_n = request.get("top_n")
            if top_n is not None and (not isinstance(top_n, int) or top_n < 1):
                self.count("invalid")
                return self.error(shape, 400, "invalid request: top_n must be a positive integer")
        if not documents:
            self.count("invalid")
            if shape == "tei":
                return self.error(shape, 413, "`texts` cannot be empty")
            return self.error(shape, 400, "invalid request: list of documents must not be empty")
        if len(documents) > args.max_documents:
            self.count("too_large")
            if shape == "tei":
                return self.error(shape, 413, "batch size %d > maximum allowed batch size %d"
                                  % (len(documents), args.max_documents))
            return self.error(shape, 400, "too many documents: %d, the maximum is %d"
                              % (len(documents), args.max_documents))
        longest = max(len(d) for d in documents)
        with st.lock:
            st.counters["max_documents_seen"] = max(st.counters["max_documents_seen"], len(documents))
            st.counters["max_document_chars_seen"] = max(st.counters["max_document_chars_seen"], longest)
        if args.max_document_chars and longest > args.max_document_chars:
            if shape == "tei" and request.get("truncate") is True:
                documents = [d[:args.max_document_chars] for d in documents]
            else:
                self.count("too_large")
                if shape == "tei":
                    return self.error(shape, 413, "Input validation error: `inputs` must have less than %d tokens. "
                                      "Given: %d" % (args.max_document_chars, longest))
                return self.error(shape, 400, "This model's maximum context length is %d tokens. However, you "
                                  "requested %d tokens in the input for rerank." % (args.max_document_chars, longest))
        scored = [(index, score(query, d)) for index, d in enumerate(documents)]
        with st.lock:
            st.counters["ok"] += 1
            st.counters["documents"] += len(documents)
        if shape == "tei":
            ranked = sorted(scored, key=lambda pair: -pair[1])
            return self.send_json(200, [{"index": i, "score": s} for i, s in ranked])
        ranked = sorted(scored, key=lambda pair: -pair[1])
        top_n = request.get("top_n") or len(ranked)
        return self.send_json(200, {"id": "standin", "results": [{"index": i, "relevance_score": s}
                                                                   for i, s in ranked[:top_n]],
                                    "meta": {"billed_units": {"search_units": 1}}})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    parser.add_argument("--max-documents", type=int, default=1000)
    parser.add_argument("--max-document-chars", type=int, default=0)
    parser.add_argument("--require-model", action="store_true")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--delay-ms", type=int, default=0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.state = State(args)
    print("PORT %d" % server.server_address[1], flush=True)
    if args.exit_on_stdin_eof:
        def watch():
            sys.stdin.buffer.read()
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
