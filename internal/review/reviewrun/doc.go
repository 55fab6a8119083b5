// Package reviewrun is the protected review lifecycle of review-context enrichment
// (docs/contracts.md, "Review-context enrichment": the fixed protected lifecycle, receipt v8,
// the manifest and coverage gates, the engine under a fresh owner-only isolated HOME;
// docs/review-context.md, part 2):
//
//  1. capture the target (protection, target SHA, reviewed head) and decide the lifecycle;
//  2. acquire, authorize, normalize, DLP-check and commit the private context store
//     (reviewctx.Acquire; skipped by the constrained unprotected lifecycle);
//  3. assemble and verify the entity-context-snapshot of the merge request through the forge
//     registry (the evidence the built-in MCP server serves);
//  4. run exactly one review with the harness's engine command under a fresh owner-only HOME
//     holding only generated configuration (one MCP server entry: `forgectx mcp` for this run);
//  5. require at least one ocr_toolkit_evidence(action=summary) call;
//  6. remove the session, adapter and context artifacts, then validate and DLP-project the
//     result and attach receipt v8 through one inode-checked atomic replacement — termination
//     is deferred across both;
//  7. post the sticky summary note and one discussion per finding (with the remediation
//     marker) and approve only when OCR_AUTO_APPROVE=true and Eligible says so.
//
// Run is the entry point; Receipt, ParseReceipt and Eligible are its value-free contracts.
package reviewrun
