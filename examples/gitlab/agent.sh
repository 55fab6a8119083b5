#!/usr/bin/env bash
# Stand-in agent for triage.yml: it shows what forgectx hands an agent and proves the contract,
# without printing any snapshot content (entity, comment and review bodies stay out of the job
# log). It uses only what the forgectx -ci image has (bash, busybox). Replace the last line with
# your agent runtime; an agent CLI the image lacks needs an image built FROM the -ci image
# (docs/ship.md, "GitLab").
set -euo pipefail
ctx="${FORGECTX_CONTEXT_DIR:?run me from forgectx run}"
echo "agent: snapshot of $(find "$ctx" -type f | wc -l | tr -d ' ') files"
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
