#!/usr/bin/env bash
# Build (or reuse) the pinned Gitea server the real-forge tests (test/realforge) run against.
#
#   scripts/gitea.sh [VERSION]  # prints the binary's path on the last line of stdout
#
# VERSION is any Gitea release the Go module proxy serves (1.25.5, 1.27.3); without it
# $GITEA_VERSION, else 1.25.5 (the suite's default, test/realforge/giteaserver.DefaultVersion).
#
# Gitea is fetched from the Go module proxy (it is a Go module; nothing else is downloaded) and
# built from source with CGO for sqlite. Its go.mod has replace directives, which `go build` only
# honours in the main module, so the build runs inside a writable copy of the module directory.
# The result is cached by version:
#
#   $CACHE/gitea/src                      writable copy of the module (the build directory)
#   $CACHE/gitea/<version>/gitea          the binary
#   $CACHE/gitea/<version>/{templates,options,public}   beside it (Gitea reads them at run time
#                                         when built without the bindata tag)
#   $CACHE/gitea/build.log                the last build's output
#
# with CACHE=${FORGECTX_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forgectx-test}. A warm cache
# (binary present for the version) is never rebuilt. A cold build takes 8-18 minutes of 2 cores.
# Concurrent callers are serialised with flock, so a second caller waits for the first build
# instead of starting another one.
set -euo pipefail

if [ $# -gt 1 ]; then echo "usage: scripts/gitea.sh [VERSION]" >&2; exit 2; fi
GITEA_VERSION="${1:-${GITEA_VERSION:-1.25.5}}"
GITEA_VERSION="${GITEA_VERSION#v}"
case "$GITEA_VERSION" in
  *[!0-9.]* | "" | .* | *. | *..*) echo "gitea.sh: VERSION must be a release like 1.27.3, not '$GITEA_VERSION'" >&2; exit 2 ;;
esac
cache="${FORGECTX_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forgectx-test}/gitea"
out="$cache/v$GITEA_VERSION"
bin="$out/gitea"

log() { echo "gitea.sh: $*" >&2; }

ready() { [ -x "$bin" ] && [ -d "$out/templates" ] && [ -d "$out/options" ] && [ -d "$out/public" ]; }

# copy_assets DIR: templates/ options/ public/ from a module tree beside the binary.
copy_assets() {
  for d in templates options public; do
    rm -rf "$out/$d.tmp"
    cp -R "$1/$d" "$out/$d.tmp"
    chmod -R u+w "$out/$d.tmp"
    rm -rf "${out:?}/$d"
    mv "$out/$d.tmp" "$out/$d"
  done
}

if ready; then
  log "reusing cached Gitea $GITEA_VERSION ($bin)"
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { log "go not found"; exit 1; }
if [ "$(go env CGO_ENABLED)" != 1 ] && [ "${CGO_ENABLED:-}" != 1 ]; then
  log "CGO is not available (go env CGO_ENABLED != 1): cannot build Gitea with sqlite"; exit 3
fi
command -v "$(go env CC)" >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || { log "no C compiler: cannot build Gitea with sqlite"; exit 3; }

mkdir -p "$cache"
exec 9>"$cache/.lock"
log "waiting for the build lock ($cache/.lock)"
flock 9
if ready; then # another caller built it while we waited
  log "reusing cached Gitea $GITEA_VERSION ($bin)"
  echo "$bin"
  exit 0
fi

start=$(date +%s)
mod="code.gitea.io/gitea@v$GITEA_VERSION"
log "downloading $mod from the Go module proxy"
# Outside any module, so the project's go.mod is never touched.
dir=$(cd "$cache" && GOFLAGS='' go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir" ]; then log "go mod download did not report a module directory"; exit 1; fi

if [ -x "$bin" ]; then # a binary without its assets (an interrupted copy): never rebuild for that
  log "binary present, copying templates/ options/ public/ beside it"
  copy_assets "$dir"
  echo "$bin"
  exit 0
fi

src="$cache/src"
if [ ! -f "$src/.version" ] || [ "$(cat "$src/.version")" != "$GITEA_VERSION" ]; then
  log "copying the module into $src (the module cache is read-only)"
  rm -rf "$src"
  mkdir -p "$src"
  cp -R "$dir/." "$src/"
  chmod -R u+w "$src"
  echo "$GITEA_VERSION" >"$src/.version"
fi

mkdir -p "$out"
log "building Gitea $GITEA_VERSION (cold: 8-18 minutes on 2 cores; log: $cache/build.log)"
(
  cd "$src"
  # No bindata tag: templates/options/public are read from beside the binary (copied below).
  CGO_ENABLED=1 go build -trimpath -tags "sqlite sqlite_unlock_notify" \
    -ldflags "-X main.Version=$GITEA_VERSION" -o "$out/gitea.tmp" . >"$cache/build.log" 2>&1
) &
pid=$!
# Progress while the build runs: elapsed time and the number of log lines (downloads).
while kill -0 "$pid" 2>/dev/null; do
  sleep 30
  kill -0 "$pid" 2>/dev/null || break
  log "still building: $(( $(date +%s) - start ))s elapsed, $(wc -l <"$cache/build.log") lines in build.log"
done
if ! wait "$pid"; then
  log "build failed; last lines of $cache/build.log:"
  tail -n 30 "$cache/build.log" >&2
  rm -f "$out/gitea.tmp"
  exit 1
fi

copy_assets "$src"
mv "$out/gitea.tmp" "$bin" # last: the binary's presence means the cache entry is complete
log "built Gitea $GITEA_VERSION in $(( $(date +%s) - start ))s"
echo "$bin"
