package reviewrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// ReceiptSchema is the only receipt version this package writes or reads. There is no
// migration path: v1–v7 are rejected (ErrReceiptVersion), never reinterpreted.
const ReceiptSchema = "ocr.review-receipt/v8"

// receiptMarkerPrefix opens the HTML comment that carries the receipt in the summary note.
const receiptMarkerPrefix = "<!-- " + ReceiptSchema + " "

// UnprotectedLimitation is the static italic line only a fully validated unprotected receipt
// adds to the summary; it does not change result completeness or status.
const UnprotectedLimitation = "_Comment-only review: the target branch is unprotected, so this review used no protected context and cannot approve._"

// Target states and the closed receipt vocabularies.
const (
	TargetProtected   = "protected"
	TargetUnprotected = "unprotected"

	FailedToolAbsent      = "absent"
	FailedToolVerified    = "verified"
	FailedToolInvalid     = "invalid"
	FailedToolConflicting = "conflicting"

	DLPClean               = "clean"
	DLPPrivateSanitized    = "private-sanitized"
	DLPPublicationFiltered = "publication-filtered"

	CleanupComplete = "complete"
	CleanupFailed   = "failed"
)

// ErrReceipt wraps every receipt validation failure; ErrReceiptVersion is an earlier (v1–v7)
// or unknown receipt.
var (
	ErrReceipt        = errors.New("reviewrun: receipt rejected")
	ErrReceiptVersion = errors.New("reviewrun: receipt version not accepted (only " + ReceiptSchema + ")")
)

// ReceiptSource is one source's closed state: completeness, whether it is required, counts.
type ReceiptSource struct {
	Source       string                 `json:"source"`
	Required     bool                   `json:"required"`
	Completeness reviewctx.Completeness `json:"completeness"`
	Records      int                    `json:"records"`
	Omitted      int                    `json:"omitted"`
	Degradations int                    `json:"degradations"`
}

// EvidenceToolUse is the fixed evidence tool-use counters.
type EvidenceToolUse struct {
	Evidence        int `json:"ocr_toolkit_evidence"`
	EvidenceSummary int `json:"ocr_toolkit_evidence_summary"`
	Search          int `json:"ocr_toolkit_evidence_search"`
	Coverage        int `json:"ocr_toolkit_evidence_coverage"`
}

// ContextToolUse is the fixed context tool-use counters (zero outside enriched).
type ContextToolUse struct {
	List int `json:"context_list"`
	Get  int `json:"context_get"`
}

// FailedTool is the closed failed-tool diagnostic state and its optional aggregate (the
// number of failed tool calls; present only when the state is verified).
type FailedTool struct {
	State string `json:"state"`
	Count *int   `json:"count,omitempty"`
}

// PublicationDLP is the publication-DLP result with its closed counts.
type PublicationDLP struct {
	Result   string `json:"result"`
	Retained int    `json:"retained"`
	Omitted  int    `json:"omitted"`
}

// Receipt is receipt v8: closed source/target/policy identities, the actual target state, the
// context mode, per-source completeness and degradation counts, the admitted-mutable state,
// the fixed tool-use counts, the failed-tool diagnostic state, the publication-DLP result and
// the cleanup result — and nothing else (no text, path, provider ID, URL, command, header,
// adapter result or personal data). The field set is closed (docs/schemas/review-receipt-v8).
type Receipt struct {
	SchemaVersion   string          `json:"schema_version"`
	SourceSHA       string          `json:"source_sha"`
	TargetSHA       string          `json:"target_sha"`
	PolicyDigest    string          `json:"policy_digest"`
	TargetState     string          `json:"target_state"`
	ContextMode     reviewctx.Mode  `json:"context_mode"`
	Sources         []ReceiptSource `json:"sources"`
	AdmittedMutable bool            `json:"admitted_mutable"`
	EvidenceTools   EvidenceToolUse `json:"evidence_tools"`
	ContextTools    ContextToolUse  `json:"context_tools"`
	FailedTool      FailedTool      `json:"failed_tool"`
	PublicationDLP  PublicationDLP  `json:"publication_dlp"`
	Cleanup         string          `json:"cleanup"`
}

