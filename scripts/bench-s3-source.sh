#!/usr/bin/env bash
# The S3 source benchmark (issue 34): the same N text files (10,000 by default, about 2.5 KB each) in a local
# folder and as objects in a bucket of moto's S3 server on loopback (the stand-in the tests use,
# Sources/SluiceTesting/StandIns/s3_server.py, from the tools venv). Each repeat makes, into fresh states:
#   1. a first load from the folder and 2. a first load from the bucket (wall time, documents/s, MB/s);
#   3. a no-op run from the bucket and 4. a no-op run with --prune (wall time and requests); 5. a no-op run
#   from the folder (what a no-op run costs without the listing's requests).
# It prints each run, then the medians and the ratio of the bucket's first-load throughput to the folder's.
# Requests are counted at the server (LIST, GET object, HEAD, GetObjectTagging, any other), exact; the run's
# own count (its `run finished` log line) is printed beside them. The wall times are noisy on a shared
# machine and include moto, a Python server, on the same cores: say so beside any figure.
#   scripts/bench-s3-source.sh [WORK] [REPEATS] [OBJECTS]
# Hash embedder (embed.provider=hash), so that the figures are the source and the pipeline, not the model.
# Uses the built binary (.build/release/sluice if built, else .build/debug/sluice; SLUICE=... for another;
# sluice-extract-worker must be beside it).
set -euo pipefail
cd "$(dirname "$0")/.."
work="${1:-/tmp/sluice-bench-s3}"
repeats="${2:-3}"
objects="${3:-10000}"
sluice="${SLUICE:-}"
if [[ -z $sluice ]]; then
  sluice="$PWD/.build/release/sluice"
  [[ -x $sluice ]] || sluice="$PWD/.build/debug/sluice"
