// Package reviewresult is the review result file the review engine writes at the end of one
// review-context run (docs/review-context.md,
// "Review result file"): findings (severity, path, line, message, existing_code,
// suggestion_code), warnings, the outcome message, displayed tool names, the coverage kind and
// counts, the manifest failure path and reason, and private engine metadata.
//
// The format is versioned (SchemaVersion) and decoded strictly: exactly one JSON object in
// valid UTF-8, no duplicate keys, no unknown or missing fields, no null, integers only, every
// string and array within its bound, and the cross-field rules of Validate. Every error names
// the JSON path of the field and the rule it broke, never the value. Decoding checks shape
// and bounds only; whether a value is safe to publish is internal/review/reviewpub's decision, so that an
// unsafe finding can be removed without discarding the whole result.
//
// The file format is documented in docs/review-context.md ("Review result file").
package reviewresult

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"syscall"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// SchemaVersion is the only accepted schema_version.
const SchemaVersion = "ocr.review-result/v1"

// Bounds of the format (bytes are UTF-8 bytes).
const (
	MaxFileBytes       = 1 << 20
	MaxFindings        = 200
	maxWarnings        = 50
	maxToolNames       = 32
	maxMetadata        = 32
	MaxMessageBytes    = 8192
	MaxCodeBytes       = 16384
	maxPathBytes       = 1024
	maxWarningBytes    = 2048
	maxOutcomeBytes    = 4096
	maxToolNameBytes   = 128
	maxReasonBytes     = 1024
	maxMetadataBytes   = 1024
	maxLine            = 10_000_000
	maxCoverageCount   = 1_000_000
	maxMetadataKeySize = 64
)

// errResult wraps every decode or validation failure.
var errResult = errors.New("reviewresult: invalid review result")

// Status is the engine's closed run status.
type Status string

// Statuses.
const (
	StatusCompleted           Status = "completed"
	StatusCompletedWithErrors Status = "completed_with_errors"
	StatusFailed              Status = "failed"
)

// Severity is a finding's closed severity.
type Severity string

// Severities, most severe first.
const (
	severityCritical Severity = "critical"
	severityHigh     Severity = "high"
	SeverityMedium   Severity = "medium"
	severityLow      Severity = "low"
	severityInfo     Severity = "info"
)

// CoverageKind is the closed coverage kind.
type CoverageKind string

// Coverage kinds.
const (
	CoverageComplete CoverageKind = "complete"
	CoveragePartial  CoverageKind = "partial"
	CoverageNone     CoverageKind = "none"
)

// Result is one decoded review result.
type Result struct {
	SchemaVersion  string    `json:"schema_version"`
	Status         Status    `json:"status"`
	OutcomeMessage string    `json:"outcome_message"`
	Coverage       Coverage  `json:"coverage"`
	Findings       []Finding `json:"findings"`
	Warnings       []string  `json:"warnings"`
	// ToolNames are the tool names the summary displays (publication sinks).
	ToolNames []string `json:"tool_names"`
	// ManifestFailure names the manifest item the engine could not review, if any.
	ManifestFailure *ManifestFailure `json:"manifest_failure,omitempty"`
	// Metadata is private engine metadata (engine, model, session, item identities): never
	// published, scanned and sanitized before it is retained.
	Metadata map[string]string `json:"metadata"`
}

// Coverage is the closed coverage kind and its counts of manifest files.
type Coverage struct {
	Kind          CoverageKind `json:"kind"`
	FilesTotal    int          `json:"files_total"`
	FilesReviewed int          `json:"files_reviewed"`
	FilesFailed   int          `json:"files_failed"`
}

// Finding is one review finding. ExistingCode and SuggestionCode are optional.
type Finding struct {
	Severity       Severity `json:"severity"`
	Path           string   `json:"path"`
	Line           int      `json:"line"`
	Message        string   `json:"message"`
	ExistingCode   string   `json:"existing_code,omitempty"`
	SuggestionCode string   `json:"suggestion_code,omitempty"`
}

