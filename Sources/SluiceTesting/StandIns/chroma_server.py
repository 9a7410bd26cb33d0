#!/usr/bin/env python3
"""A real Chroma server (PyPI chromadb, in the tools venv) on loopback.

  chroma_server.py [--exit-on-stdin-eof] DIR

Runs `chroma run --path DIR --host 127.0.0.1 --port <free>`, waits for its heartbeat, prints
"PORT <n>", and stops when killed or when the parent process goes away.
"""
import argparse, os, sys, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_child  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description="a Chroma server on loopback")
    server_child.add_lifeline_option(parser)
    parser.add_argument("directory", help="the server's folder (data and log)")
    directory = parser.parse_args().directory
    chroma = os.path.join(server_child.venv(), "bin", "chroma")
    if not os.path.exists(chroma):
        server_child.fail("chromadb is not installed in the tools venv (run scripts/setup.sh)")
    os.makedirs(directory, exist_ok=True)
    env = dict(os.environ, ANONYMIZED_TELEMETRY="False")
    # The port is free when chosen and bound by chroma later: another test's server can take it in between
    # (chroma then exits). An early exit is tried again on a new port, each attempt with its own log; the third
    # fails with its log named.
    for attempt in range(1, 4):
        port = server_child.free_port()
        log = os.path.join(directory, "server.log" if attempt == 1 else f"server-{attempt}.log")
        child = server_child.start(
            [chroma, "run", "--path", os.path.join(directory, "data"), "--host", "127.0.0.1", "--port", str(port)],
            log, env=env)
        deadline = time.time() + 120
        while time.time() < deadline:
            if child.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                time.sleep(0.2)
        else:
            child.kill()
            server_child.fail("chroma did not answer its heartbeat; see " + log)
        if child.poll() is None:
            break
        if attempt == 3:
            server_child.fail("chroma exited; see " + log)
    print(f"PORT {port}", flush=True)
    server_child.serve_until_orphaned(child)


if __name__ == "__main__":
    main()
