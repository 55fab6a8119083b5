#!/usr/bin/env bash
# Check that the release named in the VERSION file is the one the docs install and, given a
# tag, the one being released:
#
#   scripts/check-version.sh [TAG]
#
# VERSION holds one line, vX.Y.Z: the release every install path in README.md, docs/,
# examples/, templates/ and action.yml names (the action's `@vX.Y.Z` and `version:` input, the
# component's `@X.Y.Z`, the image tags, `go install …@vX.Y.Z`, the archive names). The release
# workflow runs this with the pushed tag before it builds anything, so a release whose docs name
# another version is never published. Exit 0 when all agree, 1 with one line per disagreement.
set -euo pipefail
cd "$(dirname "$0")/.."

fail=0
version="$(cat VERSION 2>/dev/null || true)"
if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "check-version.sh: VERSION: must be one line vX.Y.Z, got '$version'" >&2
  exit 1
fi
tag="${1:-}"
if [ -n "$tag" ] && [ "$tag" != "$version" ]; then
  echo "check-version.sh: tag $tag is not the VERSION file's $version: bump VERSION (and the docs) in the tagged commit" >&2
  fail=1
fi

# Every place a release is named, as NAME@X.Y.Z, :vX.Y.Z, _vX.Y.Z_, version: vX.Y.Z, …
semver='v?[0-9]+\.[0-9]+\.[0-9]+'
patterns=(
  "forgectx/forgectx(/[a-z-]+)?@${semver}"
  "forgectx/forgectx:${semver}"
  "forgectx_${semver}_"
  "cmd/forgectx@${semver}"
  "forgectx/forgectx/${semver}/"
  "(version: |ref: |VERSION=)v[0-9]+\.[0-9]+\.[0-9]+"
  "--branch ${semver}"
  "@[0-9]+\.[0-9]+\.[0-9]+ → ${semver}"
)
files=(README.md action.yml)
while IFS= read -r f; do files+=("$f"); done < <(find docs examples templates -type f \( -name '*.md' -o -name '*.yml' -o -name '*.yaml' -o -name '*.sh' \) -not -path 'docs/normative/*' | LC_ALL=C sort)
for p in "${patterns[@]}"; do
  while IFS=: read -r f line match; do
    [ -n "$match" ] || continue
    while read -r v; do
      if [ "v$v" != "$version" ]; then
        echo "check-version.sh: $f:$line: '$match' names v$v, not the VERSION file's $version" >&2
        fail=1
      fi
    done < <(grep -oE '[0-9]+\.[0-9]+\.[0-9]+' <<<"$match")
  done < <(grep -HnoE -- "$p" "${files[@]}" || true)
done
exit "$fail"
