#!/usr/bin/env bash
# circuit-breaker.sh: a hard failure a human should act on (protocol "Hard-failure
# diagnostics"). When ITERATION exceeds CAP the script prints an error annotation and exits 1;
# forgectx reports the annotation's message as the failure diagnostic. Otherwise it proceeds.
set -euo pipefail

ITERATION="${ITERATION:-1}"
CAP="${CAP:-3}"
if [ "${ITERATION}" -gt "${CAP}" ]; then
  echo "::error::Fix iteration ${ITERATION} exceeds bot cap of ${CAP}. Escalating to human."
  exit 1
fi
echo "iteration ${ITERATION} of ${CAP}: proceeding"
