#!/usr/bin/env bash
# Proves the container image's runtime stage without a Docker engine: builds `sluice` as the Dockerfile
# does (release, Swift runtime linked statically), makes a Debian 12 (bookworm) root with debootstrap,
# installs exactly deploy/runtime-packages.txt into it, copies in the binary, the model files and the
# samples as the image lays them out, and runs the default pipeline and a search inside it with chroot.
#
#   scripts/check-runtime-image.sh [ROOT]      (default .build-image/root; needs root, debootstrap, network
#                                               access to the Debian mirror)
#
# Prints the time of each step and exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root="${1:-$PWD/.build-image/root}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
[ "$(id -u)" -eq 0 ] || { echo "check-runtime-image: run as root (debootstrap and chroot)" >&2; exit 1; }
step() { echo "check-runtime-image: $* ($(($(date +%s) - started)) s)" >&2; }
started=$(date +%s)

./scripts/setup.sh run
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}"

for product in sluice sluice-extract-worker; do
  swift build -c release --product $product --static-swift-stdlib --scratch-path .build-image/build 2>&1 | grep -E 'error|Build' || true
done
binary=.build-image/build/release/sluice
worker=.build-image/build/release/sluice-extract-worker
[ -x "$binary" ] && [ -x "$worker" ] || { echo "check-runtime-image: the build failed" >&2; exit 1; }
if ldd "$binary" "$worker" | grep -q 'libswift\|libFoundation'; then
  echo "check-runtime-image: the binaries still link the Swift runtime dynamically" >&2; exit 1
fi
step "built $binary (Swift runtime static)"

cleanup() { mountpoint -q "$root/proc" && umount "$root/proc" || true; }
trap cleanup EXIT
if [ ! -x "$root/usr/bin/apt-get" ]; then
  rm -rf "$root"
  mkdir -p "$root"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
  step "debootstrapped bookworm (minbase) into $root"
fi
packages=$(sed -e 's/#.*//' deploy/runtime-packages.txt | xargs)
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $packages >/dev/null"
step "installed the runtime packages: $packages"

install -D -m 0755 "$binary" "$root/usr/local/bin/sluice"
install -D -m 0755 "$worker" "$root/usr/local/bin/sluice-extract-worker"
rm -rf "$root/usr/share/sluice" "$root/srv/sluice"
mkdir -p "$root/usr/share/sluice" "$root/srv/sluice"
cp -r "$SLUICE_CACHE_DIR/models" "$SLUICE_CACHE_DIR/tiktoken" "$root/usr/share/sluice/"
cp -r samples Pipelines "$root/srv/sluice/"
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"

# As the image runs it: its environment, nothing of this machine's (no Swift toolchain, no -dev package).
in_image() {
  chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \
    SLUICE_CACHE_DIR=/usr/share/sluice OMP_THREAD_LIMIT=1 "$@"
}
rm -rf "$root/srv/sluice/.sluice"
in_image sluice run /srv/sluice/Pipelines/default.yaml --stats-json /srv/sluice/stats.json
grep -q '"documents_failed" *: *0' "$root/srv/sluice/stats.json" || { echo "check-runtime-image: documents failed" >&2; exit 1; }
upserted=$(grep -o '"documents_upserted" *: *[0-9]*' "$root/srv/sluice/stats.json" | grep -o '[0-9]*$')
[ "${upserted:-0}" -gt 0 ] || { echo "check-runtime-image: nothing was upserted" >&2; exit 1; }
in_image sluice search "how do I recover a damaged xz file" -k 3 /srv/sluice/Pipelines/default.yaml
in_image sluice run /srv/sluice/Pipelines/default.yaml --quiet
step "sluice ran the default pipeline in the image's root: $upserted documents upserted, none failed; search answered; a second run exited 0"
