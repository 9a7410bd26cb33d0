#!/usr/bin/env bash
# The switch of index generations under load (docs/GENERATIONS.md, "The switch under load"; issue 32): an index
# of DOCUMENTS generated Markdown documents plus samples/pdf and samples/images (text PDFs, scanned pages, images)
# on the local store with default settings, served by `sluice serve` and searched without pause by wrk
# (Debian `wrk`) while a candidate generation with another embedder setting is built by `sluice run` and
# then promoted. Prints, for each phase (before the build, during the build, during the switch, after it):
# the requests answered, those that failed (a status other than 200, a socket error or a timeout) and
# those answered with no result, and the p50 and p99 latency; then the extraction work of the candidate's
# build against `sluice run --reembed` with the same setting on a copy of the index as it was before, and
# against a second index built from nothing.
#
#   scripts/bench-generation-switch.sh [DOCUMENTS] [-- CANDIDATE-SETTINGS...]
#
# Defaults: 5000 documents; the candidate `--set embed.precision=int8` (MiniLM fp32 → int8). What it does:
#   1. writes DOCUMENTS Markdown documents (three sentences from one vocabulary, so that every query finds
#      something) and copies samples/pdf and samples/images beside them (the work extraction does: PDF pages, OCR);
#   2. builds the index (`sluice run`, MiniLM fp32) and keeps a copy of its state and store for step 7;
#   3. starts `sluice serve` on it and, until step 6 ends, runs wrk one second at a time (1 thread, 2
#      connections, each sending its next search 20 ms after its last answer; the same five queries in turn,
#      k 10, the server's default mode, a 10 s timeout); every window records its requests, failures,
#      empty answers and latency histogram, with its start and end;
#   4. after BEFORE seconds (default 20): `sluice generation start … CANDIDATE-SETTINGS`, then `sluice run`
#      (the build; its extraction figures are the candidate's: the active generation is up to date);
#   5. `sluice generation promote --skip-eval`; the switch lasts from the promote's start until the server
#      logs that it serves the new generation, plus 2 s;
#   6. AFTER seconds more (default 20) of load, then the server stops;
#   7. on the copy of step 2: `sluice run --reembed CANDIDATE-SETTINGS` (the index is down meanwhile), then a
#      second index from nothing with CANDIDATE-SETTINGS (another state and store: no extraction cache).
# A window belongs to the switch when it overlaps it, else to the phase its middle falls in.
#
# SLUICE is the binary (default .build/release/sluice, else .build/debug/sluice; a run starts the extraction
# worker beside it: build `sluice-extract-worker` too); BEFORE and AFTER the seconds of load around the build
# and the switch; KEEP=1 keeps the working folder. On an Intel Xeon of family 6 model 207 export
# OPENBLAS_CORETYPE=SkylakeX (Debian's OpenBLAS does not know that CPU and falls back to slow kernels).
set -euo pipefail
documents="${1:-5000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/bench-lib.sh"
candidate=(--set embed.precision=int8)
bench_after_dashdash candidate "$@"
before="${BEFORE:-20}"
after="${AFTER:-20}"
sluice=$(bench_sluice bench-generation-switch "$root")
[ -x /usr/bin/time ] || { echo "bench-generation-switch: install time (apt-get install time)" >&2; exit 1; }
export OMP_THREAD_LIMIT=1 # Debian's libtesseract reads it when it loads: OCR with OpenMP costs 3-5x the CPU

