#!/usr/bin/env bash
# Stage what the Dockerfile's `ci` and `prebuilt-ci` targets add to the static forgectx image,
# taken from this Debian system's own packages (busybox-static, bash, git, ca-certificates):
#
#   /busybox/      Debian's static busybox and its applets: the POSIX shell GitLab's runner
#                  needs to start a job, plus id, env, grep, sed, … for job scripts
#   /usr/bin/bash  bash, for pre-scripts and agents written for it
#   /usr/bin/git   git with /usr/lib/git-core (https remotes included)
#   the shared libraries those link (copied from `ldd`, at their merged-/usr paths), a minimal
#   /etc/passwd and /etc/group naming root and the agent's 65532
#
#   scripts/ci-rootfs.sh ROOTFS_DIR
#
# Run it on the target architecture (ldd reads the host's loader). test/ship stages the
# offline `prebuilt-ci` context with it; the release `ci` target runs it in a Debian stage.
set -euo pipefail
dest="${1:?usage: ci-rootfs.sh ROOTFS_DIR}"
busybox="${BUSYBOX:-/bin/busybox}"

die() { echo "ci-rootfs.sh: $*" >&2; exit 1; }
for b in "$busybox" /usr/bin/bash /usr/bin/git; do
  [ -x "$b" ] || die "$b is not installed (Debian: apt-get install -y busybox-static bash git ca-certificates)"
done
# Only a static busybox runs without the libraries copied below.
if ldd "$busybox" >/dev/null 2>&1; then die "$busybox is dynamically linked; install busybox-static"; fi

mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"

# copy_file puts a file at its own path under $dest, dereferenced; /lib, /lib64 and /bin
# paths go under usr/ (merged /usr), which the symlinks below make reachable either way.
copy_file() {
  local rel="${1#/}"
  case "$rel" in lib/* | lib64/* | bin/* | sbin/*) rel="usr/$rel" ;; esac
  [ -e "$dest/$rel" ] && return 0
  mkdir -p "$dest/$(dirname "$rel")"
  cp -L "$1" "$dest/$rel"
}

# copy_elf copies a dynamically linked program's libraries and its loader.
copy_elf() {
  local lib
  while read -r lib; do
    [ -n "$lib" ] && copy_file "$lib"
  done < <(ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
}

mkdir -p "$dest/busybox" "$dest/usr/bin" "$dest/usr/lib" "$dest/usr/lib64" "$dest/usr/sbin" "$dest/etc"
install -m 0755 "$busybox" "$dest/busybox/busybox"
for applet in $("$dest/busybox/busybox" --list); do
  case "$applet" in busybox | bash) ;; *) ln -sf busybox "$dest/busybox/$applet" ;; esac
done
for d in bin lib lib64 sbin; do [ -e "$dest/$d" ] || ln -s "usr/$d" "$dest/$d"; done

copy_file /usr/bin/bash
copy_elf /usr/bin/bash
copy_elf /usr/bin/git
# git's helpers (git-remote-https, …) and templates; symlinks stay links within the
# directory. /usr/bin/git is the same program as git-core/git: a link saves a 4 MB copy.
cp -a /usr/lib/git-core "$dest/usr/lib/"
ln -sf ../lib/git-core/git "$dest/usr/bin/git"
for f in "$dest"/usr/lib/git-core/*; do
  if [ -f "$f" ] && [ ! -L "$f" ] && head -c 4 "$f" | grep -q ELF; then copy_elf "$f"; fi
done
if [ -d /usr/share/git-core/templates ]; then
  mkdir -p "$dest/usr/share/git-core"
  cp -a /usr/share/git-core/templates "$dest/usr/share/git-core/"
fi

# Names for the two identities the image uses (git and ssh look the user up).
printf 'root:x:0:0:root:/root:/usr/bin/bash\nnonroot:x:65532:65532:forgectx agent:/tmp:/busybox/false\n' > "$dest/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$dest/etc/group"
mkdir -p "$dest/root"
chmod 0700 "$dest/root"
