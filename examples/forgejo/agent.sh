#!/usr/bin/env bash
# Stand-in agent for triage.yml in this directory: it shows what forgectx hands an agent and
# proves the contract, without printing any snapshot content (entity, comment and review bodies
# stay out of the job log). Replace it with your agent runtime (examples/github/forgectx-claude.yml
# runs Claude Code). Everything under FORGECTX_CONTEXT_DIR is untrusted, filtered forge data;
# FORGECTX_EVENT_EXCERPT is the distilled triggering event.
set -euo pipefail
ctx="${FORGECTX_CONTEXT_DIR:?run me from forgectx run}"
echo "records: $(jq '.records | length' "$ctx/index.json"), gaps: $(jq -c '[.gaps[] | "\(.scope)/\(.code)"]' "$ctx/index.json")"
echo "earlier runs: $(jq '.runs | length' "$ctx/history/agent-runs.json")"
# The excerpt's containers say what happened (docs/distill.md: an event with a rule of its own
# carries no "event" key; "action" is there when it adds something).
echo "event: $(jq -r 'del(.event, .action) | keys_unsorted | join(",") | if . == "" then "none" else . end' <<<"${FORGECTX_EVENT_EXCERPT:-{\}}")"
# The copy is root-owned and read-only; the agent runs unprivileged and cannot change it.
if (: >"$ctx/agent-was-here") 2>/dev/null; then
  echo "agent: the snapshot copy is WRITABLE"
  exit 1
fi
echo "agent: uid $(id -u), the snapshot copy is read-only"
# Names only, never values: the forge token is not among them (harness agent.env decides).
echo "agent: environment: $(env | sed 's/=.*//' | LC_ALL=C sort | tr '\n' ' ')"
if [ -n "${ANTHROPIC_API_KEY:-}" ]; then echo "agent: a model API key is set"; else echo "agent: no model API key"; fi
# my-agent --context "$ctx" --timeline "$ctx/views/timeline.order" --event "$FORGECTX_EVENT_EXCERPT"
