#!/usr/bin/env bash
# neutral-exit-78.sh: the exit-78 form of a skip (protocol "Exit code 78 — neutral skip").
#
# Exit 78 skips without touching FULLSEND_PRESCRIPT_OUTPUT; the last non-empty stdout line
# becomes the skip reason. OPEN_ISSUES (default 0) stands in for a query a real script would
# make; with any open issue the script exits 0 and the run proceeds.
set -euo pipefail

if [ "${OPEN_ISSUES:-0}" -eq 0 ]; then
  echo "No issues need scoring"
  exit 78
fi
echo "${OPEN_ISSUES} issue(s) need scoring: proceeding"
