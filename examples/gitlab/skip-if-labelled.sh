#!/bin/sh
# Pre-script for triage.yml: skip the agent when the merge request carries the opt-out label
# (SKIP_LABEL, default "no-agent"). The labels are GitLab's own CI_MERGE_REQUEST_LABELS
# (comma-separated, set on merge request pipelines); on other pipelines there are none and the
# agent proceeds. POSIX sh: it runs in the forgectx -ci image (busybox, bash, git; no jq).
# Protocol: docs/prescript.md.
set -eu
label="${SKIP_LABEL:-no-agent}"
case ",${CI_MERGE_REQUEST_LABELS:-}," in
  *",${label},"*)
    echo "labelled ${label}: skipping"
    if [ -n "${FULLSEND_PRESCRIPT_OUTPUT:-}" ]; then
      { echo "skipped=true"; echo "reason=labelled ${label}"; } >>"${FULLSEND_PRESCRIPT_OUTPUT}"
    fi
    ;;
  *) echo "not labelled ${label}: proceeding" ;;
esac
