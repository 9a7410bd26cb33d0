#!/bin/bash
# DEFECT (low): with a candidate, `run --dry-run` prices the candidate's part as if the active generation's part of
# the same run did not fill the shared embedding cache first: new short documents (one chunk, identical in both
# generations, same embedder) are counted as tokens to embed for the candidate, and the real run embeds none of them.
S=${SLUICE_BIN:-$PWD/.build/debug}/sluice
W=$(mktemp -d /tmp/sluice-t05.XXXX); cd $W
mkdir corpus; for i in $(seq 1 20); do printf '# Doc %s\n\nParagraph about topic %s and rocket %s galaxy, mountain river ocean forest desert city engine planet star alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa.\n\nMore text %s about oceans and forests and deserts and cities.\n' $i $i $((i*7)) $i > corpus/doc$i.md; done
cat > p.yaml <<Y
source: {path: corpus, include: ["**/*.md"]}
chunk: {strategy: structured, max_tokens: 64, overlap_tokens: 8}
embed: {provider: hash, dimensions: 64}
state: state
Y
for trial in 1 2; do
  rm -rf state .sluice corpus/new*
  $S run p.yaml >/dev/null 2>&1
  $S generation start p.yaml --set chunk.max_tokens=24 >/dev/null 2>&1; $S run p.yaml >/dev/null 2>&1
  for i in $(seq 1 5); do echo "short note $i $trial" > corpus/new$i.md; done
  echo "trial $trial: 5 new one-line documents"
  $S run p.yaml --dry-run 2>/dev/null | grep -E "^generation|^to embed" | paste - - | sed 's/^/  dry-run: /'
  $S run p.yaml 2>&1 | grep -E "^chunks:" | sed 's/^/  real:    /'
done
cd /; rm -rf $W
