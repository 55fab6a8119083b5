#!/usr/bin/env bash
# Stage the build context of the Dockerfile's `prebuilt` target from a binary built on the
# host, so the image builds offline (no base image, no module download):
#
#   CGO_ENABLED=0 go build -trimpath -o /tmp/forgectx ./cmd/forgectx
#   scripts/image-rootfs.sh /tmp/forgectx /tmp/ctx
#   buildah build --target prebuilt -f Dockerfile -t forgectx:local /tmp/ctx
#
# The context holds rootfs/usr/local/bin/forgectx, rootfs/etc/ssl/certs/ca-certificates.crt
# (the host's bundle, or $CA_BUNDLE) and rootfs/tmp (mode 1777).
set -euo pipefail
bin="${1:?usage: image-rootfs.sh BINARY CONTEXT_DIR}"
ctx="${2:?usage: image-rootfs.sh BINARY CONTEXT_DIR}"
ca="${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
[ -f "$bin" ] || { echo "image-rootfs.sh: binary: $bin does not exist" >&2; exit 1; }
[ -f "$ca" ] || { echo "image-rootfs.sh: CA bundle: $ca does not exist (set CA_BUNDLE)" >&2; exit 1; }
if command -v file >/dev/null 2>&1 && file "$bin" | grep -q 'dynamically linked'; then
  echo "image-rootfs.sh: binary: $bin is dynamically linked; build it with CGO_ENABLED=0" >&2; exit 1
fi
mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp"
install -m 0755 "$bin" "$ctx/rootfs/usr/local/bin/forgectx"
install -m 0644 "$ca" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
chmod 1777 "$ctx/rootfs/tmp"
