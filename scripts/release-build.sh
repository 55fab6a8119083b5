#!/usr/bin/env bash
# Build the release archives and their checksums, as the release workflows do:
#
#   scripts/release-build.sh [vX.Y.Z [OUT_DIR]]
#
# (the version defaults to the VERSION file's; the release workflow passes the tag, which
# scripts/check-version.sh has checked against that file), and
# writes OUT_DIR/forgectx_<version>_<os>_<arch>.tar.gz (one static binary, CGO_ENABLED=0,
# -trimpath, the version linked in) for linux and darwin on amd64 and arm64, and
# OUT_DIR/checksums.txt in sha256sum format, sorted by file name. scripts/install.sh and the
# composite action read exactly these names. Archives are reproducible: fixed file order,
# owner and modification time (the commit time when SOURCE_DATE_EPOCH is unset).
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:-$(cat VERSION)}"
out="${2:-dist}"
[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "release-build.sh: version: must be vX.Y.Z[-pre], got '$version'" >&2; exit 1; }
platforms="${FORGECTX_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
for p in $platforms; do
  os="${p%/*}" arch="${p#*/}"
  name="forgectx_${version}_${os}_${arch}"
  stage="$(mktemp -d)"
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X github.com/forgectx/forgectx/internal/platform/version.Version=${version}" \
    -o "$stage/forgectx" ./cmd/forgectx
  cp LICENSE README.md "$stage/" # the licence ships in every archive: a missing one fails the build
  (cd "$stage" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@${epoch}" \
    -cf - -- * | gzip -n -9 > "$out/$name.tar.gz")
  rm -rf "$stage"
done
(cd "$out" && sha256sum -- forgectx_"${version}"_*.tar.gz | LC_ALL=C sort -k2 > checksums.txt)
cat "$out/checksums.txt"
