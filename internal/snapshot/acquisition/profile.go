package acquisition

// Profile is the collection profile without admission: which sources to collect and the
// bounds (collection.json minus admission.human_min_role, which the assembler derives from the
// agent category). Adapters read it to know what to fetch (sources, which logs, the
// pre-decode max_source_bytes cap); the assembler validates it (entity-kind rules) before any
// fetch and serialises it into collection.json.
type Profile struct {
	EntityKind        string   `json:"entity_kind"`
	IncludedSources   []string `json:"included_sources"`
	RecordSelection   string   `json:"record_selection"`    // oldest or newest
	CheckLogSelection string   `json:"check_log_selection"` // none, failed or all
	Bounds            Bounds   `json:"bounds"`
}

// Bounds are the collection profile's size and count bounds.
type Bounds struct {
	MaxRecordsPerSource    int `json:"max_records_per_source"`
	MaxSourceBytes         int `json:"max_source_bytes"`
	MaxRecordBytes         int `json:"max_record_bytes"`
	MaxLogBytes            int `json:"max_log_bytes"`
	MaxMetadataStringBytes int `json:"max_metadata_string_bytes"`
	MaxLabels              int `json:"max_labels"`
}

// Source kinds of included_sources.
const (
	SourceEntity    = "entity"
	SourceComments  = "comments"
	SourceReviews   = "reviews"
	SourceChecks    = "checks"
	SourceCheckLogs = "check_logs"
	SourceAgentRuns = "agent_runs"
)

// Includes reports whether the profile selects the source kind.
func (p Profile) Includes(source string) bool {
	for _, s := range p.IncludedSources {
		if s == source {
			return true
		}
	}
	return false
}

// LogSelected reports whether check_log_selection selects the log of a check with the given
// mapped conclusion: "failed" means failure, timed_out, action_required or stale (cancelled,
// skipped and neutral are not failed).
func (p Profile) LogSelected(conclusion string) bool {
	if !p.Includes(SourceCheckLogs) {
		return false
	}
	switch p.CheckLogSelection {
	case "all":
		return true
	case "failed":
		switch conclusion {
		case "failure", "timed_out", "action_required", "stale":
			return true
		}
	}
	return false
}
