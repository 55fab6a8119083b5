# syntax=docker/dockerfile:1
# The forgectx container image: one static binary (CGO_ENABLED=0), CA certificates, a
# world-writable /tmp, numeric non-root user, no shell, no package manager.
#
# Targets (docs/ship.md):
#   image     (default, release CI) builds the binary from this checkout in a Go stage that
#             runs on the build platform and cross-compiles for TARGETARCH, so a multi-arch
#             build needs no emulation:
#               buildah build --platform linux/amd64,linux/arm64 --manifest forgectx .
#   ci        the image plus a static busybox shell at /busybox, for CI systems that run job
#             scripts inside the image (GitLab's docker executor needs a shell).
#   prebuilt  offline local builds: COPY a root filesystem staged on the host (no base image,
#             no network). scripts/image-rootfs.sh stages it; test/ship builds it with
#               buildah build --storage-driver vfs --isolation chroot --target prebuilt \
#                 -f Dockerfile <staged context>
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
      -ldflags "-s -w -X github.com/forgectx/forgectx/pkg/version.Version=${VERSION}" \
      -o /rootfs/usr/local/bin/forgectx ./cmd/forgectx \
 && mkdir -p /rootfs/etc/ssl/certs /rootfs/tmp \
 && chmod 1777 /rootfs/tmp \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ca-certificates.crt

# The ci target's shell: Debian's statically linked busybox for the target architecture
# (downloaded, not run, so no emulation either).
FROM --platform=$BUILDPLATFORM docker.io/library/golang:${GO_VERSION}-bookworm AS shell
ARG TARGETARCH
RUN dpkg --add-architecture "$TARGETARCH" \
 && apt-get update -qq \
 && apt-get download "busybox-static:${TARGETARCH}" \
 && dpkg-deb -x busybox-static_*.deb /busybox-pkg \
 && mkdir -p /rootfs-ci/busybox \
 && cp /busybox-pkg/bin/busybox /rootfs-ci/busybox/busybox \
 && for applet in sh ash cat cp env grep ls mkdir mv rm sed tee test touch tr; do ln -s busybox "/rootfs-ci/busybox/$applet"; done

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

FROM base AS ci
COPY --from=build /rootfs/ /
COPY --from=shell /rootfs-ci/ /
ENV PATH=/usr/local/bin:/busybox

# The release image (default target).
FROM base AS image
COPY --from=build /rootfs/ /
