#!/usr/bin/env python3
"""A loopback HTTP proxy that injects transient faults into a real server's write requests (stdlib only).

  fault_proxy.py --target http://127.0.0.1:PORT --fault-every N [--writes upsert,delete,add]

Forwards every request to the target. Every Nth write (a POST whose path ends in one of --writes) fails
the way store_standin.py describes: 503 or 429 before forwarding, or 500 after forwarding (a lost
acknowledgement). Prints "PORT <n>"; `GET /_standin/stats` returns its statistics.
"""
import argparse, os, sys, urllib.error, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from store_standin import JSONHandler, Rejected, Store, lifeline, serve  # noqa: E402

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "accept-encoding"}


class Handler(JSONHandler):
    def dispatch(self):
        store = self.store
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        last = self.path.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        fault = store.fault() if self.command == "POST" and last in store.options.writes.split(",") else None
        if fault == "before-503":
            raise Rejected(503, "injected: service unavailable")
        if fault == "before-429":
            self.send_json(429, {"error": "injected: too many requests"}, [("Retry-After", "0")])
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
        request = urllib.request.Request(store.options.target + self.path, data=body, method=self.command, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                status, payload, content_type = answer.status, answer.read(), answer.headers.get("Content-Type", "application/json")
        except urllib.error.HTTPError as error:
            status, payload, content_type = error.code, error.read(), error.headers.get("Content-Type", "application/json")
        if fault == "after-500":
            raise Rejected(500, "injected: internal error after forwarding")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


if __name__ == "__main__":
    lifeline()
    parser = argparse.ArgumentParser(description="fault-injecting proxy")
    parser.add_argument("--target", required=True)
    parser.add_argument("--fault-every", type=int, default=0)
    parser.add_argument("--writes", default="upsert,delete,add")
    options = parser.parse_args()
    serve(Handler, Store(options))
