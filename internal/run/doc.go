// Package run is the `forgectx run` lifecycle (docs/run.md): one CI step that decides whether
// the agent should run, hands it a verified read-only snapshot, runs it, and reports on the
// forge. It composes the other packages and implements no spec rule of its own:
//
//   - entity-context-snapshot v1, "Lifecycle and access" (scavenging, host tree outside the
//     workspace, agent-immutable copy, cleanup on every controlled exit — internal/snapshot/stage) and
//     "Canonical bytes" (the retained root index digest compared after the pre-script, the copy
//     made from the verified bytes — stage.Seal);
//   - "Relationships, history, and collection profiles" for receipts: every run posts one
//     immutable receipt (internal/status) whose input_revision is the SHA-256 of the index.json bytes
//     it consumed, read back by the next snapshot's agent_runs source
//     (github.ReceiptsFromCommentsBy: only receipts by forgectx's own comment identity are read,
//     others counted as authorization_failed), admitted only for registered bots;
//   - pre-script output v1 (pkg/prescript) and its "CI relay" section (pkg/cirelay).
//
// The agent never receives a forge credential (harness.IsForgeCredentialName, refused by name
// and withheld by value) or a registered secret. A panic in any phase is an internal failure
// that still finishes the status comment and receipt and removes every tree.
//
// Run is the entry point; Reconcile finalises a status comment a killed job left started.
// Exit codes: 0 success or skip, 1 failure, cancellation or time-out, 2 configuration error.
package run