// ManifestFailure is the manifest item that failed and why.
type ManifestFailure struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// The field table the strict walker enforces. Optional fields may be absent; nothing may be
// null.
var (
	findingSchema = object(
		field("severity", enum(string(severityCritical), string(severityHigh), string(SeverityMedium), string(severityLow), string(severityInfo))),
		field("path", str(1, maxPathBytes)),
		field("line", integer(1, maxLine)),
		field("message", str(1, MaxMessageBytes)),
		optional("existing_code", str(0, MaxCodeBytes)),
		optional("suggestion_code", str(0, MaxCodeBytes)),
	)
	resultSchema = object(
		field("schema_version", enum(SchemaVersion)),
		field("status", enum(string(StatusCompleted), string(StatusCompletedWithErrors), string(StatusFailed))),
		field("outcome_message", str(0, maxOutcomeBytes)),
		field("coverage", object(
			field("kind", enum(string(CoverageComplete), string(CoveragePartial), string(CoverageNone))),
			field("files_total", integer(0, maxCoverageCount)),
			field("files_reviewed", integer(0, maxCoverageCount)),
			field("files_failed", integer(0, maxCoverageCount)),
		)),
		field("findings", array(MaxFindings, findingSchema)),
		field("warnings", array(maxWarnings, str(1, maxWarningBytes))),
		field("tool_names", array(maxToolNames, str(1, maxToolNameBytes))),
		optional("manifest_failure", object(
			field("path", str(1, maxPathBytes)),
			field("reason", str(1, maxReasonBytes)),
		)),
		field("metadata", mapOf(maxMetadata, metadataKey, str(0, maxMetadataBytes))),
	)
	metadataKey = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

func errf(path, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", errResult, path, fmt.Sprintf(format, a...))
}

// Decode strictly decodes and validates one result document.
func Decode(b []byte) (*Result, error) {
	if len(b) > MaxFileBytes {
		return nil, errf("$", "%d bytes, over the %d-byte bound", len(b), MaxFileBytes)
	}
	var r Result
	if err := decodeStrict(b, resultSchema, &r); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Validate checks the cross-field rules (Decode has checked shape and bounds):
//   - coverage: files_reviewed + files_failed ≤ files_total; kind complete exactly when every
//     file was reviewed and none failed; kind none exactly when no file was reviewed (and
//     then files_total must be positive or the kind is complete for an empty manifest);
//   - status completed has no manifest_failure and complete or partial coverage is allowed;
//     status failed has coverage kind none or partial.
//
// It also re-checks the bounds, so a Result built in memory (a projection) can be validated.
func (r *Result) Validate() error {
	if r.SchemaVersion != SchemaVersion {
		return errf("$.schema_version", "must be %s", SchemaVersion)
	}
	if err := checkBounds(r); err != nil {
		return err
	}
	c := r.Coverage
	switch {
	case c.FilesReviewed+c.FilesFailed > c.FilesTotal:
		return errf("$.coverage", "files_reviewed + files_failed exceeds files_total")
	case c.Kind == CoverageComplete && (c.FilesReviewed != c.FilesTotal || c.FilesFailed != 0):
		return errf("$.coverage.kind", "complete needs every file reviewed and none failed")
	case c.Kind == CoverageNone && c.FilesReviewed != 0:
		return errf("$.coverage.kind", "none needs files_reviewed 0")
	case c.Kind == CoveragePartial && (c.FilesReviewed == c.FilesTotal && c.FilesFailed == 0):
		return errf("$.coverage.kind", "partial needs an unreviewed or failed file")
	}
	if r.Status == StatusCompleted && r.ManifestFailure != nil {
		return errf("$.manifest_failure", "not allowed with status completed")
	}
	if r.Status == StatusFailed && c.Kind == CoverageComplete && c.FilesTotal > 0 {
		return errf("$.coverage.kind", "status failed cannot claim complete coverage")
	}
	return nil
}

// checkBounds re-applies the decoder's closed values and bounds to an in-memory Result.
func checkBounds(r *Result) error {
	switch r.Status {
	case StatusCompleted, StatusCompletedWithErrors, StatusFailed:
	default:
		return errf("$.status", "not a closed value")
	}
	switch r.Coverage.Kind {
	case CoverageComplete, CoveragePartial, CoverageNone:
	default:
		return errf("$.coverage.kind", "not a closed value")
	}
	for name, n := range map[string]int{"files_total": r.Coverage.FilesTotal, "files_reviewed": r.Coverage.FilesReviewed, "files_failed": r.Coverage.FilesFailed} {
		if n < 0 || n > maxCoverageCount {
			return errf("$.coverage."+name, "out of range 0..%d", maxCoverageCount)
		}
	}
	if len(r.OutcomeMessage) > maxOutcomeBytes {
		return errf("$.outcome_message", "over %d bytes", maxOutcomeBytes)
	}
	if len(r.Findings) > MaxFindings || len(r.Warnings) > maxWarnings || len(r.ToolNames) > maxToolNames || len(r.Metadata) > maxMetadata {
		return errf("$", "an array or map is over its bound")
	}
	if err := checkFindings(r.Findings); err != nil {
		return err
	}
	if err := checkTexts(r); err != nil {
		return err
	}
	if r.Findings == nil || r.Warnings == nil || r.ToolNames == nil || r.Metadata == nil {
		return errf("$", "findings, warnings, tool_names and metadata must be present (empty is fine)")
	}
	return nil
}

// checkTexts bounds the warnings, tool names, manifest failure and metadata.
func checkTexts(r *Result) error {
	for i, w := range r.Warnings {
		if w == "" || len(w) > maxWarningBytes {
			return errf(fmt.Sprintf("$.warnings[%d]", i), "must be 1..%d bytes", maxWarningBytes)
		}
	}
	for i, n := range r.ToolNames {
		if n == "" || len(n) > maxToolNameBytes {
			return errf(fmt.Sprintf("$.tool_names[%d]", i), "must be 1..%d bytes", maxToolNameBytes)
		}
	}
	if m := r.ManifestFailure; m != nil {
		if m.Path == "" || len(m.Path) > maxPathBytes || m.Reason == "" || len(m.Reason) > maxReasonBytes {
			return errf("$.manifest_failure", "path 1..%d bytes and reason 1..%d bytes", maxPathBytes, maxReasonBytes)
		}
	}
	for k, v := range r.Metadata {
		if !metadataKey.MatchString(k) || len(v) > maxMetadataBytes {
			return errf("$.metadata", "key must match %s and values be at most %d bytes", metadataKey, maxMetadataBytes)
		}
	}
	return nil
}

// checkFindings re-applies the finding rules.
func checkFindings(fs []Finding) error {
	for i, f := range fs {
		p := fmt.Sprintf("$.findings[%d]", i)
		switch f.Severity {
		case severityCritical, severityHigh, SeverityMedium, severityLow, severityInfo:
		default:
			return errf(p+".severity", "not a closed value")
		}
		switch {
		case f.Path == "" || len(f.Path) > maxPathBytes:
			return errf(p+".path", "must be 1..%d bytes", maxPathBytes)
		case f.Line < 1 || f.Line > maxLine:
			return errf(p+".line", "out of range 1..%d", maxLine)
		case f.Message == "" || len(f.Message) > MaxMessageBytes:
			return errf(p+".message", "must be 1..%d bytes", MaxMessageBytes)
		case len(f.ExistingCode) > MaxCodeBytes || len(f.SuggestionCode) > MaxCodeBytes:
			return errf(p, "code field over %d bytes", MaxCodeBytes)
		}
	}
	return nil
}

// Encode returns the RFC 8785 canonical bytes of a valid result: the one serialization the
// toolkit writes (projections included), so equal results have equal bytes.
func Encode(r *Result) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	b, err := canon.JSON(r)
	if err != nil {
		return nil, fmt.Errorf("%w: encode: %v", errResult, err)
	}
	return b, nil
}

// Load reads and decodes the result file at path: it is opened without following a symlink
// and must be a regular file within MaxFileBytes.
func Load(path string) (*Result, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: open: %v", errResult, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: stat: %v", errResult, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errf("$", "the result file is not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read: %v", errResult, err)
	}
	return Decode(b)
}
