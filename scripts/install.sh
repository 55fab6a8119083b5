#!/usr/bin/env bash
# Install the forgectx binary into a directory, for the composite action (action.yml), CI jobs
# and people. Two modes:
#
#   install.sh --version vX.Y.Z [--sha256 HEX] [--download-url URL] --bin-dir DIR
#       downloads forgectx_<version>_<os>_<arch>.tar.gz and checksums.txt from the release,
#       checks the archive's SHA-256 against checksums.txt (and against --sha256 when given)
#       and only then unpacks the binary into DIR.
#   install.sh --version source --source-dir DIR --bin-dir DIR
#       builds the binary from a checkout (CGO_ENABLED=0, -trimpath); needs Go on PATH.
#
# It writes only into --bin-dir and a temporary directory it removes. Exit 1 on any failure
# (a checksum mismatch included) with one `install.sh: <what>: <why>` line on stderr.
set -euo pipefail

version="" sha256="" bin_dir="" source_dir=""
download_url="${FORGECTX_DOWNLOAD_URL:-https://github.com/forgectx/forgectx/releases/download}"

die() { echo "install.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --version) version="${2-}"; shift 2 ;;
    --sha256) sha256="${2-}"; shift 2 ;;
    --download-url) download_url="${2-}"; shift 2 ;;
    --bin-dir) bin_dir="${2-}"; shift 2 ;;
    --source-dir) source_dir="${2-}"; shift 2 ;;
    *) die "arguments: unknown argument $1" ;;
  esac
done
[ -n "$bin_dir" ] || die "--bin-dir: required"
[ -n "$version" ] || die "--version: required (vX.Y.Z, latest or source)"
mkdir -p "$bin_dir"

if [ "$version" = "source" ]; then
  [ -n "$source_dir" ] || die "--source-dir: required with --version source"
  command -v go >/dev/null 2>&1 || die "version source: Go is not on PATH (add actions/setup-go before this step)"
  rev="source"
  if [ -n "${FORGECTX_SOURCE_REV:-}" ]; then rev="source-${FORGECTX_SOURCE_REV:0:12}"; fi
  (cd "$source_dir" && CGO_ENABLED=0 go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X github.com/forgectx/forgectx/internal/platform/version.Version=$rev" \
    -o "$bin_dir/forgectx" ./cmd/forgectx) || die "version source: go build failed"
  echo "install.sh: built forgectx from $source_dir into $bin_dir" >&2
  exit 0
fi

case "$version" in
  latest) ;;
  v[0-9]*.[0-9]*.[0-9]*) ;;
  *) die "--version: must be vX.Y.Z, latest or source" ;;
esac
if [ -n "$sha256" ] && ! [[ "$sha256" =~ ^[0-9a-f]{64}$ ]]; then
  die "--sha256: must be 64 lowercase hexadecimal digits"
fi

# The runner's OS and architecture: GitHub's RUNNER_OS/RUNNER_ARCH when set, else uname.
os="${RUNNER_OS:-$(uname -s)}"
case "$os" in
  Linux|linux) os=linux ;;
  macOS|Darwin|darwin) os=darwin ;;
  *) die "runner OS: $os is not supported (Linux and macOS are)" ;;
esac
arch="${RUNNER_ARCH:-$(uname -m)}"
case "$arch" in
  X64|x86_64|amd64) arch=amd64 ;;
  ARM64|aarch64|arm64) arch=arm64 ;;
  *) die "runner architecture: $arch is not supported (amd64 and arm64 are)" ;;
esac

if [ "$version" = "latest" ]; then
  base="${download_url%/download}/latest/download"
else
  base="${download_url}/${version}"
fi

fetch() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl --fail --silent --show-error --location --retry 3 --proto '=https,http' --proto-redir '=https' --output "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget --quiet --tries=3 --output-document="$2" "$1"
  else
    die "download: neither curl nor wget is available"
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    die "verify: neither sha256sum nor shasum is available"
  fi
}

tmp="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/forgectx-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

fetch "$base/checksums.txt" "$tmp/checksums.txt" || die "download: $base/checksums.txt failed"
# For "latest" the archive name carries the resolved version: find it in checksums.txt.
pattern="^[0-9a-f]{64}  forgectx_v[0-9][^ ]*_${os}_${arch}\.tar\.gz$"
[ "$version" = "latest" ] || pattern="^[0-9a-f]{64}  forgectx_${version//./\\.}_${os}_${arch}\.tar\.gz$"
line="$(grep -E "$pattern" "$tmp/checksums.txt" || true)"
[ -n "$line" ] || die "verify: checksums.txt has no entry for ${os}/${arch}"
[ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] || die "verify: checksums.txt has more than one entry for ${os}/${arch}"
want="${line%% *}"
asset="${line##* }"
if [ -n "$sha256" ] && [ "$sha256" != "$want" ]; then
  die "verify: --sha256 does not match the release's checksums.txt for $asset"
fi

fetch "$base/$asset" "$tmp/$asset" || die "download: $base/$asset failed"
got="$(sha256_of "$tmp/$asset")"
[ "$got" = "$want" ] || die "verify: SHA-256 of $asset is $got, checksums.txt says $want"

tar -xzf "$tmp/$asset" -C "$tmp" forgectx || die "unpack: $asset has no forgectx binary"
install -m 0755 "$tmp/forgectx" "$bin_dir/forgectx" 2>/dev/null || { cp "$tmp/forgectx" "$bin_dir/forgectx" && chmod 0755 "$bin_dir/forgectx"; }
echo "install.sh: installed $asset (sha256 $got) into $bin_dir" >&2
