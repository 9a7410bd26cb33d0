"""Shared parts of the Qdrant and Pinecone stand-ins (stdlib only): a threaded loopback JSON server,
header checks, request statistics and fault injection.

Fault injection (`--fault-every N`): every Nth write request (upsert or delete) fails, cycling through
three kinds — 503 before applying, 429 with `Retry-After: 0` before applying, and 500 *after* applying
(an acknowledgement lost on the way: the client retries and must be idempotent).
"""
import argparse, json, math, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Rejected(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def lifeline():
    """With --exit-on-stdin-eof (StandInServer passes it): stop when standard input closes, that is when
    the test process ended, even by a crash. Takes the flag off sys.argv."""
    if "--exit-on-stdin-eof" in sys.argv:
        sys.argv.remove("--exit-on-stdin-eof")

        def watch():
            sys.stdin.buffer.read()
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()


def arguments(description):
    lifeline()
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--api-key", default=None, help="required key")
    parser.add_argument("--fault-every", type=int, default=0, help="fail every Nth write request")
    parser.add_argument("--server-version", default=None,
                        help="the version the service says it is (Qdrant's GET /; default its own)")
    parser.add_argument("--strict-mode", action="store_true",
                        help="Qdrant: every collection in strict mode, refusing filters on unindexed payload fields")
    parser.add_argument("--index-lag", type=int, default=0,
                        help="Pinecone: how many of a namespace's latest writes reads do not reflect yet")
    return parser.parse_args()


class Store:
    """State shared by the handlers, guarded by one lock."""

    def __init__(self, options):
        self.options = options
        self.lock = threading.RLock()
        self.writes = 0
        self.stats = {"requests": 0, "writes": 0, "faults": 0, "max_batch": 0, "min_batch": None, "batches": 0,
                      "max_body_bytes": 0, "rejected": 0, "invalid": 0, "control_describes": 0}

    def fault(self):
        """None, or the kind of fault this write gets: 'before-503', 'before-429', 'after-500'."""
        every = self.options.fault_every
        if not every:
            return None
        with self.lock:
            self.writes += 1
            if self.writes % every:
                return None
            self.stats["faults"] += 1
            return ["before-503", "before-429", "after-500"][(self.writes // every) % 3]

    def batch(self, count, body_bytes):
        with self.lock:
            self.stats["batches"] += 1
            self.stats["max_batch"] = max(self.stats["max_batch"], count)
            self.stats["min_batch"] = count if self.stats["min_batch"] is None else min(self.stats["min_batch"], count)
            self.stats["max_body_bytes"] = max(self.stats["max_body_bytes"], body_bytes)


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na > 0 and nb > 0 else 0.0


def score(metric, a, b):
    """Higher is better for cosine and dot; the distance for Euclidean (lower is better)."""
    if metric == "cosine":
        return cosine(a, b)
    if metric == "dot":
        return sum(x * y for x, y in zip(a, b))
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


class JSONHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    store = None  # set by serve()
    max_body = 32 << 20

    def log_message(self, *args):
        pass

    def send_json(self, status, payload, headers=()):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > self.max_body:
            self.rfile.read(length)
            raise Rejected(413, f"request body of {length} bytes is over the limit of {self.max_body}")
        raw = self.rfile.read(length) if length else b""
        self.body_bytes = len(raw)
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except ValueError as error:
            raise Rejected(400, f"body is not JSON: {error}")

    def dispatch(self):
        raise NotImplementedError

    def handle_request(self):
        self.body_bytes = 0
        with self.store.lock:
            self.store.stats["requests"] += 1
            # This request's own number: a decision by count (every Nth refused) reads this, never the
            # shared counter, which other connections move between one read and the next.
            self.sequence = self.store.stats["requests"]
        try:
            if self.path == "/_standin/stats":
                with self.store.lock:
                    self.send_json(200, dict(self.store.stats))
                return
            self.dispatch()
        except Rejected as rejection:
            with self.store.lock:
                self.store.stats["rejected"] += 1
                # Shape, size and credential errors: a correct client never causes them.
                if rejection.status in (400, 401, 403, 413):
                    self.store.stats["invalid"] += 1
            self.reject(rejection)

    def reject(self, rejection):
        self.send_json(rejection.status, {"error": rejection.message})

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_request


class Server(ThreadingHTTPServer):
    request_queue_size = 256
    daemon_threads = True


def serve(handler_class, store):
    handler_class.store = store
    server = Server(("127.0.0.1", 0), handler_class)
    print(f"PORT {server.server_address[1]}", flush=True)
    parent = os.getppid()

    def watch():
        # Exit when the test process that started us is gone.
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    server.serve_forever()
