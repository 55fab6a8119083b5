#!/usr/bin/env bash
# Pre-script for triage.yml: skip the agent when the issue or pull request carries the opt-out
# label (SKIP_LABEL, default "no-agent"). The labels come from the event that started the run:
# the payload Forgejo's runner writes to FORGEJO_EVENT_PATH (also GITHUB_EVENT_PATH), as
# issue.labels or pull_request.labels. An event without labels proceeds. Protocol:
# docs/prescript.md.
set -euo pipefail
label="${SKIP_LABEL:-no-agent}"
event="${FORGEJO_EVENT_PATH:-${GITHUB_EVENT_PATH:?run me in a Forgejo Actions job}}"
if jq -e --arg l "$label" '[(.issue.labels // []), (.pull_request.labels // [])] | add | map(.name) | index($l) != null' "$event" >/dev/null; then
  echo "labelled ${label}: skipping"
  if [ -n "${FULLSEND_PRESCRIPT_OUTPUT:-}" ]; then
    { echo "skipped=true"; echo "reason=labelled ${label}"; } >>"${FULLSEND_PRESCRIPT_OUTPUT}"
  fi
else
  echo "not labelled ${label}: proceeding"
fi