var (
	reSHA     = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	reDigest  = regexp.MustCompile(`^([0-9a-f]{64})?$`)
	reVersion = regexp.MustCompile(`^ocr\.review-receipt/v([0-9]+)$`)
)

var sourceNames = map[string]bool{
	reviewctx.SourceMetadata: true, reviewctx.SourceDiscussions: true, reviewctx.SourceRemediation: true,
	reviewctx.SourceCI: true, reviewctx.SourceReferences: true,
}

var completenessNames = map[reviewctx.Completeness]bool{
	reviewctx.Complete: true, reviewctx.Partial: true, reviewctx.Mutated: true, reviewctx.Unavailable: true, reviewctx.DLPRejected: true,
}

func receiptErr(field, rule string) error {
	return fmt.Errorf("%w: %s: %s", ErrReceipt, field, rule)
}

// Validate checks every field against its closed vocabulary or bound.
func (r *Receipt) Validate() error {
	if r.SchemaVersion != ReceiptSchema {
		return fmt.Errorf("%w: schema_version", ErrReceiptVersion)
	}
	if !reSHA.MatchString(r.SourceSHA) {
		return receiptErr("source_sha", "must be a lowercase hex Git object ID")
	}
	if !reSHA.MatchString(r.TargetSHA) {
		return receiptErr("target_sha", "must be a lowercase hex Git object ID")
	}
	if !reDigest.MatchString(r.PolicyDigest) {
		return receiptErr("policy_digest", "must be empty or 64 lowercase hex digits")
	}
	switch r.TargetState {
	case TargetProtected:
	case TargetUnprotected:
		if r.ContextMode == reviewctx.ModeEnriched || r.PolicyDigest != "" || len(r.Sources) > 1 {
			return receiptErr("target_state", "unprotected allows only off or metadata, no policy and no source beyond metadata")
		}
	default:
		return receiptErr("target_state", "must be protected or unprotected")
	}
	switch r.ContextMode {
	case reviewctx.ModeOff, reviewctx.ModeMetadata, reviewctx.ModeEnriched:
	default:
		return receiptErr("context_mode", "must be off, metadata or enriched")
	}
	if r.ContextMode == reviewctx.ModeEnriched && r.PolicyDigest == "" {
		return receiptErr("policy_digest", "required in enriched mode")
	}
	if err := r.validateSources(); err != nil {
		return err
	}
	if err := r.validateCounts(); err != nil {
		return err
	}
	switch r.PublicationDLP.Result {
	case DLPClean, DLPPrivateSanitized, DLPPublicationFiltered:
	default:
		return receiptErr("publication_dlp.result", "must be clean, private-sanitized or publication-filtered")
	}
	if r.Cleanup != CleanupComplete && r.Cleanup != CleanupFailed {
		return receiptErr("cleanup", "must be complete or failed")
	}
	return nil
}

func (r *Receipt) validateSources() error {
	if r.Sources == nil {
		return receiptErr("sources", "required (may be empty)")
	}
	seen := map[string]bool{}
	for i, s := range r.Sources {
		p := fmt.Sprintf("sources[%d]", i)
		if !sourceNames[s.Source] || seen[s.Source] {
			return receiptErr(p+".source", "must be a known source, at most once")
		}
		seen[s.Source] = true
		if !completenessNames[s.Completeness] {
			return receiptErr(p+".completeness", "must be complete, partial, mutated, unavailable or dlp_rejected")
		}
		if s.Records < 0 || s.Omitted < 0 || s.Degradations < 0 {
			return receiptErr(p, "counts must not be negative")
		}
	}
	return nil
}

