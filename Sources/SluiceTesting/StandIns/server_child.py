"""Helpers for stand-in wrappers that run a real server as a child process (stdlib only).

The child dies with the wrapper (PR_SET_PDEATHSIG), and the wrapper exits when its own parent (the test
process) goes away, so a crashed or killed test run leaves no server behind.
"""
import ctypes, os, signal, socket, subprocess, sys, time

PR_SET_PDEATHSIG = 1


def add_lifeline_option(parser):
    """StandInServer passes --exit-on-stdin-eof to every stand-in. These wrappers already stop when their
    parent goes (serve_until_orphaned polls getppid), so the flag is accepted and has nothing more to do.
    It is a declared option so that argparse rejects any other: an unknown flag must never be taken for
    a positional argument such as a data folder (that once committed a PostgreSQL data folder named
    after the flag)."""
    parser.add_argument("--exit-on-stdin-eof", action="store_true", help="accepted; the wrapper stops with its parent anyway")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def start(command, log_path, env=None, cwd=None):
    log = open(log_path, "ab")
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd, preexec_fn=_die_with_parent)


def wait_for_port(port, child, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if child.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def serve_until_orphaned(child, on_exit=None):
    """Prints nothing; returns when the parent is gone, the child ended or SIGTERM/SIGINT arrived."""
    parent = os.getppid()
    stop = {"now": False}

    def handler(signum, frame):
        stop["now"] = True

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    while not stop["now"] and os.getppid() == parent and child.poll() is None:
        time.sleep(0.2)
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
    if on_exit:
        on_exit()


def venv():
    cache = os.environ.get("SLUICE_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "sluice")
    return os.path.join(cache, "venv")


def fail(message):
    print(f"ERROR {message}", flush=True)
    sys.exit(1)
