#!/usr/bin/env python3
"""Loopback HTTP/1.1 server for the HTTP client's tests (stdlib only).

Binds 127.0.0.1 on a free port and prints "PORT <n>" on stdout. Paths:
  /echo           JSON: method, path, headers, body length and sha256, the client's port (keep-alive check)
  /status/<n>     that status, with header X-Test: yes (and ?retry_after=V: a Retry-After: V header)
  /compressed     a large text body gzip-encoded when the client accepts gzip
  /slow?ms=<n>    answers after n milliseconds
  /barrier?key=<k>&n=<n>&timeout=<s>
                  answers 200 once n requests with that key are waiting at the same time, 504 if that
                  does not happen within s seconds (default 60): proves concurrency without timing it
  /reset          closes the connection without an answer (RST)
  /big?bytes=<n>  n bytes of 'a'
"""
import argparse, gzip, hashlib, json, os, socket, struct, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs


barrier_lock = threading.Condition()
barrier_waiting = {}


def barrier(key, n, timeout):
    """True once n callers with `key` are here at the same time (each caller counts once)."""
    with barrier_lock:
        barrier_waiting[key] = barrier_waiting.get(key, 0) + 1
        barrier_lock.notify_all()
        return barrier_lock.wait_for(lambda: barrier_waiting[key] >= n, timeout=timeout)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _handle(self):
        url = urlparse(self.path)
        query = parse_qs(url.query)
        body = self._body()
        if url.path == "/echo":
            payload = {
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body_length": len(body),
                "body_sha256": hashlib.sha256(body).hexdigest(),
                "client_port": self.client_address[1],
            }
            self._send(200, json.dumps(payload).encode(), [("Content-Type", "application/json")])
        elif url.path.startswith("/status/"):
            headers = [("X-Test", "yes"), ("X-Multi", "a"), ("X-Multi", "b")]
            headers += [("Retry-After", value) for value in parse_qs(url.query).get("retry_after", [])]
            self._send(int(url.path.split("/")[2]), b"status body", headers)
        elif url.path == "/compressed":
            text = ("compressible line of text\n" * 4000).encode()
            if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                self._send(200, gzip.compress(text), [("Content-Encoding", "gzip"), ("X-Raw-Length", str(len(text)))])
            else:
                self._send(200, text)
        elif url.path == "/slow":
            time.sleep(int(query.get("ms", ["1000"])[0]) / 1000)
            self._send(200, b"slow")
        elif url.path == "/barrier":
            reached = barrier(query.get("key", [""])[0], int(query.get("n", ["2"])[0]), float(query.get("timeout", ["60"])[0]))
            self._send(200 if reached else 504, b"together" if reached else b"not enough concurrent requests")
        elif url.path == "/reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif url.path == "/big":
            self._send(200, b"a" * int(query.get("bytes", ["1000"])[0]))
        else:
            self._send(404, b"not found")

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _handle


class Server(ThreadingHTTPServer):
    request_queue_size = 512  # the default backlog of 5 turns 40 concurrent connects into SYN retries
    daemon_threads = True


def exit_when_parent_goes():
    """With --exit-on-stdin-eof: stop when standard input closes (the test process ended, even by a crash).
    Any other argument is refused."""
    parser = argparse.ArgumentParser(description="loopback HTTP/1.1 server for the HTTP client's tests")
    parser.add_argument("--exit-on-stdin-eof", action="store_true", help="stop when standard input closes")
    if parser.parse_args().exit_on_stdin_eof:
        def watch():
            sys.stdin.buffer.read()
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()


def main():
    server = Server(("127.0.0.1", 0), Handler)
    exit_when_parent_goes()
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
