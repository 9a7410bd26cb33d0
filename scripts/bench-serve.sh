#!/usr/bin/env bash
# Load on `sluice serve`'s POST /v1/search: requests/s and latency percentiles from wrk (Debian `wrk`).
# Not run by the tests: the machines are shared, so figures are taken later, under a lock, on an index of
# at least 100k vectors (docs/SERVE.md, "Load").
#
#   scripts/bench-serve.sh http://127.0.0.1:8080 [SECONDS] [CONNECTIONS] [MODE] [FILTER]
#
# MODE is the search mode sent (vector, keyword, hybrid); by default none, so the server's default (hybrid
# where the store has keyword search). FILTER, if given, is sent as the request's filter: a JSON object as the
# API takes it (docs/USAGE.md, "Filters"), without single quotes or backslashes, e.g. '{"folders": {"$in": ["copy3/"]}}'.
#
# Run it once alone and once while `curl -X POST $URL/v1/runs` is going; the server's peak RSS is
# `grep VmHWM /proc/$(pgrep -f sluice-serve)/status` afterwards. Set SLUICE_TOKEN if the server needs one.
set -euo pipefail
url="${1:?usage: scripts/bench-serve.sh URL [SECONDS] [CONNECTIONS] [MODE] [FILTER]}"
seconds="${2:-30}"
connections="${3:-16}"
mode="${4:-}"
filter="${5:-}"
mode_field=""
[ -n "$mode" ] && mode_field=", \\\"mode\\\": \\\"$mode\\\""
case "$filter" in *\'* | *\\*) echo "bench-serve: FILTER without single quotes or backslashes" >&2; exit 2 ;; esac
[ -n "$filter" ] && mode_field="$mode_field, \\\"filter\\\": $filter"
command -v wrk >/dev/null || { echo "bench-serve: install wrk (apt-get install wrk)" >&2; exit 1; }
script=$(mktemp --suffix=.lua)
trap 'rm -f "$script"' EXIT
cat >"$script" <<LUA
-- Rotates a few queries so that no cache answers them all.
local queries = {"sluice gate", "river water", "canal lock maintenance", "quarterly report", "backup policy"}
local i = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if os.getenv("SLUICE_TOKEN") then wrk.headers["Authorization"] = "Bearer " .. os.getenv("SLUICE_TOKEN") end
request = function()
  i = i + 1
  return wrk.format(nil, "/v1/search", nil, '{"query": "' .. queries[i % #queries + 1] .. '", "k": 10$mode_field}')
end
LUA
wrk --latency -t 2 -c "$connections" -d "${seconds}s" -s "$script" "$url"
