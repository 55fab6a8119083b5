#!/usr/bin/env bash
# skip-if-labelled.sh: an offline demonstration of the pre-script output protocol v1 for
# `forgectx prescript` (the README's quick start), not a CI pre-script: its embedded fixture
# always skips. For CI, copy the pre-script of your forge's example directory (examples/github,
# examples/gitlab, examples/forgejo), which reads the real labels.
#
# It skips the agent run when the issue carries an opt-out label (SKIP_LABEL, default
# "no-agent") and proceeds otherwise. Labels come from ISSUE_LABELS (comma-separated), which a
# workflow sets from the event, e.g. in GitHub Actions:
#
#   env:
#     ISSUE_LABELS: ${{ join(github.event.issue.labels.*.name, ',') }}
#
# Without ISSUE_LABELS it decides from an embedded fixture (a sample issue labelled
# "bug,no-agent,priority/low"), so `forgectx prescript -- examples/prescript/skip-if-labelled.sh`
# runs offline, with no token, and skips.
#
# It guards on FULLSEND_PRESCRIPT_OUTPUT (protocol "Version skew"): under an older runner that
# does not set it, the script still succeeds and prints its decision, and the run proceeds.
set -euo pipefail

skip_label="${SKIP_LABEL:-no-agent}"
if [ -n "${ISSUE_LABELS+set}" ]; then
  labels="${ISSUE_LABELS}"
  source="ISSUE_LABELS"
else
  labels="bug,no-agent,priority/low" # embedded fixture: the labels of a sample issue (number 42)
  source="embedded fixture"
fi

# Only the first line counts: a label can never contain a newline, so anything after one is
# not a label list we trust.
IFS=',' read -r -a list <<<"${labels}" || true
matched=""
for label in "${list[@]+"${list[@]}"}"; do
  label="${label#"${label%%[![:space:]]*}"}" # trim leading blanks
  label="${label%"${label##*[![:space:]]}"}" # trim trailing blanks
  if [ "${label}" = "${skip_label}" ]; then
    matched="${label}"
    break
  fi
done

# emit appends key=value lines to the protocol's output file, when there is one.
emit() {
  if [ -n "${FULLSEND_PRESCRIPT_OUTPUT:-}" ]; then
    printf '%s\n' "$@" >>"${FULLSEND_PRESCRIPT_OUTPUT}"
  fi
}

if [ -n "${matched}" ]; then
  echo "decision: skip: the issue is labelled '${matched}' (labels from ${source})"
  emit "skipped=true" \
    "reason=the issue is labelled ${matched}" \
    "skip_if_labelled_label=${matched}"
else
  echo "decision: proceed: no '${skip_label}' label (labels from ${source})"
  emit "skipped=false"
fi
