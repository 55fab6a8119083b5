#!/usr/bin/env bash
# Pre-script for triage.yml: skip the agent when the issue or pull request carries the opt-out
# label (SKIP_LABEL, default "no-agent"). It reads the labels from the snapshot forgectx staged
# for it (FORGECTX_SNAPSHOT_DIR/entity/metadata.json: the entity's current, filtered labels,
# fetched from the forge) rather than from the event payload, so a label added after the event
# fired still counts. No sample data: without the snapshot the script fails. Protocol:
# docs/prescript.md.
set -euo pipefail
label="${SKIP_LABEL:-no-agent}"
meta="${FORGECTX_SNAPSHOT_DIR:?run me from forgectx run}/entity/metadata.json"
if jq -e --arg l "$label" '.labels | index($l) != null' "$meta" >/dev/null; then
  echo "labelled ${label}: skipping"
  if [ -n "${FULLSEND_PRESCRIPT_OUTPUT:-}" ]; then
    { echo "skipped=true"; echo "reason=labelled ${label}"; } >> "${FULLSEND_PRESCRIPT_OUTPUT}"
  fi
else
  echo "not labelled ${label}: proceeding"
fi
