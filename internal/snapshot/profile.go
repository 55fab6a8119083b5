package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// maxSafeInteger is the largest integer RFC 8785 (IEEE 754 doubles) serialises exactly.
const maxSafeInteger = 1<<53 - 1

// maxConfigBytes bounds profile and bots files.
const maxConfigBytes = 1 << 20

// ReadProfile decodes a profile file strictly (JSON: the collection.json fields other than
// admission; unknown fields are errors) and validates it with ValidateProfile.
func ReadProfile(r io.Reader) (acquisition.Profile, error) {
	var p acquisition.Profile
	if err := decodeStrict(r, &p, "profile"); err != nil {
		return p, err
	}
	return p, ValidateProfile(p)
}

// ReadBots decodes a bots file {"bots":[{"id":…,"login":…,"bot_role":…}]} strictly and
// validates it with ValidateBots.
func ReadBots(r io.Reader) ([]BotIdentity, error) {
	var doc struct {
		Bots *[]BotIdentity `json:"bots"`
	}
	if err := decodeStrict(r, &doc, "bots"); err != nil {
		return nil, err
	}
	if doc.Bots == nil {
		return nil, &ConfigError{Field: "bots", Rule: "required array"}
	}
	return *doc.Bots, ValidateBots(*doc.Bots)
}

