#!/usr/bin/env bash
# Load on `sluice serve` with access control on against off (docs/ACCESS.md, issue 36), in one run, on the
# same store: requests/s and p50/p99 latency of POST /v1/search from wrk (Debian `wrk`), each the median of
# alternating rounds, and the ratio on/off. Not run by the tests: the machines are shared, so figures are
# taken quiet (docs/SERVE.md, "Load").
#
#   scripts/bench-serve-access.sh [ROUNDS] [SECONDS] [CONNECTIONS] [DOCUMENTS] [-- SETTINGS...]
#
# Defaults: 5 rounds of 20 s each way, 16 connections, 3000 generated documents. What it does:
#   1. writes DOCUMENTS Markdown documents (short paragraphs from one vocabulary, so every query matches
#      many): nine tenths in ten team folders (`team-0/` … `team-9/`, readable by that group alone, by a
#      path capture), a tenth in `shared/` (no readers: everyone's, `access.default: allow`);
#   2. loads them with `sluice run` (access control on, so each record carries its readers);
#   3. starts `sluice serve` twice on that store: OFF with `access.enabled: false` and the operator's token
#      (every record, no filter), ON with `access.enabled: true` and a key of principal `bench-user` in
#      groups `team-0` and `team-1` (about a quarter of the records readable: the access filter is ANDed
#      into each search inside the store);
#   4. drives them in turn, ROUNDS times (off then on, then on then off, …), wrk with 2 threads, the same
#      five queries in turn, `k` 10, the server's default mode; the idle server waits meanwhile;
#   5. prints each round's figures, then the medians and on/off.
#
# SETTINGS after `--` go to `sluice run` and both servers (`--set sink.kind=pgvector --set sink.url=…` for
# another store). SLUICE is the binary (default .build/release/sluice, else .build/debug/sluice); EMBED the
# embedder (default minilm, as the figures of docs/SERVE.md; `hash` for a quick check that the script
# works, figures then meaningless); MODE the search mode each request asks for (`vector`, `keyword`, `hybrid`;
# default: none, the server's default); KEEP=1 keeps the working folder.
set -euo pipefail
rounds="${1:-5}"
seconds="${2:-20}"
connections="${3:-16}"
documents="${4:-3000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/bench-lib.sh"
settings=()
bench_after_dashdash settings "$@"
embed="${EMBED:-minilm}"
sluice=$(bench_sluice bench-serve-access "$root")
command -v openssl >/dev/null || { echo "bench-serve-access: install openssl" >&2; exit 1; }

work=$(mktemp -d -t sluice-bench-access.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "${KEEP:-0}" = 1 ]; then echo "bench-serve-access: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# 1. The corpus: sentences drawn from one vocabulary, deterministic (RANDOM seeded).
RANDOM=36
mkdir -p "$work/corpus/shared"
for team in 0 1 2 3 4 5 6 7 8 9; do mkdir -p "$work/corpus/team-$team"; done
for ((d = 0; d < documents; d++)); do
  if ((d % 10 == 9)); then folder=shared; else folder="team-$(((d / 10) % 10))"; fi
  bench_document "$d" 6 >"$work/corpus/$folder/doc-$d.md"
done

dimensions=384
[ "$embed" = minilm ] || dimensions=48
cat >"$work/pipeline.yaml" <<YAML
# Written by scripts/bench-serve-access.sh.
source:
  path: ./corpus
  include: ["**/*.md"]
  metadata_from_path: "^(?<access>team-[0-9])/"
chunk:
  strategy: recursive
  max_tokens: 64
  overlap_tokens: 8
embed:
  provider: $embed
  dimensions: $dimensions
sink:
  kind: local
  path: ./index
state: ./state
access:
  enabled: true
  default: allow
YAML

# The key: random, its digest in the keys file (never the key itself).
key=$(openssl rand -hex 32)
operator=$(openssl rand -hex 32)
digest=$(printf %s "$key" | sha256sum | cut -d' ' -f1)
cat >"$work/keys.yaml" <<YAML
keys:
  - id: bench
    sha256: "$digest"
    principal: bench-user
    groups: [team-0, team-1]
    scopes: [search]
YAML

# 2. The load.
echo "bench-serve-access: loading $documents documents ($embed)" >&2
(cd "$work" && "$sluice" run pipeline.yaml "${settings[@]}" >"$work/run.out" 2>"$work/run.err") || {
  tail -20 "$work/run.err" >&2
  exit 1
}

