#!/usr/bin/env bash
# Stand-in agent for examples/github/triage.yml: it shows what forgectx hands over. Replace the
# last line with your agent runtime. Everything under FORGECTX_CONTEXT_DIR is untrusted,
# filtered forge data (read-only); FORGECTX_EVENT_EXCERPT is the distilled triggering event.
set -euo pipefail
ctx="${FORGECTX_CONTEXT_DIR:?run me from forgectx run}"
echo "records: $(jq '.records | length' "$ctx/index.json"), gaps: $(jq -c '[.gaps[] | "\(.scope)/\(.code)"]' "$ctx/index.json")"
echo "earlier runs: $(jq '.runs | length' "$ctx/history/agent-runs.json")"
echo "event: $(jq -r '.event // "none"' <<<"${FORGECTX_EVENT_EXCERPT:-{\}}")"
# my-agent --context "$ctx" --timeline "$ctx/views/timeline.order" --event "$FORGECTX_EVENT_EXCERPT"
