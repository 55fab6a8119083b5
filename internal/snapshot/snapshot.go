// Package snapshot assembles an entity-context-snapshot v1 tree (docs/contracts.md,
// "Entity-context snapshot v1": Tree, Record keys and record files, Admission, Ordering and
// prompt assembly, Checks, Relationships, history and collection profiles, Canonical bytes,
// Ordering and determinism) from a provider-neutral acquisition.
//
// Assemble is the one entry point: it validates the collection profile, admits records
// (human role threshold by agent category, registered bots only), runs the filter pipeline on
// every body, log and display string (structural strings are checked, never rewritten),
// selects and bounds each source, derives record keys, order files, views, relations and state,
// aggregates gaps, serialises every JSON document as RFC 8785 bytes, validates each against
// the project's v1 schema bundle and only then returns the Tree. Nothing is written before the
// whole tree is valid; a violated abort rule is an *AbortError and no tree is returned.
//
// Decisions the spec leaves open are listed in docs/snapshot.md ("Decisions"); the main ones:
// review-thread comments are comment records of the comments source, while threads belong to
// the reviews scope (emitted only when reviews are selected); admission runs before
// record_selection, so an omitted record never takes a bounded slot, and the filter runs
// after selection, so a filter-rejected record keeps its slot and appears in records[] with
// status rejected.
package snapshot

import (
	"errors"
	"fmt"
	"sort"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// SchemaVersion is index.json schema_version.
const SchemaVersion = 1

// Agent categories (Config.Category) and the human role threshold each implies.
const (
	CategoryObservation = "observation"
	CategoryMutation    = "mutation"
)

// HumanMinRole returns admission.human_min_role for an agent category: triage for observation,
// write for mutation.
func HumanMinRole(category string) (string, error) {
	switch category {
	case CategoryObservation:
		return "triage", nil
	case CategoryMutation:
		return "write", nil
	}
	return "", &ConfigError{Field: "category", Rule: "must be observation or mutation"}
}

// BotIdentity is one operator-registered bot (ADR 0107 registry entry): a record by an actor
// the forge positively reports as a bot is admitted only when its ID (and Login, when set)
// matches an entry with a non-empty BotRole.
type BotIdentity struct {
	ID      string `json:"id"`
	Login   string `json:"login,omitempty"`
	BotRole string `json:"bot_role"`
}

// Config is everything besides the acquisition that determines the tree.
type Config struct {
	Profile  acquisition.Profile
	Category string // observation or mutation
	Bots     []BotIdentity
	// Filter is the pipeline every body, log, display and structural string passes through.
	// It is required: there is no unfiltered mode.
	Filter *filter.Pipeline
	// ReleaseBodies lets Assemble clear each comment and review body and each check log in
	// the acquisition as soon as it is filtered, so their memory can go while the tree is
	// built (the bodies of a 100k-record acquisition are most of it). Only for a caller that
	// hands the acquisition over and does not read it again; the tree is the same either way.
	ReleaseBodies bool
}

// File is one emitted file of the tree (other than the root index.json).
type File struct {
	Path string
	Data []byte

	// sum is the SHA-256 of the bytes, computed once when the file is added (the manifest's
	// digest; Tree.Sums). A file AssembleTo already wrote to its staging directory keeps only
	// its size and digest (Data is nil).
	spilled bool
	size    int
	sum     [32]byte
}

// len is the file's size in bytes, whether held or spilled.
func (f *File) len() int {
	if f.spilled {
		return f.size
	}
	return len(f.Data)
}

// Tree is an assembled, validated snapshot held in memory.
type Tree struct {
	// Files are every staged file except the root index.json, sorted by path.
	Files []File
	// Index is the exact root index.json bytes; IndexSHA256 their lowercase SHA-256, the value
	// the host retains outside the tree as the root of trust.
	Index       []byte
	IndexSHA256 string
	Summary     Summary
}

// File returns the bytes of the file at path ("index.json" included); a file AssembleTo
// wrote without keeping its bytes is reported absent.
func (t *Tree) File(path string) ([]byte, bool) {
	if path == "index.json" {
		return t.Index, true
	}
	i := sort.Search(len(t.Files), func(i int) bool { return t.Files[i].Path >= path })
	if i < len(t.Files) && t.Files[i].Path == path && !t.Files[i].spilled {
		return t.Files[i].Data, true
	}
	return nil, false
}

// Summary describes a tree without any content: counts, codes and digests only, so it may go
// to logs, job summaries and stdout.
type Summary struct {
	EntityKind   string           `json:"entity_kind"`
	EntityID     string           `json:"entity_id"`
	EntityNumber int              `json:"entity_number"`
	Sources      []SourceSummary  `json:"sources"`
	Gaps         []Gap            `json:"gaps"`
	Findings     []filter.Finding `json:"findings"`
	Files        int              `json:"files"`
	Bytes        int64            `json:"bytes"`
	IndexSHA256  string           `json:"index_sha256"`
}

// SourceSummary counts one selected source's records. Acquired counts what the acquisition
// held; Records what index.json lists; WithContent those with a content or metadata file;
// Rejected those the filter rejected (listed without a file); Omitted those not admitted,
// invalid or dropped by a bound.
type SourceSummary struct {
	Source      string `json:"source"`
	Acquired    int    `json:"acquired"`
	Records     int    `json:"records"`
	WithContent int    `json:"with_content"`
	Rejected    int    `json:"rejected"`
	Omitted     int    `json:"omitted"`
	// Own counts forgectx's own status and receipt comments left out of the comments source
	// (not conversation records; never a gap).
	Own int `json:"own_comments,omitempty"`
}

// Gap is one index.json gaps[] row.
type Gap struct {
	Scope     string `json:"scope"`
	Code      string `json:"code"`
	Usability string `json:"usability"`
	Count     int    `json:"count"`
}

// Usability of a gap code: profile_bound and history_unavailable are partial, every other code
// unusable.
func Usability(code string) string {
	if code == acquisition.GapProfileBound || code == acquisition.GapHistoryUnavailable {
		return "partial"
	}
	return "unusable"
}

// Abort codes beyond the gap codes.
const (
	abortSchemaInvalid = "schema_invalid" // an emitted document failed its v1 schema
	AbortFilterFailed  = "filter_failed"  // a filter component error: nothing passes through
)

// AbortError is a violated abort rule: no tree exists and no agent may run. Scope is a gap scope
// ("entity", …) or "source"/"schema"/"filter"; Code is a gap code or one of the Abort* codes.
// Reason names the rule, never content.
type AbortError struct {
	Scope  string
	Code   string
	Reason string
	Err    error
}

func (a *AbortError) Error() string {
	return fmt.Sprintf("snapshot aborted: %s %s: %s", a.Scope, a.Code, a.Reason)
}

func (a *AbortError) Unwrap() error { return a.Err }

func abortf(scope, code, format string, args ...any) *AbortError {
	return &AbortError{Scope: scope, Code: code, Reason: fmt.Sprintf(format, args...)}
}

// ConfigError is an invalid profile, category or bot registry: it is detected before any fetch
// and maps to a usage/configuration exit.
type ConfigError struct {
	Field string
	Rule  string
}

func (c *ConfigError) Error() string { return fmt.Sprintf("%s: %s", c.Field, c.Rule) }

// IsConfigError reports whether err is (or wraps) a *ConfigError.
func IsConfigError(err error) bool {
	var c *ConfigError
	return errors.As(err, &c)
}