fi
[[ -x $sluice ]] || { echo "bench-s3-source: $sluice is missing; run: swift build -c release --product sluice; swift build -c release --product sluice-extract-worker" >&2; exit 1; }
python="${SLUICE_TOOLS_VENV:-$HOME/.cache/sluice/venv}/bin/python"
[[ -x $python ]] || { echo "bench-s3-source: $python is missing; run scripts/setup.sh (it installs moto[server])" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
"$python" Sources/SluiceTesting/StandIns/s3_server.py --bucket corpus >"$work/server.out" 2>"$work/server.err" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  grep -q '^PORT ' "$work/server.out" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
  sleep 0.1
done
port=$(awk '/^PORT / {print $2}' "$work/server.out")
[[ -n $port ]] || { echo "bench-s3-source: the S3 stand-in did not start" >&2; cat "$work/server.err" >&2; exit 1; }
endpoint="http://127.0.0.1:$port"

# The corpus: OBJECTS distinct text files under 20 folders, written to WORK/corpus and uploaded under docs/
# (with the stand-in's own key: the uploads are not counted).
"$python" - "$work/corpus" "$objects" "$endpoint" <<'EOF'
import concurrent.futures, os, random, sys
import boto3
from botocore.config import Config
root, count, endpoint = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(0x53_0034)
words = [''.join(rng.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rng.randint(2, 10))) for _ in range(5000)]
files = []
for i in range(count):
    key = f"folder-{i % 20:02d}/doc-{i:06d}.txt"
    paragraphs = ["\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(4)) for _ in range(5)]
    text = f"Document {i}\n\n" + "\n\n".join(paragraphs) + "\n"
    path = os.path.join(root, key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    files.append((key, text.encode()))
client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="standin",
                      aws_secret_access_key="standin",
                      config=Config(s3={"addressing_style": "path"}, max_pool_connections=16))
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    list(pool.map(lambda item: client.put_object(Bucket="corpus", Key="docs/" + item[0], Body=item[1]), files))
print(f"{count} files, {sum(len(b) for _, b in files)} bytes, in the folder and the bucket", file=sys.stderr)
EOF
bytes=$(find "$work/corpus" -type f -printf '%s\n' | awk '{n += $1} END {print n}')

export SLUICE_BENCH_S3_KEY=bench-key SLUICE_BENCH_S3_SECRET=bench-secret
common=(--set embed.provider=hash --quiet --log-level info)
s3=(Pipelines/s3.yaml --set source.s3.bucket=corpus --set source.s3.prefix=docs --set "source.s3.endpoint=$endpoint"
  --set source.s3.region=us-east-1 --set source.s3.access_key_env=SLUICE_BENCH_S3_KEY
  --set source.s3.secret_key_env=SLUICE_BENCH_S3_SECRET)

stats() { "$python" -c 'import json,sys,urllib.request; s=json.load(urllib.request.urlopen(sys.argv[1]+"/_standin/stats")); print(s["list"], s["get"], s["head"], s["tagging"], s["other"], s["total"])' "$endpoint"; }

# timed NAME ARGS...: runs sluice, prints "wall upserted skipped" and leaves its stderr in WORK/NAME.err.
timed() {
  local name=$1
  shift
  /usr/bin/time -f '%e' -o "$work/$name.time" "$sluice" run "$@" "${common[@]}" --stats-json "$work/$name.json" \
    >/dev/null 2>"$work/$name.err" || { echo "bench-s3-source: $name failed" >&2; tail -5 "$work/$name.err" >&2; exit 1; }
  "$python" -c 'import json,sys; s=json.load(open(sys.argv[1])); print(open(sys.argv[2]).read().split()[-1], s["documents_upserted"], s["documents_skipped"])' \
    "$work/$name.json" "$work/$name.time"
}

echo "sluice: $sluice"
avx512=$(grep -q avx512f /proc/cpuinfo && echo "with AVX-512" || echo "without AVX-512")
echo "CPU: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo) (family $(awk -F': ' '/cpu family/ {print $2; exit}' /proc/cpuinfo) model $(awk -F': ' '/^model\t/ {print $2; exit}' /proc/cpuinfo), $avx512), $(nproc) cores; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "corpus: $objects text files, $bytes bytes; moto S3 on loopback, list_page_size 1000 (the default)"
printf '%-3s %-16s %8s %9s %8s %8s | %5s %6s %5s %8s %6s | %s\n' rep run wall_s upserted docs/s MB/s LIST GET HEAD tagging other "sluice's own count"
declare -a folder_tp s3_tp noop_wall prune_wall folder_noop_wall
for ((r = 1; r <= repeats; r++)); do
  rm -rf "$work/state-folder" "$work/index-folder" "$work/state-s3" "$work/index-s3"
  for variant in folder s3 noop prune folder-noop; do
    read -r l0 g0 h0 t0 o0 _ < <(stats)
    case $variant in
    folder) read -r wall up skip < <(timed "folder-$r" Pipelines/default.yaml --source "$work/corpus" --state "$work/state-folder" --set "sink.path=$work/index-folder") ;;
    s3) read -r wall up skip < <(timed "s3-$r" "${s3[@]}" --state "$work/state-s3" --set "sink.path=$work/index-s3") ;;
    noop) read -r wall up skip < <(timed "noop-$r" "${s3[@]}" --state "$work/state-s3" --set "sink.path=$work/index-s3") ;;
    prune) read -r wall up skip < <(timed "prune-$r" "${s3[@]}" --state "$work/state-s3" --set "sink.path=$work/index-s3" --prune) ;;
    folder-noop) read -r wall up skip < <(timed "folder-noop-$r" Pipelines/default.yaml --source "$work/corpus" --state "$work/state-folder" --set "sink.path=$work/index-folder") ;;
    esac
    read -r l1 g1 h1 t1 o1 _ < <(stats)
    own=$(grep -o 'sluice-source-requests=.* retried' "$work/$variant-$r.err" | tail -1 | cut -d= -f2- || true)
    [[ $variant == folder* ]] && own="-"
    docs=$(awk -v n="$objects" -v w="$wall" 'BEGIN {printf "%.0f", n / w}')
    mbs=$(awk -v b="$bytes" -v w="$wall" 'BEGIN {printf "%.2f", b / 1e6 / w}')
    printf '%-3s %-16s %8s %9s %8s %8s | %5s %6s %5s %8s %6s | %s\n' "$r" "$variant" "$wall" "$up" "$docs" "$mbs" \
      $((l1 - l0)) $((g1 - g0)) $((h1 - h0)) $((t1 - t0)) $((o1 - o0)) "$own"
    case $variant in
    folder) folder_tp+=("$docs") ;;
    s3) s3_tp+=("$docs") ;;
    noop)
      noop_wall+=("$wall")
      [[ $up == 0 && $((g1 - g0 + h1 - h0 + t1 - t0 + o1 - o0)) == 0 ]] \
        || echo "bench-s3-source: the no-op run upserted $up documents or made requests beyond the listing" >&2
      ;;
    prune) prune_wall+=("$wall") ;;
    folder-noop) folder_noop_wall+=("$wall") ;;
    esac
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
mf=$(median "${folder_tp[@]}")
ms=$(median "${s3_tp[@]}")
echo "medians over $repeats: first load from the folder $mf docs/s, from S3 $ms docs/s," \
  "ratio S3/folder $(awk -v s="$ms" -v f="$mf" 'BEGIN {printf "%.2f", s / f}');" \
  "no-op run from S3 $(median "${noop_wall[@]}") s, with --prune $(median "${prune_wall[@]}") s," \
  "from the folder $(median "${folder_noop_wall[@]}") s"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
