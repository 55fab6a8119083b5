// Package filter is the v1 filter pipeline of the entity-context-snapshot spec
// ("Canonical bytes": Unicode safety, redaction floor, injection floor, byte bounds).
//
// Every attacker-controllable string forgectx hands an agent or a human passes through one
// Pipeline: record bodies, logs, display strings, structural strings (checked, never
// rewritten), pre-script diagnostics, status-comment details and event excerpts. There is one
// secret scanner in the project, and it lives here.
//
// API CONTRACT (other packages code against these names; keep them stable):
//
//	filter.Version                       the filter_version string
//	filter.New(secrets []string) *Pipeline
//	(*Pipeline).Apply(ctx, src, Options) (Result, error)   error = aborted pipeline
//	(*Pipeline).Redact(s string) (string, []Finding)       redaction only (literals + patterns)
//	(*Pipeline).Sanitize(s string) (string, []Finding)     Unicode safety + redaction, no injection scan, no bound
//	(*Pipeline).CheckStructural(ctx, s string) error       nil only if the full pipeline leaves s unchanged
//	filter.SecretEnvValues(environ []string, names []string) []string
//	filter.MergeFindings(...[]Finding) []Finding
package filter

import (
	"errors"
)

// Version is the filter_version written into every snapshot. It changes whenever the emitted
// bytes for the same input would change.
const Version = "forgectx-filter-v1.0.0"

// Role selects the bounding rule: bodies and logs get the single-trailing-LF rule, display
// strings are bounded with no LF added.
type Role string

// Roles.
const (
	RoleBody    Role = "body"
	RoleLog     Role = "log"
	RoleDisplay Role = "display"
)

// Status is filter.status of the spec.
type Status string

// Statuses.
const (
	StatusUnchanged Status = "unchanged"
	StatusModified  Status = "modified"
	StatusTruncated Status = "truncated"
	StatusRejected  Status = "rejected"
)

// Gap codes a rejection maps to (index.json gaps[].code).
const (
	GapSourceTooLarge = "source_too_large"
	GapUnsafeContent  = "unsafe_content"
)

// Finding is one {code,count} row; codes match ^[a-z][a-z0-9._-]*$ and never carry source text.
type Finding struct {
	Code  string `json:"code"`
	Count int    `json:"count"`
}

// Options bound one Apply call. Zero bounds mean unbounded.
type Options struct {
	Role           Role
	MaxBytes       int // emitted byte bound (max_record_bytes, max_log_bytes, max_metadata_string_bytes)
	MaxSourceBytes int // pre-decode bound (max_source_bytes)
}

// Result is the outcome of Apply. Output is nil when Status is rejected; Gap then names why.
type Result struct {
	Status   Status
	Findings []Finding // sorted by code
	Output   []byte
	Gap      string
}

// ErrAborted wraps every pipeline component failure; the original bytes never pass through.
var ErrAborted = errors.New("filter: pipeline aborted")

// Pipeline is a compiled filter with its registry of exact run credentials. It is safe for
// concurrent use.
type Pipeline struct {
	secrets []string
}

// New compiles a pipeline that also redacts the given literal credential values.
func New(secrets []string) *Pipeline { return &Pipeline{secrets: secrets} }
