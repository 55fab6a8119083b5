package reviewctx

// Source names (the per-source completeness keys of the store and receipt v8).
const (
	SourceMetadata    = "merge_request_metadata"
	SourceDiscussions = "forge_discussions"
	SourceRemediation = "remediation_threads"
	SourceCI          = "ci_outcomes"
	SourceReferences  = "references"
)

// Completeness is the closed per-source state. Hitting a limit never relabels a source
// complete; a degraded source can never prove that no record exists.
type Completeness string

// Completeness values.
const (
	// Complete: a stable snapshot read twice with identical identity and digest, nothing
	// omitted (zero selected records is still complete).
	Complete Completeness = "complete"
	// Partial: admitted records are stable but something was omitted (a bound, a declared
	// next page, unsupported notes, a malformed item, a missing check, an ambiguous result).
	Partial Completeness = "partial"
	// Mutated: the two reads disagreed; nothing from the source is admitted.
	Mutated Completeness = "mutated"
	// Unavailable: the source could not be read (transport, status, hostile frame, budget).
	Unavailable Completeness = "unavailable"
	// DLPRejected: the filter pipeline rejected at least one selected record of the source.
	DLPRejected Completeness = "dlp_rejected"
)

// SourceState is one source's completeness as committed to the store.
type SourceState struct {
	Source       string       `json:"source"`
	Required     bool         `json:"required"`
	Completeness Completeness `json:"completeness"`
	Records      int          `json:"records"`
	Omitted      int          `json:"omitted"`
	// Reasons are closed codes (see docs/review-context.md), sorted unique.
	Reasons []string `json:"reasons"`
}

// worse returns the more degraded of two states (complete < partial < unavailable <
// mutated < dlp_rejected); DLP rejection dominates because it blocks approval.
func worse(a, b Completeness) Completeness {
	rank := map[Completeness]int{Complete: 0, Partial: 1, Unavailable: 2, Mutated: 3, DLPRejected: 4}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
