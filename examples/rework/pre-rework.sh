#!/usr/bin/env bash
# Harness pre_script: the rework input gate decides whether the implementation agent reworks
# its pull request (docs/rework.md). It maps the gate's decision onto the pre-script output
# protocol v1 itself (--prescript-output): `rework` proceeds; `no_op` and `blocked` skip with
# the reason. No CI-side logic: forgectx run reads the skip like any other pre-script's.
#
# The caller (the workflow that admitted this verification run) provides, through
# pre_script.env:
#   REWORK_TARGET, REWORK_TARGET_SHA256                 the gitea-agent.rework-input/v1 file and its digest
#   REWORK_PROVIDER_CONTRACT, REWORK_PROVIDER_CONTRACT_SHA256
#   REWORK_ACTOR_ID                                     the implementation agent's native user ID
#   REWORK_OUTPUT                                       <admitted-verification-run>/decision.json (must not exist)
#   FORGEJO_API_URL, FORGEJO_TOKEN                      the forge API (…/api/v1) and a read token
set -euo pipefail

if [ -z "${FULLSEND_PRESCRIPT_OUTPUT:-}" ]; then
  # Version-skew guard: without the protocol file a skip cannot be signalled, so the gate
  # fails rather than letting the agent run unconditionally.
  echo "::error::rework gate: FULLSEND_PRESCRIPT_OUTPUT is unset; this runner predates the pre-script output protocol" >&2
  exit 1
fi

exec "${FORGECTX:-forgectx}" rework input-gate \
  --target "${REWORK_TARGET:?}" --target-sha256 "${REWORK_TARGET_SHA256:?}" \
  --provider-contract "${REWORK_PROVIDER_CONTRACT:?}" \
  --provider-contract-sha256 "${REWORK_PROVIDER_CONTRACT_SHA256:?}" \
  --actor-id "${REWORK_ACTOR_ID:?}" \
  --output "${REWORK_OUTPUT:?}" \
  --api-url "${FORGEJO_API_URL:?}" --token-env FORGEJO_TOKEN \
  --prescript-output