work=$(mktemp -d -t sluice-bench-generations.XXXXXX)
server=""
load=""
cleanup() {
  [ -n "$load" ] && kill -INT "$load" 2>/dev/null && wait "$load" 2>/dev/null
  [ -n "$server" ] && kill -TERM "$server" 2>/dev/null && wait "$server" 2>/dev/null
  if [ "${KEEP:-0}" = 1 ]; then echo "bench-generation-switch: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
now() { date +%s.%N; }
mark() { echo "$1 $(now)" >>"$work/marks.txt"; }

# 1. The corpus: sentences drawn from one vocabulary, deterministic (RANDOM seeded), and samples/.
RANDOM=32
mkdir -p "$work/corpus/generated"
for ((d = 0; d < documents; d++)); do
  bench_document "$d" 3 >"$work/corpus/generated/doc-$d.md"
done
mkdir -p "$work/corpus/samples"
cp -a "$root/samples/pdf" "$root/samples/images" "$work/corpus/samples/"
extracted_files=$(find "$work/corpus/samples" -type f | wc -l)
pdf_pages=0
if command -v pdfinfo >/dev/null; then
  while IFS= read -r -d '' pdf; do
    pages=$(pdfinfo "$pdf" 2>/dev/null | awk '/^Pages:/ { print $2 }')
    pdf_pages=$((pdf_pages + ${pages:-0}))
  done < <(find "$work/corpus/samples" -name '*.pdf' -print0)
fi

cat >"$work/pipeline.yaml" <<YAML
# Written by scripts/bench-generation-switch.sh: the local store, default settings.
source:
  path: ./corpus
embed:
  provider: minilm
sink:
  kind: local
  path: ./index
state: ./state
YAML

# Runs sluice in the working folder under /usr/bin/time; NAME.out, NAME.err and NAME.time keep what it said.
timed() { # NAME ARGS...
  local name=$1
  shift
  (cd "$work" && /usr/bin/time -v -o "$work/$name.time" "$sluice" "$@" >"$work/$name.out" 2>"$work/$name.err") || {
    local code=$?
    # Exit 2: some documents failed (a sample an extractor refuses would); anything else is fatal.
    if [ "$code" != 2 ]; then
      echo "bench-generation-switch: sluice $* exited $code:" >&2
      tail -20 "$work/$name.err" >&2
      exit 1
    fi
  }
}

# 2. The index, and a copy of it for the run without generations.
echo "bench-generation-switch: building the index of $documents documents and the samples" >&2
timed first run pipeline.yaml --quiet --stats-json "$work/first.json"
cp -a "$work/state" "$work/state.reembed"
cp -a "$work/index" "$work/index.reembed"

# 3. The server, and the load.
(cd "$work" && exec "$sluice" serve pipeline.yaml --port 0 >"$work/serve.out" 2>"$work/serve.err") &
server=$!
for ((waited = 0; ; waited++)); do
  grep -q "listening on" "$work/serve.out" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { echo "bench-generation-switch: the server stopped:" >&2; tail -20 "$work/serve.err" >&2; exit 1; }
  ((waited < 3000)) || { echo "bench-generation-switch: the server did not start" >&2; exit 1; }
  sleep 0.2
done
url=$(grep -o "http://[^ ]*" "$work/serve.out" | head -1)
body=$(curl -sS --fail -H 'Content-Type: application/json' -d '{"query": "sluice gate", "k": 10}' "$url/v1/search") ||
  { echo "bench-generation-switch: the server refused a search" >&2; exit 1; }
grep -q '"document_key"' <<<"$body" || { echo "bench-generation-switch: the server found nothing: $body" >&2; exit 1; }

cat >"$work/search.lua" <<'LUA'
-- One connection per thread, so a thread's response is the answer to its last request: each thread logs
-- every request (sent at, in microseconds since the epoch; latency in microseconds; status; 1 when the answer
-- holds no result) to $BENCH_REQUESTS.<thread>. Timeouts and socket errors are wrk's own counts.
local ffi = require("ffi")
ffi.cdef [[ typedef struct { long tv_sec; long tv_nsec; } bench_timespec; int clock_gettime(int, bench_timespec *); ]]
local clock = ffi.new("bench_timespec")
local function micros()
  ffi.C.clock_gettime(0, clock)
  return tonumber(clock.tv_sec) * 1000000 + math.floor(tonumber(clock.tv_nsec) / 1000)
end
local queries = {"sluice gate", "river water", "canal lock maintenance", "quarterly report", "backup policy"}
local count = 0
function setup(thread) thread:set("id", count); count = count + 1 end
function init(args) i = 0; log = io.open(os.getenv("BENCH_REQUESTS") .. "." .. id, "w") end
function delay() return 20 end
function request()
  i = i + 1
  sent = micros()
  return wrk.format("POST", "/v1/search", {["Content-Type"] = "application/json"},
    '{"query": "' .. queries[(i + id) % #queries + 1] .. '", "k": 10}')
end
function response(status, headers, body)
  local empty = string.find(body, '"document_key"', 1, true) and 0 or 1
  log:write(string.format("%d %d %d %d\n", sent, micros() - sent, status, empty))
  log:flush()
end
LUA

# wrk runs until it is interrupted (SIGINT: it stops and prints its totals, socket errors and timeouts included).
BENCH_REQUESTS="$work/requests" wrk -t 2 -c 2 -d 3h --timeout 30s -s "$work/search.lua" "$url" >"$work/wrk.out" 2>&1 &
load=$!
mark load
sleep "$before"

# 4. The candidate, built by a run.
mark build
timed start generation start pipeline.yaml "${candidate[@]}"
timed build run pipeline.yaml
mark built

# 5. The switch: from the promote until the server says it serves the new generation, plus 2 s.
# (`generation start` changes the manifest too: the server reloads it then, and says so, for the same generation.)
notices=$(grep -c "the active index generation changed" "$work/serve.err" || true)
mark switch
timed promote generation promote pipeline.yaml --skip-eval
for ((waited = 0; ; waited++)); do
  (($(grep -c "the active index generation changed" "$work/serve.err" || true) > notices)) && break
  ((waited < 600)) || { echo "bench-generation-switch: the server did not follow the promote" >&2; exit 1; }
  sleep 0.1
done
sleep 2
mark switched

# 6. After.
sleep "$after"
kill -INT "$load"
wait "$load" || true
load=""
mark end
kill -TERM "$server"
wait "$server" || true
server=""

# 7. The way without generations, on the copy of the index before the candidate.
echo "bench-generation-switch: the same change with --reembed" >&2
mv "$work/state" "$work/state.generations"
mv "$work/index" "$work/index.generations"
mv "$work/state.reembed" "$work/state"
mv "$work/index.reembed" "$work/index"
timed reembed run pipeline.yaml --reembed "${candidate[@]}"
# And a second index built from nothing (another state and store) with the candidate's settings, the way
# without generations that keeps the first one served: it has no extraction cache to start from.
timed fresh run pipeline.yaml --state ./state.fresh --set sink.path=./index.fresh "${candidate[@]}"

# The figures.
python3 - "$work" "$documents" "$pdf_pages" "$extracted_files" "${candidate[*]}" <<'PY'
import re, sys
work, documents, pdf_pages, samples, candidate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
marks = {}
for line in open(f"{work}/marks.txt"):
    name, at = line.split()
    marks[name] = float(at)
# Requests: "sent_us latency_us status empty", one file per wrk thread.
import glob
requests = []
for path in glob.glob(f"{work}/requests.*"):
    for line in open(path):
        sent, latency, status, empty = (int(v) for v in line.split())
        requests.append((sent / 1e6, latency / 1000, status, empty))
phases = [("before the build", marks["load"], marks["build"]), ("during the build", marks["build"], marks["switch"]),
          ("during the switch", marks["switch"], marks["switched"]), ("after the switch", marks["switched"], marks["end"])]
def p99(latencies):
    if not latencies:
        return float("nan")
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, max(0, -(-99 * len(ordered) // 100) - 1))]
print(f"{'phase':<20}{'seconds':>9}{'requests':>10}{'failed':>8}{'empty':>7}{'p50 ms':>9}{'p99 ms':>9}")
for name, start, end in phases:
    mine = [r for r in requests if start <= r[0] < end]
    ok = [r for r in mine if r[2] == 200]
    latencies = [r[1] for r in mine]
    p50 = sorted(latencies)[len(latencies) // 2] if latencies else float("nan")
    print(f"{name:<20}{end - start:>9.1f}{len(mine):>10}{len(mine) - len(ok):>8}{sum(r[3] for r in ok):>7}"
          f"{p50:>9.1f}{p99(latencies):>9.1f}")
wrk = open(f"{work}/wrk.out").read()
errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", wrk)
print("wrk: " + (f"socket errors: connect {errors.group(1)}, read {errors.group(2)}, write {errors.group(3)}, "
                 f"timeout {errors.group(4)} (not in the table: a request that got no answer is not logged)"
                 if errors else "no socket error, no timeout"))
print("(a request belongs to the phase it was sent in; the switch lasts from the promote's start to the server's"
      " notice that it serves the new generation, plus 2 s; wrk -t 2 -c 2, 20 ms between a connection's searches)")

def summaries(name):
    """The summaries a run printed (one per generation it ran, the active one first), as dictionaries."""
    text = open(f"{work}/{name}.err").read()
    starts = list(re.finditer(r"documents: (\d+) upserted, (\d+) skipped, (\d+) failed(.*)", text))
    out = []
    for index, block in enumerate(starts):
        rest = text[block.start():starts[index + 1].start() if index + 1 < len(starts) else len(text)]
        cached = re.search(r"(\d+) extractions from the state's cache", block.group(4))
        ocr = re.search(r"OCR: (\d+) pages? read", rest)
        out.append({"upserted": int(block.group(1)), "skipped": int(block.group(2)), "failed": int(block.group(3)),
                    "cached": int(cached.group(1)) if cached else 0, "ocr": int(ocr.group(1)) if ocr else 0})
    return out
def seconds(name):
    text = open(f"{work}/{name}.time").read()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (.*)", text).group(1)
    parts = [float(p) for p in wall.split(":")]
    wall_s = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    user = float(re.search(r"User time \(seconds\): (.*)", text).group(1))
    system = float(re.search(r"System time \(seconds\): (.*)", text).group(1))
    return wall_s, user + system
print()
print(f"the candidate ({candidate}), {documents} documents + {samples} PDFs and images ({pdf_pages} PDF pages):")
print(f"{'':<36}{'documents':>10}{'read again':>11}{'PDFs, images':>13}{'OCR pages':>10}{'wall s':>9}{'CPU s':>9}")
for label, name in [("generation start + run (the build)", "build"), ("run --reembed (same state)", "reembed"),
                    ("a new index from nothing", "fresh")]:
    run = summaries(name)[-1]  # with a candidate, the last summary is the candidate's (the active one was up to date)
    wall, cpu = seconds(name)
    documents_done = run["upserted"] + run["failed"]
    # The extraction cache keeps what is costly to extract (PDFs, images); Markdown is read again every time.
    print(f"{label:<36}{documents_done:>10}{documents_done - run['cached']:>11}{samples - run['cached']:>13}"
          f"{run['ocr']:>10}{wall:>9.1f}{cpu:>9.1f}")
print("(read again: documents not taken from the extraction cache; PDFs, images: those of them parsed or OCR'd again;"
      " CPU s: the run's, the extraction workers' it reaped included)")
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
