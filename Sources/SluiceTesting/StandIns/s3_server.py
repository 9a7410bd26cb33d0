#!/usr/bin/env python3
"""A real S3 implementation on loopback: moto's server (PyPI moto[server], in the tools venv), in process,
behind a small control and fault layer.

  s3_server.py [--exit-on-stdin-eof] --bucket NAME

Serves moto's S3 API on 127.0.0.1 (a free port) with bucket NAME created, prints "PORT <n>", and stops
when its parent goes away. Besides the S3 API:
  PUT    /_standin/object/<key>?meta-NAME=V&tag-NAME=V   body: the object's bytes (written through boto3, as
         a client would), with user metadata NAME=V (x-amz-meta-NAME) and tags NAME=V
  DELETE /_standin/object/<key>   deletes the object
  GET    /_standin/stats          {"list": LIST requests, "get": GET object requests, "tagging":
                                   GetObjectTagging requests, "head": HEAD requests, "other": any other S3
                                   request, "total": every S3 request, "faults": answers injected,
                                   "get_max_in_flight": the most GET object requests answered at once since
                                   the last POST /_standin/faults}
                                   (requests signed with the stand-in's own key, "standin", are not counted:
                                   they are the control layer's and a benchmark's uploads)
  POST   /_standin/faults?fail_continued_lists=0|1&slowdown_every=N&deny=0|1&hold_gets=N&pad_gets=B&conflict_puts=N&repeat_lists=0|1
         fail_continued_lists: every ListObjectsV2 request with a continuation token (the second page and
         later) answers 500 InternalError: a listing that fails halfway. slowdown_every: every Nth S3
         request answers 503 SlowDown, as S3 throttles (0: never). deny: every S3 request answers
         403 AccessDenied, as for a key without the bucket's permissions. hold_gets: each GET object
         request waits until N of them are in flight (at most 10 s) before it is answered, so that a client's
         concurrency shows in get_max_in_flight whatever the machine's speed (0: no wait). pad_gets: every
         GET object answer carries B bytes more than the object holds (its Content-Length too), as an object
         replaced by a larger one between the listing and the download would.
         repeat_lists: every ListObjectsV2 request is answered with the first page, marked truncated, with
         the same continuation token each time: a server whose listing never ends.
         conflict_puts: the next N conditional PUTs (If-None-Match) answer 409 ConditionalRequestConflict,
         as AWS answers a conditional write that raced another write of the same key (to be retried).

A PUT with `If-None-Match: *` is enforced as AWS S3 documents it: 412 PreconditionFailed when the key
exists. moto 5.2.5 checks the header, but its check and its write are two steps that concurrent requests
interleave (two of 12 racing PUTs of one key both answered 200, seen 2026-11-29 with 2-MB bodies): here
every conditional PUT runs alone, so exactly one of racing writers wins, as on AWS.
"""
import argparse, json, os, re, sys, threading, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_child  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description="moto's S3 on loopback")
    server_child.add_lifeline_option(parser)
    parser.add_argument("--bucket", required=True)
    options = parser.parse_args()
    try:
        import boto3
        from botocore.config import Config
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server
    except ImportError as error:
        server_child.fail(f"moto[server] is not installed in the tools venv (run scripts/setup.sh): {error}")

    lock = threading.Lock()
    state = {"list": 0, "get": 0, "tagging": 0, "head": 0, "other": 0, "total": 0, "faults": 0, "requests": 0, "fail_continued_lists": False,
             "slowdown_every": 0, "deny": False, "hold_gets": 0, "pad_gets": 0, "get_in_flight": 0, "get_max_in_flight": 0,
             "conflict_puts": 0}
    conditional_puts = threading.Lock()
    gets_changed = threading.Condition(lock)
    moto = DomainDispatcherApplication(create_backend_app)
    port = server_child.free_port()
    client = boto3.client(
        "s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
        aws_access_key_id="standin", aws_secret_access_key="standin",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

    def answer(start_response, status, body, content_type="application/json", headers=()):
        data = body if isinstance(body, bytes) else body.encode()
        start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(data)))] + list(headers))
        return [data]

    def s3_error(start_response, status, code, message):
        body = f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>{message}</Message></Error>'
        return answer(start_response, status, body, "application/xml")

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
        method = environ["REQUEST_METHOD"]
        if path.startswith("/_standin/"):
            if path == "/_standin/stats":
                with lock:
                    counts = {k: state[k] for k in ("list", "get", "tagging", "head", "other", "total", "faults", "get_max_in_flight")}
                return answer(start_response, "200 OK", json.dumps(counts))
            if path == "/_standin/faults" and method == "POST":
                with lock:
                    state["fail_continued_lists"] = query.get("fail_continued_lists", ["0"])[0] == "1"
                    state["slowdown_every"] = int(query.get("slowdown_every", ["0"])[0])
                    state["deny"] = query.get("deny", ["0"])[0] == "1"
                    state["hold_gets"] = int(query.get("hold_gets", ["0"])[0])
                    state["pad_gets"] = int(query.get("pad_gets", ["0"])[0])
                    state["conflict_puts"] = int(query.get("conflict_puts", ["0"])[0])
                    state["repeat_lists"] = query.get("repeat_lists", ["0"])[0] == "1"
                    state["get_max_in_flight"] = state["get_in_flight"]
                    state["requests"] = 0
                return answer(start_response, "200 OK", "{}")
            if path.startswith("/_standin/object/"):
                key = urllib.parse.unquote(path[len("/_standin/object/"):])
                if method == "PUT":
                    length = int(environ.get("CONTENT_LENGTH") or 0)
                    body = environ["wsgi.input"].read(length) if length else b""
                    metadata = {k[5:]: v[0] for k, v in query.items() if k.startswith("meta-")}
                    tags = urllib.parse.urlencode({k[4:]: v[0] for k, v in query.items() if k.startswith("tag-")})
                    extra = {"Tagging": tags} if tags else {}
                    client.put_object(Bucket=options.bucket, Key=key, Body=body, Metadata=metadata, **extra)
                    return answer(start_response, "200 OK", "{}")
                if method == "DELETE":
                    client.delete_object(Bucket=options.bucket, Key=key)
                    return answer(start_response, "200 OK", "{}")
            return answer(start_response, "404 Not Found", "{}")
        # The S3 API, as a client sees it. Requests from the control layer's own boto3 client carry its key.
        own = "Credential=standin/" in environ.get("HTTP_AUTHORIZATION", "")
        if not own:
            is_list = method == "GET" and "list-type" in query
            is_tagging = "tagging" in urllib.parse.parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
            with lock:
                state["requests"] += 1
                state["total"] += 1
                if is_list:
                    state["list"] += 1
                elif method == "GET" and is_tagging:
                    state["tagging"] += 1
                elif method == "GET":
                    state["get"] += 1
                elif method == "HEAD":
                    state["head"] += 1
                else:
                    state["other"] += 1
                deny = state["deny"]
                every = state["slowdown_every"]
                slowdown = every > 0 and state["requests"] % every == 0
                fail = is_list and "continuation-token" in query and state["fail_continued_lists"]
                if slowdown or fail:
                    state["faults"] += 1
            if deny:
                return s3_error(start_response, "403 Forbidden", "AccessDenied", "Access Denied")
            if slowdown:
                return s3_error(start_response, "503 Slow Down", "SlowDown", "Please reduce your request rate.")
            if fail:
                return s3_error(start_response, "500 Internal Server Error", "InternalError", "injected: the listing fails here")
            if is_list and state.get("repeat_lists"):
                return repeated_list(environ, query, start_response)
            if method == "GET" and not is_list and not is_tagging:
                return held_get(environ, start_response)
            if method == "PUT" and "HTTP_IF_NONE_MATCH" in environ:
                with lock:
                    conflict = state["conflict_puts"] > 0
                    if conflict:
                        state["conflict_puts"] -= 1
                        state["faults"] += 1
                if conflict:
                    return s3_error(start_response, "409 Conflict", "ConditionalRequestConflict",
                                    "injected: a conflicting operation occurred; retry")
                with conditional_puts:
                    return [b"".join(moto(environ, start_response))]
        return moto(environ, start_response)

    def repeated_list(environ, query, start_response):
        """The first page of the listing, whatever token was asked, truncated with the same token again."""
        environ = dict(environ)
        first = {k: v for k, v in query.items() if k != "continuation-token"}
        environ["QUERY_STRING"] = urllib.parse.urlencode(first, doseq=True)
        captured = {}
        def capture(status, headers, exc_info=None):
            captured["status"], captured["headers"] = status, headers
        body = b"".join(moto(environ, capture))
        body = re.sub(rb"<NextContinuationToken>.*?</NextContinuationToken>", b"", body)
        body = re.sub(rb"<IsTruncated>\w+</IsTruncated>",
                      b"<IsTruncated>true</IsTruncated><NextContinuationToken>again</NextContinuationToken>", body)
        headers = [(k, v) for k, v in captured["headers"] if k.lower() != "content-length"]
        start_response(captured["status"], headers + [("Content-Length", str(len(body)))])
        return [body]

    def held_get(environ, start_response):
        """A GET object: counted in flight, held as `hold_gets` asks, padded as `pad_gets` asks."""
        with gets_changed:
            state["get_in_flight"] += 1
            state["get_max_in_flight"] = max(state["get_max_in_flight"], state["get_in_flight"])
            gets_changed.notify_all()
            hold, pad = state["hold_gets"], state["pad_gets"]
            if hold > 0:
                gets_changed.wait_for(lambda: state["get_in_flight"] >= hold, timeout=10)
        try:
            if pad <= 0:
                return [b"".join(moto(environ, start_response))]
            captured = {}
            def capture(status, headers, exc_info=None):
                captured["status"], captured["headers"] = status, headers
            body = b"".join(moto(environ, capture))
            headers = [(k, v) for k, v in captured["headers"] if k.lower() != "content-length"]
            if captured["status"].startswith("200"):
                body += b" " * pad
            start_response(captured["status"], headers + [("Content-Length", str(len(body)))])
            return [body]
        finally:
            with gets_changed:
                state["get_in_flight"] -= 1
                gets_changed.notify_all()

    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=MotoRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client.create_bucket(Bucket=options.bucket)
    print(f"PORT {port}", flush=True)
    # Stop with the parent (the test process).
    parent = os.getppid()
    while os.getppid() == parent:
        threading.Event().wait(1)
    server.shutdown()


if __name__ == "__main__":
    main()
