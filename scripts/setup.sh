#!/usr/bin/env bash
# Installs, idempotently, every Debian package Sluice needs to build, run and test.
# Safe to run again: it only calls apt-get when something is missing.
set -euo pipefail

PACKAGES=(
  pkg-config
  libcurl4-openssl-dev      # HTTP (remote embedders and stores)
  libpoppler-glib-dev       # PDF text and rendering
  libtesseract-dev          # OCR
  tesseract-ocr-eng         # OCR: English language data
  liblmdb-dev               # checkpoints, embedding cache, local store
  libxxhash-dev             # XXH3-128 content and chunk hashes
  python3                   # loopback HTTP server in the HTTP client's tests
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

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: the Swift toolchain (6.0 or later) is required: https://www.swift.org/install/linux/" >&2
  exit 1
fi
