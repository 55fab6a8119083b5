#!/usr/bin/env bash
# Pre-script for examples/github/triage.yml: skip the agent when the issue or pull request
# carries the opt-out label (SKIP_LABEL, default "no-agent"). It decides from the snapshot
# forgectx staged for it (FORGECTX_SNAPSHOT_DIR: filtered, bounded labels), not from the event,
# so a label added after the event fired still counts. Protocol: docs/prescript.md.
set -euo pipefail
label="${SKIP_LABEL:-no-agent}"
meta="${FORGECTX_SNAPSHOT_DIR:?run me from forgectx run}/entity/metadata.json"
if jq -e --arg l "$label" '.labels | index($l) != null' "$meta" >/dev/null; then
  echo "labelled ${label}: skipping"
  if [ -n "${FULLSEND_PRESCRIPT_OUTPUT:-}" ]; then
    { echo "skipped=true"; echo "reason=labelled ${label}"; } >> "${FULLSEND_PRESCRIPT_OUTPUT}"
  fi
fi
