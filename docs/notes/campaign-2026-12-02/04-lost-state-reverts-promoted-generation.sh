#!/bin/bash
# DEFECT: local store, unsharded. After `generation promote` (g1 active) and `drop --previous`, the state folder is lost
# (the documented "lost state" case: a new state adopts the store and ends as an uninterrupted run).
# The next `sluice run` exits 0, silently rebuilds the index with the pipeline file's (g0) settings from nothing,
# readers switch to it, the promoted g1's store is orphaned on disk, and `generation start` reuses the id g1.
S=${SLUICE_BIN:-$PWD/.build/debug}/sluice
W=$(mktemp -d /tmp/sluice-t04.XXXX); cd $W
mkdir corpus; for i in $(seq 1 40); do printf '# Doc %s\n\nParagraph about topic %s and rocket %s galaxy, mountain river ocean forest desert city engine planet star alpha bravo charlie delta echo.\n\nMore text %s about oceans.\n' $i $i $((i*7)) $i > corpus/doc$i.md; done
cat > p.yaml <<Y
source: {path: corpus, include: ["**/*.md"]}
chunk: {strategy: structured, max_tokens: 64, overlap_tokens: 8}
embed: {provider: hash, dimensions: 64}
state: state
Y
for trial in 1 2; do
  rm -rf state .sluice
  $S run p.yaml >/dev/null 2>&1
  $S generation start p.yaml --set chunk.max_tokens=16 >/dev/null 2>&1; $S run p.yaml >/dev/null 2>&1
  $S generation promote p.yaml --skip-eval >/dev/null 2>&1; $S generation drop p.yaml --previous >/dev/null 2>&1
  echo "trial $trial: promoted g1 (chunk.max_tokens=16): export $($S export p.yaml 2>/dev/null | wc -l) records; store dirs: $(cd .sluice/index && find . -name data.mdb | tr '\n' ' ')"
  rm -rf state; echo "  state folder lost"
  $S run p.yaml > r.log 2>&1; echo "  run rc=$? ($(grep -E '^documents:|^chunks:' r.log | tr '\n' ' '))"
  grep -i -E "generation|adopt|new and" r.log | grep -v "^.*run started" | head -2 | cut -c1-200
  echo "  now served: export $($S export p.yaml 2>/dev/null | wc -l) records; store dirs: $(cd .sluice/index && find . -name data.mdb | tr '\n' ' '); orphan g1: $(du -sh .sluice/index/generations/g1 2>/dev/null | cut -f1)"
  $S generation start p.yaml --set chunk.max_tokens=40 2>&1 | grep started | cut -c1-60
done
cd /; rm -rf $W