# 3. Two servers on the store; each prints `listening on http://HOST:PORT`.
# Sets `url` (not a command substitution: the server's pid must reach `pids` of this shell, for the cleanup).
start_server() { # NAME SETTINGS...
  local name=$1
  shift
  (cd "$work" && SLUICE_BENCH_TOKEN="$operator" exec "$sluice" serve pipeline.yaml --port 0 \
    --set serve.api_key_env=SLUICE_BENCH_TOKEN "$@" "${settings[@]}" >"$work/$name.out" 2>"$work/$name.err") &
  pids+=($!)
  local waited=0
  until grep -q "listening on" "$work/$name.out" 2>/dev/null; do
    if ! kill -0 "${pids[-1]}" 2>/dev/null; then
      echo "bench-serve-access: the $name server stopped:" >&2
      tail -20 "$work/$name.err" >&2
      exit 1
    fi
    sleep 0.2
    waited=$((waited + 1))
    ((waited < 3000)) || { echo "bench-serve-access: the $name server did not start" >&2; exit 1; }
  done
  url=$(grep -o "http://[^ ]*" "$work/$name.out" | head -1)
}
start_server off --set access.enabled=false
off_url=$url
start_server on --set access.enabled=true --set serve.keys_file="$work/keys.yaml"
on_url=$url

mode_field=""
[ -n "${MODE:-}" ] && mode_field=", \"mode\": \"$MODE\""
cat >"$work/search.lua" <<LUA
-- Rotates a few queries so that no cache answers them all.
local queries = {"sluice gate", "river water", "canal lock maintenance", "quarterly report", "backup policy"}
local mode = '$mode_field'
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("SLUICE_BENCH_BEARER")
request = function()
  i = i + 1
  return wrk.format(nil, "/v1/search", nil, '{"query": "' .. queries[i % #queries + 1] .. '", "k": 10' .. mode .. '}')
end
LUA

# Each server answers once before it is measured (the first search loads the graph), and must answer 200
# with results: a figure of refusals would measure nothing.
warm() { # URL BEARER
  local body
  body=$(curl -sS --fail -H "Authorization: Bearer $2" -H 'Content-Type: application/json' \
    -d '{"query": "sluice gate", "k": 10}' "$1/v1/search") || { echo "bench-serve-access: $1 refused" >&2; exit 1; }
  grep -q '"document_key"' <<<"$body" || { echo "bench-serve-access: $1 found nothing: $body" >&2; exit 1; }
}
warm "$off_url" "$operator"
warm "$on_url" "$key"

# wrk's latency distribution in milliseconds ("1.23ms", "850.00us", "1.02s").
to_ms() { awk '{ v = $1; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /m$/) { sub(/m$/, "", v); v *= 60000 } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 } printf "%.2f", v }'; }

measure() { # NAME URL BEARER ROUND
  local out="$work/wrk-$1-$4.txt"
  SLUICE_BENCH_BEARER="$3" wrk --latency -t 2 -c "$connections" -d "${seconds}s" -s "$work/search.lua" "$2" >"$out"
  local rps p50 p99 errors
  rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
  p50=$(awk '$1 == "50%" { print $2 }' "$out" | to_ms)
  p99=$(awk '$1 == "99%" { print $2 }' "$out" | to_ms)
  errors=$(awk '/Non-2xx or 3xx responses:/ { print $5 }' "$out")
  if [ -n "$errors" ]; then echo "bench-serve-access: $1 round $4: $errors answers not 2xx" >&2; exit 1; fi
  printf '%s %s %s %s %s\n' "$1" "$4" "$rps" "$p50" "$p99" | tee -a "$work/figures.txt"
}

echo "server round requests/s p50_ms p99_ms"
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2 == 1)); then
    measure off "$off_url" "$operator" "$r"
    measure on "$on_url" "$key" "$r"
  else
    measure on "$on_url" "$key" "$r"
    measure off "$off_url" "$operator" "$r"
  fi
done

median() { # NAME COLUMN
  awk -v name="$1" -v column="$2" '$1 == name { print $column }' "$work/figures.txt" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo
printf '%-24s %12s %10s %10s\n' "median of $rounds rounds" "requests/s" "p50 ms" "p99 ms"
for name in off on; do
  printf '%-24s %12s %10s %10s\n' "access $name" "$(median $name 3)" "$(median $name 4)" "$(median $name 5)"
done
awk -v a="$(median on 3)" -v b="$(median off 3)" -v c="$(median on 4)" -v d="$(median off 4)" \
  -v e="$(median on 5)" -v f="$(median off 5)" \
  'BEGIN { printf "%-24s %12.3f %10.3f %10.3f\n", "on / off", a / b, c / d, e / f }'
readable=$(find "$work/corpus/shared" "$work/corpus/team-0" "$work/corpus/team-1" -name '*.md' | wc -l)
echo "($documents documents, $readable of them readable by the key (team-0, team-1, shared); wrk -t 2 -c $connections -d ${seconds}s, k 10, mode ${MODE:-default}; embed $embed)"
