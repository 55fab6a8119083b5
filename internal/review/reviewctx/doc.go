// Package reviewctx is review-context enrichment, part 1, of the review-context-enrichment
// contract (docs/contracts.md, "Review-context enrichment"; docs/review-context.md): the closed selectors
// (OCR_REVIEW_CONTEXT_MODE, OCR_GITLAB_TARGET_PROTECTION_MODE), the protected policy
// (.opencodereview/review-context-policy.json, ocr.review-context-policy/v1..v3), GitLab
// acquisition read twice, reference recognizers, brokered adapters
// (OCR_REVIEW_CONTEXT_ADAPTERS_JSON, ocr.context-adapter-request/v1 and -response/v1) and the
// private store (ocr.context-store/v2) with its ctx1_ handles.
//
// Everything here fails closed: an input the spec does not define is an error naming the
// field and the rule, never a guess. The store and the broker views are provider-neutral; only
// gitlab*.go know GitLab.
//
// API for part 2 (the MCP server, review run, publication DLP, receipt v8):
//
//	LoadStore(dir) (*Store, error)                      hostile read-back of a committed store
//	(*Store).Lookup(handle, runID, policyDigest, now)   one record by ctx1_ handle, bound-checked
//	(*Store).Sources                                    per-source completeness (Completeness)
//	ParseMarker / FormatMarker                          the toolkit remediation marker
package reviewctx
