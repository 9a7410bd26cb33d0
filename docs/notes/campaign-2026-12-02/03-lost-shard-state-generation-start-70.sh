#!/bin/bash
# DEFECT: sharded deployment on the local store. After a promote, shard 0's state folder is lost and rebuilt by the
# documented recovery (the same `run --shard 0/3` with a new state: adopts the store, exit 0). Then
# `sluice generation start` with that state exits 70 ("database 'documents' does not exist"); with shard 1's state it works.
S=${SLUICE_BIN:-$PWD/.build/debug}/sluice
W=$(mktemp -d /tmp/sluice-t03.XXXX); cd $W
mkdir corpus; for i in $(seq 1 40); do printf '# Doc %s\n\nParagraph about topic %s and rocket %s galaxy, mountain river ocean forest desert city engine planet star alpha bravo.\n\nMore text %s.\n' $i $i $((i*7)) $i > corpus/doc$i.md; done
cat > p.yaml <<Y
source: {path: corpus, include: ["**/*.md"]}
chunk: {strategy: structured, max_tokens: 64, overlap_tokens: 8}
embed: {provider: hash, dimensions: 64}
state: state
Y
for trial in 1 2; do
  rm -rf st0 st1 st2 .sluice
  for K in 0 1 2; do $S run p.yaml --shard $K/3 --state st$K >/dev/null 2>&1; done
  $S generation start p.yaml --state st0 --set chunk.max_tokens=16 >/dev/null 2>&1
  for K in 0 1 2; do $S run p.yaml --shard $K/3 --state st$K >/dev/null 2>&1; done
  $S generation promote p.yaml --state st0 --skip-eval >/dev/null 2>&1; echo "trial $trial: 3 shards built g1, promote rc=$?"
  rm -rf st0
  $S run p.yaml --shard 0/3 --state st0 >/dev/null 2>&1; echo "  shard 0 state lost; run --shard 0/3 with a new state rc=$?"
  $S generation start p.yaml --state st0 --set chunk.max_tokens=40 > o.txt 2>&1; rc=$?; echo "  generation start --state st0 rc=$rc: $(grep -v '^20..-' o.txt | head -1 | cut -c1-160)"
  $S generation start p.yaml --state st1 --set chunk.max_tokens=40 > o.txt 2>&1; rc=$?; echo "  generation start --state st1 rc=$rc: $(grep -v '^20..-' o.txt | head -1 | cut -c1-100)"
done
cd /; rm -rf $W
