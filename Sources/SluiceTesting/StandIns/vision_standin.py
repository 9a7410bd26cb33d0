#!/usr/bin/env python3
"""A vision chat-completions stand-in for tests (loopback only, stdlib): OpenAI's `POST …/chat/completions`
with an image in the user message, as OpenAI, Azure OpenAI, Ollama and vLLM take it, answering with a caption
made by a known rule so that a test can search for it.

  POST <any prefix>/chat/completions   {model, messages: [{role: user, content: [{type: text, text},
                                        {type: image_url, image_url: {url: "data:<mime>;base64,…", detail}}]}],
                                        max_tokens, …} -> {id, object: chat.completion, model, choices:
                                        [{index, message: {role: assistant, content}, finish_reason}], usage}
and, for tests:
  GET  /stats     counters as JSON (and the last request's image: format, bytes, width, height, detail;
                  `sizes`: how many images of each "WIDTHxHEIGHT" were captioned)
  POST /control   JSON to change faults at run time (same names as the options below)

The caption: --caption's text, then "(<format> image, <width>x<height> pixels)" read from the image itself.

What the real API checks, checked (each failure answers as OpenAI does, `{"error": {message, type, code}}`):
  - the body is JSON with `messages`, whose last user message holds exactly one `image_url` part and a text
    part; `max_tokens` a positive integer; `detail` one of low, high, auto (absent: auto);
  - the URL is a `data:` URL with `;base64,`; its bytes decode; their magic bytes are a format OpenAI takes
    (PNG, JPEG, GIF, WebP: a TIFF or BMP answers 400 invalid_image_format) and match the declared MIME type;
  --max-image-bytes N   a decoded image over N bytes: 400 "Image too large …" (code image_too_large)
  --require-model       400 when `model` is missing
  --api-key KEY         `Authorization: Bearer KEY` (or Azure's `api-key: KEY`) required; a wrong one answers
                        401 with a message that echoes the key it got (as OpenAI does, partly), so that a test
                        sees the client scrub it; a key found anywhere in the body is counted (key_in_body)
Faults (options or /control):
  delay_ms                every answer waits this long first
  fail_count, fail_status the next fail_count requests answer fail_status (503 by default)
  rate_limit_count, retry_after
                          the next rate_limit_count requests answer 429 with Retry-After: retry_after (seconds)
Prints "PORT <n>" once listening on 127.0.0.1.
"""
import argparse, base64, binascii, json, os, struct, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}


def sniff(data):
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data[:4] in (b"II*\x00", b"MM\x00*"):
        return "tiff"
    if data[:2] == b"BM":
        return "bmp"
    return None


def dimensions(kind, data):
    try:
        if kind == "png":
            return struct.unpack(">II", data[16:24])
        if kind == "gif":
            return struct.unpack("<HH", data[6:10])
        if kind == "jpeg":
            i = 2
            while i + 9 < len(data):
                if data[i] != 0xFF:
                    i += 1
                    continue
                marker = data[i + 1]
                length = struct.unpack(">H", data[i + 2:i + 4])[0]
                if marker in (0xC0, 0xC1, 0xC2):
                    height, width = struct.unpack(">HH", data[i + 5:i + 9])
                    return width, height
                i += 2 + length
    except struct.error:
        pass
    return 0, 0


