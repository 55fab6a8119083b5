package acquisition

// Receipt is one run receipt's machine-readable fields in the order of a
// history/agent-runs.json run (entity-context-snapshot v1, history): the one receipt type.
// internal/status renders and parses it (status.Receipt is this type) and the snapshot assembler
// writes it into agent-runs.json; AgentRun is the same fields as read back from a forge, with
// the author who posted it (which admission needs and the tree does not carry).
type Receipt struct {
	ID                 string   `json:"id"`
	Agent              string   `json:"agent"`
	Status             string   `json:"status"`
	InputRevision      string   `json:"input_revision"`
	InputHeadSHA       string   `json:"input_head_sha,omitempty"`
	ResultRecordKeys   []string `json:"result_record_keys"`
	ResultingCommitSHA string   `json:"resulting_commit_sha,omitempty"`
	StartedAt          string   `json:"started_at,omitempty"`
	CompletedAt        string   `json:"completed_at"`
}