func decodeStrict(r io.Reader, v any, what string) error {
	data, err := io.ReadAll(io.LimitReader(r, maxConfigBytes+1))
	if err != nil {
		return fmt.Errorf("%s: read: %w", what, err)
	}
	if len(data) > maxConfigBytes {
		return &ConfigError{Field: what, Rule: fmt.Sprintf("file larger than %d bytes", maxConfigBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &ConfigError{Field: what, Rule: "must be one JSON object with only the documented fields: " + err.Error()}
	}
	if dec.More() {
		return &ConfigError{Field: what, Rule: "trailing data after the JSON object"}
	}
	// Duplicated or case-variant member names would be silently resolved by encoding/json.
	if err := acquisition.CheckKeys(data); err != nil {
		return &ConfigError{Field: what, Rule: err.Error()}
	}
	return nil
}

var sourceKinds = map[string]bool{
	acquisition.SourceEntity: true, acquisition.SourceComments: true, acquisition.SourceReviews: true,
	acquisition.SourceChecks: true, acquisition.SourceCheckLogs: true, acquisition.SourceAgentRuns: true,
}

// ValidateProfile applies collection.schema.json and the spec's entity-kind rules before any
// fetch: entity is always included; a work_item selects only comments and agent_runs besides
// the entity (never reviews, checks or check_logs); check_logs requires checks and a
// check_log_selection of failed or all, otherwise the selection must be none; bounds are
// positive (max_labels may be 0). The error is a *ConfigError naming the field and the rule.
func ValidateProfile(p acquisition.Profile) error {
	switch p.EntityKind {
	case acquisition.KindWorkItem, acquisition.KindChangeProposal:
	default:
		return &ConfigError{Field: "entity_kind", Rule: "must be work_item or change_proposal"}
	}
	seen := map[string]bool{}
	for _, s := range p.IncludedSources {
		if !sourceKinds[s] {
			return &ConfigError{Field: "included_sources", Rule: "each entry must be entity, comments, reviews, checks, check_logs or agent_runs"}
		}
		if seen[s] {
			return &ConfigError{Field: "included_sources", Rule: "entries must be unique"}
		}
		seen[s] = true
	}
	if !seen[acquisition.SourceEntity] {
		return &ConfigError{Field: "included_sources", Rule: "must contain entity"}
	}
	if p.EntityKind == acquisition.KindWorkItem {
		for _, s := range []string{acquisition.SourceReviews, acquisition.SourceChecks, acquisition.SourceCheckLogs} {
			if seen[s] {
				return &ConfigError{Field: "included_sources", Rule: "a work_item profile cannot select " + s + " (only entity, comments and agent_runs apply)"}
			}
		}
	}
	switch p.RecordSelection {
	case "oldest", "newest":
	default:
		return &ConfigError{Field: "record_selection", Rule: "must be oldest or newest"}
	}
	if seen[acquisition.SourceCheckLogs] {
		if !seen[acquisition.SourceChecks] {
			return &ConfigError{Field: "included_sources", Rule: "check_logs can be included only with checks"}
		}
		if p.CheckLogSelection != "failed" && p.CheckLogSelection != "all" {
			return &ConfigError{Field: "check_log_selection", Rule: "must be failed or all when check_logs is included"}
		}
	} else if p.CheckLogSelection != "none" {
		return &ConfigError{Field: "check_log_selection", Rule: "must be none when check_logs is not included"}
	}
	b := p.Bounds
	for _, f := range []struct {
		name string
		v    int
	}{
		{"bounds.max_records_per_source", b.MaxRecordsPerSource},
		{"bounds.max_source_bytes", b.MaxSourceBytes},
		{"bounds.max_record_bytes", b.MaxRecordBytes},
		{"bounds.max_log_bytes", b.MaxLogBytes},
		{"bounds.max_metadata_string_bytes", b.MaxMetadataStringBytes},
	} {
		if f.v < 1 {
			return &ConfigError{Field: f.name, Rule: "must be an integer of at least 1"}
		}
		if f.v > maxSafeInteger {
			return &ConfigError{Field: f.name, Rule: "must be at most 2^53-1 (RFC 8785 represents integers exactly only up to there)"}
		}
	}
	if b.MaxLabels < 0 || b.MaxLabels > maxSafeInteger {
		return &ConfigError{Field: "bounds.max_labels", Rule: "must be an integer from 0 to 2^53-1"}
	}
	// The tree bounds (internal/snapshot/treefs) are shared with the consumer: a profile whose selection
	// could produce a tree verify refuses is invalid before fetching, like a profile breaking
	// the entity-kind rules (spec "Relationships, history, and collection profiles": an
	// invalid profile aborts collection before fetching or assembly), rather than assembled
	// into a tree that then fails verification.
	if b.MaxRecordsPerSource > treefs.MaxRecordsPerSource {
		return &ConfigError{Field: "bounds.max_records_per_source", Rule: fmt.Sprintf("must be at most %d: %d files per record slot would exceed the %d-file tree bound verification enforces", treefs.MaxRecordsPerSource, treefs.FilesPerRecordSlot, treefs.MaxFiles)}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"bounds.max_record_bytes", b.MaxRecordBytes}, {"bounds.max_log_bytes", b.MaxLogBytes}} {
		if f.v > treefs.MaxBodyBytes {
			return &ConfigError{Field: f.name, Rule: fmt.Sprintf("must be at most %d so that a bounded file fits the %d-byte file bound verification enforces", treefs.MaxBodyBytes, treefs.MaxFileBytes)}
		}
	}
	return nil
}

// ValidateBots checks the bot registry: every entry has a structural ID and a non-empty
// bot_role, and IDs are unique.
func ValidateBots(bots []BotIdentity) error {
	seen := map[string]bool{}
	for i, b := range bots {
		if !structuralID(b.ID) {
			return &ConfigError{Field: fmt.Sprintf("bots[%d].id", i), Rule: "must be a structural ID (^[A-Za-z0-9][A-Za-z0-9._:=-]*$)"}
		}
		if b.BotRole == "" {
			return &ConfigError{Field: fmt.Sprintf("bots[%d].bot_role", i), Rule: "must be a non-empty registered bot role"}
		}
		if seen[b.ID] {
			return &ConfigError{Field: fmt.Sprintf("bots[%d].id", i), Rule: "duplicate bot ID"}
		}
		seen[b.ID] = true
	}
	return nil
}

// collectionDoc is collection.json.
type collectionDoc struct {
	EntityKind        string             `json:"entity_kind"`
	IncludedSources   []string           `json:"included_sources"`
	RecordSelection   string             `json:"record_selection"`
	CheckLogSelection string             `json:"check_log_selection"`
	Bounds            acquisition.Bounds `json:"bounds"`
	Admission         admissionDoc       `json:"admission"`
}

type admissionDoc struct {
	HumanMinRole string `json:"human_min_role"`
}

// CollectionJSON returns the exact RFC 8785 collection.json bytes for a profile and agent
// category, and collection_profile (their SHA-256). included_sources is sorted by ASCII byte
// order.
func CollectionJSON(p acquisition.Profile, category string) ([]byte, string, error) {
	if err := ValidateProfile(p); err != nil {
		return nil, "", err
	}
	role, err := HumanMinRole(category)
	if err != nil {
		return nil, "", err
	}
	src := append([]string(nil), p.IncludedSources...)
	sort.Strings(src)
	b, err := canon.JSON(collectionDoc{
		EntityKind: p.EntityKind, IncludedSources: src, RecordSelection: p.RecordSelection,
		CheckLogSelection: p.CheckLogSelection, Bounds: p.Bounds, Admission: admissionDoc{HumanMinRole: role},
	})
	if err != nil {
		return nil, "", err
	}
	return b, canon.SHA256Hex(b), nil
}