class State:
    def __init__(self, args):
        self.lock = threading.Lock()
        self.args = args
        self.faults = {"delay_ms": args.delay_ms, "fail_count": 0, "fail_status": 503,
                       "rate_limit_count": 0, "retry_after": "1"}
        self.counters = {"requests": 0, "ok": 0, "rate_limited": 0, "server_errors": 0, "too_large": 0,
                         "unauthorized": 0, "invalid": 0, "key_in_body": 0, "last_image": None,
                         "details": {}, "formats": {}, "sizes": {}}


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

    def error(self, status, message, code, kind="invalid_request_error", counter="invalid", headers=()):
        with self.state.lock:
            self.state.counters[counter] += 1
        return self.send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": code}},
                              headers)

    def do_GET(self):
        if urlparse(self.path).path == "/stats":
            with self.state.lock:
                payload = json.loads(json.dumps(self.state.counters))
            return self.send_json(200, payload)
        self.send_json(404, {"error": {"message": "not found"}})

    def do_POST(self):
        path = urlparse(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path == "/control":
            changes = json.loads(raw or b"{}")
            with self.state.lock:
                for key, value in changes.items():
                    self.state.faults[key] = value
            return self.send_json(200, {"ok": True})
        if not path.endswith("/chat/completions"):
            return self.send_json(404, {"error": {"message": "not found"}})
        with self.state.lock:
            self.state.counters["requests"] += 1
        self.complete(raw)

    def complete(self, raw):
        st = self.state
        args = st.args
        if args.api_key:
            if args.api_key.encode() in raw:
                with st.lock:
                    st.counters["key_in_body"] += 1
            bearer = self.headers.get("Authorization") or ""
            given = bearer[len("Bearer "):] if bearer.startswith("Bearer ") else (self.headers.get("api-key") or "")
            if given != args.api_key:
                return self.error(401, "Incorrect API key provided: %s. You can find your API key at "
                                  "https://platform.openai.com/account/api-keys." % given, "invalid_api_key",
                                  counter="unauthorized")
        with st.lock:
            faults = dict(st.faults)
            rate_limited = faults["rate_limit_count"] > 0
            if rate_limited:
                st.faults["rate_limit_count"] -= 1
            failing = not rate_limited and faults["fail_count"] > 0
            if failing:
                st.faults["fail_count"] -= 1
        if faults["delay_ms"]:
            time.sleep(faults["delay_ms"] / 1000.0)
        if rate_limited:
            return self.error(429, "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. "
                              "Please try again in 1s.", "rate_limit_exceeded", "requests", "rate_limited",
                              [("Retry-After", faults["retry_after"])])
        if failing:
            return self.error(int(faults["fail_status"]), "The server had an error while processing your request.",
                              None, "server_error", "server_errors")
        try:
            request = json.loads(raw)
        except ValueError:
            return self.error(400, "We could not parse the JSON body of your request.", None)
        if args.require_model and not isinstance(request.get("model"), str):
            return self.error(400, "you must provide a model parameter", None)
        max_tokens = request.get("max_tokens")
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            return self.error(400, "Invalid 'max_tokens': must be a positive integer.", "invalid_value")
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            return self.error(400, "'messages' must be a non-empty array.", "invalid_value")
        user = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        content = user[-1].get("content") if user else None
        if not isinstance(content, list):
            return self.error(400, "the user message holds no image_url part", "invalid_value")
        images = [p for p in content if isinstance(p, dict) and p.get("type") == "image_url"]
        texts = [p for p in content if isinstance(p, dict) and p.get("type") == "text" and p.get("text")]
        if len(images) != 1 or not texts:
            return self.error(400, "expected one image_url part and a text part, got %d images" % len(images),
                              "invalid_value")
        image_url = images[0].get("image_url") or {}
        detail = image_url.get("detail", "auto")
        if detail not in ("low", "high", "auto"):
            return self.error(400, "Invalid value: '%s'. Supported values are: 'low', 'high', and 'auto'." % detail,
                              "invalid_value")
        url = image_url.get("url") or ""
        if not url.startswith("data:") or ";base64," not in url:
            return self.error(400, "Invalid image URL: expected a base64 data URL.", "invalid_image_url")
        mime, encoded = url[len("data:"):].split(";base64,", 1)
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return self.error(400, "Invalid base64 image data.", "invalid_image")
        if args.max_image_bytes and len(data) > args.max_image_bytes:
            return self.error(400, "Image too large: %d bytes, the maximum size is %d bytes."
                              % (len(data), args.max_image_bytes), "image_too_large", counter="too_large")
        kind = sniff(data)
        if kind not in FORMATS:
            return self.error(400, "You uploaded an unsupported image. Please make sure your image has of one the "
                              "following formats: ['png', 'jpeg', 'gif', 'webp'].", "invalid_image_format")
        if FORMATS[kind] != mime:
            return self.error(400, "The image's data is %s, not the declared %s." % (kind, mime), "invalid_image")
        width, height = dimensions(kind, data)
        with st.lock:
            c = st.counters
            c["ok"] += 1
            c["details"][detail] = c["details"].get(detail, 0) + 1
            c["formats"][kind] = c["formats"].get(kind, 0) + 1
            size = "%dx%d" % (width, height)
            c["sizes"][size] = c["sizes"].get(size, 0) + 1
            c["last_image"] = {"format": kind, "mime": mime, "bytes": len(data), "width": width, "height": height,
                               "detail": detail, "model": request.get("model"), "prompt": texts[0]["text"]}
        caption = "%s (%s image, %dx%d pixels)" % (args.caption, kind, width, height)
        return self.send_json(200, {
            "id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()),
            "model": request.get("model") or "standin-vision",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": caption}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 85, "completion_tokens": len(caption.split()),
                      "total_tokens": 85 + len(caption.split())}})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    parser.add_argument("--max-image-bytes", type=int, default=20 * 1024 * 1024)
    parser.add_argument("--require-model", action="store_true")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--delay-ms", type=int, default=0)
    parser.add_argument("--caption", default="A wide sandy beach under a clear blue sky, with gentle waves")
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
