# syntax=docker/dockerfile:1
# Sluice as a container image: `docker build -t sluice .`
#
# Stage 1 builds `sluice`, `sluice-extract-worker` and `sluice-serve` (which `sluice serve` runs) with the
# Swift toolchain on Debian 12 (bookworm), with the Swift runtime and Foundation linked statically, and
# fetches the model files. Stage 2 is a slim bookworm with only the
# runtime libraries (deploy/runtime-packages.txt), the binary and the model files.
# scripts/check-runtime-image.sh proves stage 2's package list without a Docker engine (debootstrap +
# chroot), since none runs on the machines this project is developed on.

ARG SWIFT_IMAGE=swift:6.1-bookworm
FROM ${SWIFT_IMAGE} AS build
WORKDIR /src
COPY . .
# The Debian build packages and the model files (scripts/setup.sh run), then a release build.
RUN SLUICE_CACHE_DIR=/opt/sluice ./scripts/setup.sh run \
 && swift build -c release --product sluice --static-swift-stdlib \
 && swift build -c release --product sluice-extract-worker --static-swift-stdlib \
 && swift build -c release --product sluice-serve --static-swift-stdlib \
 && install -D -m 0755 "$(swift build -c release --show-bin-path)/sluice" /out/usr/local/bin/sluice \
 && install -D -m 0755 "$(swift build -c release --show-bin-path)/sluice-extract-worker" \
      /out/usr/local/bin/sluice-extract-worker \
 && install -D -m 0755 "$(swift build -c release --show-bin-path)/sluice-serve" /out/usr/local/bin/sluice-serve \
 && mkdir -p /out/usr/share/sluice \
 && cp -r /opt/sluice/models /opt/sluice/tiktoken /out/usr/share/sluice/

FROM debian:bookworm-slim AS runtime
COPY deploy/runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      $(sed -e 's/#.*//' /tmp/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && useradd --system --create-home --home-dir /var/lib/sluice sluice
COPY --from=build /out/ /
# The model files (all-MiniLM-L6-v2) and the BPE rank files, where sluice looks for them.
ENV SLUICE_CACHE_DIR=/usr/share/sluice \
    OMP_THREAD_LIMIT=1
USER sluice
WORKDIR /var/lib/sluice
ENTRYPOINT ["/usr/local/bin/sluice"]
CMD ["--help"]
