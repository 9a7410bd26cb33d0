#!/usr/bin/env bash
# The API contract: schemathesis (scripts/setup.sh test installs it, pinned) fuzzes `sluice serve` from
# docs/openapi.json, checking that no answer is a 5xx and every answer matches the document.
#
#   scripts/api-contract.sh                 # builds nothing: starts the built `sluice serve` over a small
#                                           # corpus (hash embedder) on a free port, then checks it
#   scripts/api-contract.sh http://HOST:PORT   # checks a server that is already running
#   scripts/api-contract.sh --auth          # the same server with credentials and access control on:
#                                           # a key of serve.keys_file, an HS256 JWT (serve.jwt) and the
#                                           # operator's token each exercise every route, with the check
#                                           # that a missing or wrong credential is refused (ignored_auth);
#                                           # then every route without a credential
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

auth=0
if [ "${1:-}" = "--auth" ]; then
  auth=1
  shift
fi

# check URL [SCHEMA [CHECKS [schemathesis options…]]]
check() {
  local url=$1 schema=${2:-$1/openapi.json} checks=${3:-not_a_server_error,response_schema_conformance}
  shift $(($# < 3 ? $# : 3))
  "$st" run "$schema" --url "$url" \
    --checks "$checks" \
    --max-examples "${CONTRACT_EXAMPLES:-30}" \
    --seed 17 \
    --no-color \
    "$@"
}

if [ $# -ge 1 ]; then
  [ "$auth" = 0 ] || { echo "api-contract: --auth starts its own server: give no URL" >&2; exit 1; }
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
if [ "$auth" = 1 ]; then
  # Access control on (notes/… readable by the group `notes`, the rest by everyone), a key with every
  # scope, JWTs signed HS256, the operator's token and the audit log: every identity the server knows.
  key=$("$venv/bin/python" -c 'import secrets; print(secrets.token_hex(32))')
  secret=$("$venv/bin/python" -c 'import secrets; print(secrets.token_hex(32))')
  operator=$("$venv/bin/python" -c 'import secrets; print(secrets.token_hex(32))')
  digest=$(printf %s "$key" | sha256sum | cut -d' ' -f1)
  cat >"$work/keys.yaml" <<YAML
keys:
  - id: contract
    sha256: "$digest"
    principal: contract
    groups: [notes]
    scopes: [search, ask, documents, export, runs, metrics]
YAML
  cat >>"$work/pipeline.yaml" <<YAML
access: {enabled: true, default: allow}
serve:
  keys_file: ./keys.yaml
  api_key_env: CONTRACT_OPERATOR_TOKEN
  audit_log: ./audit.jsonl
  jwt: {issuer: "https://contract.example/", audience: sluice, hs256_secret_env: CONTRACT_JWT_SECRET}
YAML
  sed -i 's|^source: {path: ./corpus}$|source: {path: ./corpus, metadata_from_path: "^(?<access>notes)/"}|' \
    "$work/pipeline.yaml"
  jwt=$("$venv/bin/python" - "$secret" <<'PY'
import base64, hashlib, hmac, json, sys, time
def part(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
head = part(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
claims = {"iss": "https://contract.example/", "aud": "sluice", "sub": "contract-jwt", "groups": ["notes"],
          "scope": "search ask documents export runs metrics", "exp": int(time.time()) + 3600}
body = part(json.dumps(claims).encode())
signature = hmac.new(sys.argv[1].encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
print(f"{head}.{body}.{part(signature)}")
PY
)
  export CONTRACT_OPERATOR_TOKEN=$operator CONTRACT_JWT_SECRET=$secret
fi
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
if [ "$auth" = 0 ]; then
  check "$url"
  exit
fi

# The document as a server with credentials reads it: every route needs a bearer credential but the
# probes (docs/openapi.json also describes a loopback server without any, where none is needed).
"$venv/bin/python" - docs/openapi.json "$work/openapi-auth.json" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
document["security"] = [{"bearer": []}]
json.dump(document, open(sys.argv[2], "w"))
PY
checks=not_a_server_error,response_schema_conformance,status_code_conformance,ignored_auth
for who in key jwt operator; do
  case $who in
    key) credential=$key ;;
    jwt) credential=$jwt ;;
    operator) credential=$operator ;;
  esac
  echo "api-contract: as the $who"
  check "$url" "$work/openapi-auth.json" "$checks" -H "Authorization: Bearer $credential"
done
echo "api-contract: without a credential"
check "$url" "$work/openapi-auth.json" not_a_server_error,response_schema_conformance,status_code_conformance
# Every route but the probes refuses a missing, a wrong and a malformed credential with 401.
for path in /v1/documents /v1/documents/plain.txt /v1/export /v1/runs/1 /metrics /openapi.json; do
  for header in "" "Authorization: Bearer wrong-$key" "Authorization: Basic $key"; do
    status=$(curl -s -o /dev/null -w '%{http_code}' ${header:+-H "$header"} "$url$path")
    [ "$status" = 401 ] || { echo "api-contract: $path answered $status without a valid credential" >&2; exit 1; }
  done
done
for path in /v1/search /v1/ask /v1/runs; do
  status=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d '{"query": "gate"}' \
    -H "Authorization: Bearer wrong-$key" "$url$path")
  [ "$status" = 401 ] || { echo "api-contract: POST $path answered $status with a wrong credential" >&2; exit 1; }
done
for path in /health /ready; do
  status=$(curl -s -o /dev/null -w '%{http_code}' "$url$path")
  [ "$status" = 200 ] || { echo "api-contract: $path answered $status without a credential" >&2; exit 1; }
done
# The audit log names identities, never a credential.
for credential in "$key" "$jwt" "$operator" "$secret"; do
  ! grep -qF "$credential" "$work/audit.jsonl" || { echo "api-contract: a credential in the audit log" >&2; exit 1; }
done
grep -q '"identity":"jwt"' "$work/audit.jsonl" && grep -q '"key_id":"contract"' "$work/audit.jsonl" ||
  { echo "api-contract: the audit log lacks the key's or the JWT's requests" >&2; exit 1; }
echo "api-contract: auth checks passed"