func (r *Receipt) validateCounts() error {
	e, c := r.EvidenceTools, r.ContextTools
	if e.Evidence < 0 || e.EvidenceSummary < 0 || e.Search < 0 || e.Coverage < 0 || c.List < 0 || c.Get < 0 {
		return receiptErr("evidence_tools/context_tools", "counts must not be negative")
	}
	if e.EvidenceSummary > e.Evidence {
		return receiptErr("evidence_tools.ocr_toolkit_evidence_summary", "cannot exceed ocr_toolkit_evidence")
	}
	if r.ContextMode != reviewctx.ModeEnriched && (c.List != 0 || c.Get != 0) {
		return receiptErr("context_tools", "must be zero outside enriched mode")
	}
	switch r.FailedTool.State {
	case FailedToolVerified:
		if r.FailedTool.Count == nil || *r.FailedTool.Count < 1 {
			return receiptErr("failed_tool.count", "required and positive when the state is verified")
		}
	case FailedToolAbsent, FailedToolInvalid, FailedToolConflicting:
		if r.FailedTool.Count != nil {
			return receiptErr("failed_tool.count", "only with the state verified")
		}
	default:
		return receiptErr("failed_tool.state", "must be absent, verified, invalid or conflicting")
	}
	if r.PublicationDLP.Retained < 0 || r.PublicationDLP.Omitted < 0 {
		return receiptErr("publication_dlp", "counts must not be negative")
	}
	return nil
}

// Marshal validates the receipt and returns its RFC 8785 canonical JSON.
func (r *Receipt) Marshal() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return canon.JSON(r)
}

// ParseReceipt decodes one receipt strictly: the schema_version is checked first (v1–v7 and
// unknown versions fail with ErrReceiptVersion), then unknown fields, trailing data and every
// closed vocabulary.
func ParseReceipt(b []byte) (*Receipt, error) {
	var head struct {
		SchemaVersion string `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, receiptErr("$", "not a JSON object")
	}
	if m := reVersion.FindStringSubmatch(head.SchemaVersion); m == nil || head.SchemaVersion != ReceiptSchema {
		return nil, fmt.Errorf("%w: schema_version", ErrReceiptVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Receipt
	if err := dec.Decode(&r); err != nil {
		return nil, receiptErr("$", "unknown field or wrong type")
	}
	if dec.More() {
		return nil, receiptErr("$", "trailing data")
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReceiptBlock renders the receipt as the summary note's machine-readable HTML comment.
func ReceiptBlock(r *Receipt) (string, error) {
	b, err := r.Marshal()
	if err != nil {
		return "", err
	}
	// canon.JSON never emits "--" inside strings of this closed vocabulary, but a comment must
	// not be closable from inside: refuse rather than escape.
	if strings.Contains(string(b), "--") {
		return "", receiptErr("$", "cannot be embedded in an HTML comment")
	}
	return receiptMarkerPrefix + string(b) + " -->", nil
}

// ReceiptFromBody finds and parses the receipt block of a summary note body.
func ReceiptFromBody(body string) (*Receipt, error) {
	i := strings.Index(body, "<!-- ocr.review-receipt/v")
	if i < 0 {
		return nil, receiptErr("body", "no receipt block")
	}
	rest := body[i+len("<!-- "):]
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 {
		return nil, receiptErr("body", "malformed receipt block")
	}
	if rest[:sp] != ReceiptSchema {
		return nil, fmt.Errorf("%w: schema_version", ErrReceiptVersion)
	}
	// The JSON starts after the space and ends before the first " -->" that follows it (an
	// empty block, "<!-- ocr.review-receipt/v8 -->", has none).
	payload := rest[sp+1:]
	end := strings.Index(payload, " -->")
	if end < 0 {
		return nil, receiptErr("body", "malformed receipt block")
	}
	return ParseReceipt([]byte(payload[:end]))
}
