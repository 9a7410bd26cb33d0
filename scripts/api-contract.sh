#!/usr/bin/env bash
# The API contract: schemathesis (scripts/setup.sh test installs it, pinned) fuzzes `sluice serve` from
# docs/openapi.json, checking that no answer is a 5xx and every answer matches the document.
#
#   scripts/api-contract.sh                 # builds nothing: starts the built `sluice serve` over a small
#                                           # corpus (hash embedder) on a free port, then checks it
#   scripts/api-contract.sh http://HOST:PORT   # checks a server that is already running
#
# SLUICE_BINARY names the executable (default .build/debug/sluice); CONTRACT_EXAMPLES the examples per
# operation (default 30). The server has no `answer` section, so POST /v1/ask answers 404 (documented).
# Exit 0 when every check passed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}/venv"
st="$venv/bin/schemathesis"
[ -x "$st" ] || { echo "api-contract: schemathesis is missing: run scripts/setup.sh test" >&2; exit 1; }

check() {
  "$st" run "$1/openapi.json" --url "$1" \
    --checks not_a_server_error,response_schema_conformance \
    --max-examples "${CONTRACT_EXAMPLES:-30}" \
    --seed 17 \
    --no-color
}

if [ $# -ge 1 ]; then
  check "${1%/}"
  exit
fi

binary="${SLUICE_BINARY:-$root/.build/debug/sluice}"
work=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill -TERM "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/corpus/notes"
for i in 1 2 3 4 5 6; do
  printf 'Paragraph %s about the sluice gate, river water and the canal lock.\n\nMore text %s.\n' "$i" "$i" \
    >"$work/corpus/notes/doc-$i.txt"
done
echo 'A plain document (the example key of docs/openapi.json).' >"$work/corpus/plain.txt"
cat >"$work/pipeline.yaml" <<YAML
source: {path: ./corpus}
embed: {provider: hash, dimensions: 48}
sink: {kind: local, path: ./index}
state: ./state
YAML
"$binary" run "$work/pipeline.yaml" --quiet
"$binary" serve "$work/pipeline.yaml" --port 0 >"$work/serve.out" 2>"$work/serve.err" &
server=$!
url=""
for _ in $(seq 1 1200); do  # up to 120 s for the server to listen
  url=$(sed -n 's/^listening on //p' "$work/serve.out" | head -n 1)
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/serve.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "api-contract: the server did not start" >&2; cat "$work/serve.err" >&2; exit 1; }
check "$url"
