#!/usr/bin/env python3
"""A small web site on loopback for the http source's tests (stdlib only).

  web_server.py [--exit-on-stdin-eof]

Binds 127.0.0.1 on a free port, prints "PORT <n>", and stops when its parent goes away. Serves the pages the
test puts, with ETags (or Last-Modified only, or no validators), answers conditional requests with 304,
serves robots.txt when one is set (404 otherwise), and fails or redirects paths on demand. Control:
  PUT    /_standin/page?path=P&type=T&validators=etag|last-modified|none   body: the page's bytes
  DELETE /_standin/page?path=P&status=404|410    the page is gone, answered with that status
  POST   /_standin/fail?path=P&status=N          every GET of P answers N (0: serve again)
  POST   /_standin/redirect?path=P&to=Q&status=N P redirects to Q (a path or a URL) with status N
  PUT    /_standin/robots                        body: robots.txt (an empty body: none, 404)
  GET    /_standin/stats    {"get": GETs, "not_modified": 304s, "full": 200s with a body, "robots": robots.txt
                             GETs, "paths": [every GET's path, in order], "times": [their arrival, seconds],
                             "hosts": [their Host header]}
"""
import argparse, email.utils, hashlib, json, os, sys, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_child  # noqa: E402

lock = threading.Lock()
pages = {}      # path -> {"body", "type", "validators", "modified"}
gone = {}       # path -> status
failing = {}    # path -> status
redirects = {}  # path -> (status, target)
robots = {"text": None}
stats = {"get": 0, "not_modified": 0, "full": 0, "robots": 0, "paths": [], "times": [], "hosts": []}
clock = {"version": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def control(self):
        url = urllib.parse.urlsplit(self.path)
        query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
        path = query.get("path", "")
        with lock:
            if url.path == "/_standin/stats":
                return self.answer(200, json.dumps(stats).encode(), [("Content-Type", "application/json")])
            if url.path == "/_standin/page" and self.command == "PUT":
                clock["version"] += 1
                pages[path] = {"body": self.body(), "type": query.get("type", "text/html; charset=utf-8"),
                               "validators": query.get("validators", "etag"),
                               # A distinct second per version: Last-Modified tells versions apart.
                               "modified": 1_700_000_000 + clock["version"]}
                gone.pop(path, None)
                return self.answer(200)
            if url.path == "/_standin/page" and self.command == "DELETE":
                pages.pop(path, None)
                gone[path] = int(query.get("status", "404"))
                return self.answer(200)
            if url.path == "/_standin/fail":
                status = int(query.get("status", "0"))
                if status:
                    failing[path] = status
                else:
                    failing.pop(path, None)
                return self.answer(200)
            if url.path == "/_standin/redirect":
                redirects[path] = (int(query.get("status", "301")), query["to"])
                return self.answer(200)
            if url.path == "/_standin/robots":
                text = self.body()
                robots["text"] = text if text else None
                return self.answer(200)
        return self.answer(404)

    def do_PUT(self):
        self.control()

    def do_DELETE(self):
        self.control()

    def do_POST(self):
        self.control()

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/_standin/"):
            return self.control()
        with lock:
            if path == "/robots.txt":
                stats["robots"] += 1
                if path in redirects:
                    status, target = redirects[path]
                    return self.answer(status, b"", [("Location", target)])
                text = robots["text"]
                if text is None:
                    return self.answer(404, b"no robots.txt")
                return self.answer(200, text, [("Content-Type", "text/plain")])
            stats["get"] += 1
            stats["paths"].append(self.path)
            stats["times"].append(time.monotonic())
            stats["hosts"].append(self.headers.get("Host", ""))
            if path in failing:
                return self.answer(failing[path], b"injected failure")
            if path in redirects:
                status, target = redirects[path]
                return self.answer(status, b"", [("Location", target)])
            if path in gone:
                return self.answer(gone[path], b"gone")
            page = pages.get(path)
            if page is None:
                return self.answer(404, b"not found")
            etag = '"' + hashlib.md5(page["body"]).hexdigest() + '"'
            modified = email.utils.formatdate(page["modified"], usegmt=True)
            headers = [("Content-Type", page["type"])]
            if page["validators"] == "etag":
                headers.append(("ETag", etag))
                if self.headers.get("If-None-Match") == etag:
                    stats["not_modified"] += 1
                    return self.answer(304, b"", headers)
            if page["validators"] in ("etag", "last-modified"):
                headers.append(("Last-Modified", modified))
                since = self.headers.get("If-Modified-Since")
                if page["validators"] == "last-modified" and since:
                    when = email.utils.parsedate_to_datetime(since).timestamp()
                    if when >= page["modified"]:
                        stats["not_modified"] += 1
                        return self.answer(304, b"", headers)
            stats["full"] += 1
            return self.answer(200, page["body"], headers)


def main():
    parser = argparse.ArgumentParser(description="a small web site on loopback")
    server_child.add_lifeline_option(parser)
    parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    server.shutdown()


if __name__ == "__main__":
    main()
