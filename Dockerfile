# syntax=docker/dockerfile:1
# The forgectx container image: one static binary (CGO_ENABLED=0), CA certificates, a
# world-writable /tmp, numeric non-root user, no shell, no package manager.
#
# Targets (docs/ship.md):
#   image        (default, release CI) builds the binary from this checkout in a Go stage that
#                runs on the build platform and cross-compiles for TARGETARCH, so a multi-arch
#                build needs no emulation:
#                  buildah build --platform linux/amd64,linux/arm64 --manifest forgectx .
#   ci           the image plus what CI job scripts, pre-scripts and typical agents need —
#                Debian's static busybox (the runner's POSIX shell), bash, git, CA certificates
#                (scripts/ci-rootfs.sh) — running as root, so forgectx can make the agent's
#                snapshot copy root-owned and read-only and start the agent as 65532 (the
#                GitLab component's defaults). Its Debian stage runs on the target platform
#                (emulated for a foreign architecture).
#   prebuilt     offline local builds: COPY a root filesystem staged on the host (no base image,
#                no network). scripts/image-rootfs.sh stages it; test/ship builds it with
#                  buildah build --storage-driver vfs --isolation chroot --target prebuilt \
#                    -f Dockerfile <staged context>
#   prebuilt-ci  the same for the ci image: scripts/image-rootfs.sh, then
#                scripts/ci-rootfs.sh <staged context>/rootfs on a Debian host
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM docker.io/library/golang:${GO_VERSION}-bookworm AS build
# TARGETOS/TARGETARCH are set by buildah and BuildKit for each --platform; unset, Go builds for
# the build host.
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/forgectx/forgectx/internal/platform/version.Version=${VERSION}" \
      -o /rootfs/usr/local/bin/forgectx ./cmd/forgectx \
 && mkdir -p /rootfs/etc/ssl/certs /rootfs/tmp \
 && chmod 1777 /rootfs/tmp \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ca-certificates.crt

# The ci target's additions (busybox, bash, git and their libraries), staged from Debian's own
# packages by the same script test/ship runs on its Debian host for prebuilt-ci.
FROM docker.io/library/debian:bookworm-slim AS cirootfs
COPY scripts/ci-rootfs.sh /ci-rootfs.sh
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bash busybox-static ca-certificates git \
 && bash /ci-rootfs.sh /rootfs-ci

# Everything the image is, except where its files come from.
FROM scratch AS base
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="forgectx" \
      org.opencontainers.image.description="Hand Git-forge context to AI agents in CI: pre-script gate, filtered entity-context snapshots, status comments and receipts." \
      org.opencontainers.image.source="https://github.com/forgectx/forgectx" \
      org.opencontainers.image.url="https://github.com/forgectx/forgectx" \
      org.opencontainers.image.documentation="https://github.com/forgectx/forgectx/blob/main/docs/ship.md" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    HOME=/tmp \
    TMPDIR=/tmp
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["/usr/local/bin/forgectx"]
CMD ["--help"]

# Offline local builds: the context is a staged root filesystem (rootfs/usr/local/bin/forgectx,
# rootfs/etc/ssl/certs/ca-certificates.crt, rootfs/tmp mode 1777).
FROM base AS prebuilt
COPY rootfs/ /

# Offline ci image: the staged context's rootfs also holds scripts/ci-rootfs.sh's output.
# USER 0: forgectx itself runs as root (ownership mode needs it: the agent's copy is root-owned
# and read-only, and the agent is started as 65532 with every capability dropped at exec);
# bind-mount mode would need CAP_SYS_ADMIN, which GitLab's Docker executor does not grant.
FROM base AS prebuilt-ci
COPY rootfs/ /
USER 0:0
ENV PATH=/usr/local/bin:/usr/bin:/busybox

FROM base AS ci
COPY --from=build /rootfs/ /
COPY --from=cirootfs /rootfs-ci/ /
# USER 0: as for prebuilt-ci above.
USER 0:0
ENV PATH=/usr/local/bin:/usr/bin:/busybox

# The release image (default target).
FROM base AS image
COPY --from=build /rootfs/ /
