package github

import (
	"regexp"
	"strings"
	"time"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// nodeID is the spec's github_node_id mapping for every GitHub structural ID.
var nodeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_=-]*$`)

// gitOID is a full Git object ID (SHA-1 or SHA-256), lowercase hex.
var gitOID = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

// validNodeID reports whether s satisfies the github_node_id mapping.
func validNodeID(s string) bool { return len(s) <= 256 && nodeID.MatchString(s) }

// mapEntityState is the spec's exhaustive GitHub entity-state table: issue OPEN/CLOSED →
// open/closed; a pull request with merged: true → merged, otherwise OPEN/CLOSED → open/closed.
// GraphQL spells states upper case; REST lower case; both are accepted. ok is false for any
// other native state (the entity is a required singleton: the caller aborts).
func mapEntityState(native string, isPR, merged bool) (string, bool) {
	if isPR && merged {
		return "merged", true
	}
	switch strings.ToUpper(native) {
	case "OPEN":
		return "open", true
	case "CLOSED":
		return "closed", true
	case "MERGED":
		// GraphQL's PullRequestState MERGED (merged must then be true; be explicit anyway).
		if isPR {
			return "merged", true
		}
	}
	return "", false
}

// reviewDisposition is what to do with a native review state.
type reviewDisposition int

const (
	reviewKeep    reviewDisposition = iota
	reviewOmit                      // PENDING: unsubmitted, omitted without a gap
	reviewInvalid                   // unknown: invalid_metadata
)

// mapReviewState is the spec's exhaustive GitHub review-state table.
func mapReviewState(native string) (string, reviewDisposition) {
	switch native {
	case "APPROVED":
		return "approved", reviewKeep
	case "CHANGES_REQUESTED":
		return "changes_requested", reviewKeep
	case "COMMENTED":
		return "commented", reviewKeep
	case "DISMISSED":
		return "dismissed", reviewKeep
	case "PENDING":
		return "", reviewOmit
	}
	return "", reviewInvalid
}

// mapCheckStatus is the spec's GitHub check status table.
func mapCheckStatus(native string) (string, bool) {
	switch native {
	case "queued", "waiting", "requested", "pending":
		return "queued", true
	case "in_progress":
		return "in_progress", true
	case "completed":
		return "completed", true
	}
	return "", false
}

// mapCheckConclusion is the spec's GitHub conclusion table: identical names, except
// startup_failure → failure with never_started: true.
func mapCheckConclusion(native string) (conclusion string, startupFailure, ok bool) {
	switch native {
	case "success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required", "stale":
		return native, false, true
	case "startup_failure":
		return "failure", true, true
	}
	return "", false, false
}

// nativeCheck is the subset of a check run (plus its Actions job creation time) the mapping
// reads. Empty strings are absent native values.
type nativeCheck struct {
	NodeID      string
	Name        string
	HeadSHA     string
	Status      string
	Conclusion  string
	CreatedAt   string // the Actions job's created_at; empty when no immutable creation time exists
	StartedAt   string
	CompletedAt string
}

// mapCheck applies the spec's status/conclusion/timestamp rules to one check run. ok is false
// when the check is invalid_metadata (unknown native value, missing or mismatched revision,
// missing immutable creation time, timestamps the mapped status requires but the forge lacks).
func mapCheck(n nativeCheck, capturedHead string) (acquisition.Check, bool) {
	ck := acquisition.Check{ID: n.NodeID, Name: n.Name, HeadSHA: strings.ToLower(n.HeadSHA), CreatedAt: n.CreatedAt}
	if !validNodeID(n.NodeID) || !gitOID.MatchString(ck.HeadSHA) || ck.HeadSHA != capturedHead || n.CreatedAt == "" {
		return ck, false
	}
	status, ok := mapCheckStatus(n.Status)
	if !ok {
		return ck, false
	}
	ck.Status = status
	switch status {
	case "queued":
		// Queued checks carry no start, completion or conclusion.
		return ck, true
	case "in_progress":
		if n.StartedAt == "" {
			return ck, false
		}
		ck.StartedAt = n.StartedAt
		return ck, true
	}
	conclusion, startupFailure, ok := mapCheckConclusion(n.Conclusion)
	if !ok {
		return ck, false
	}
	ck.Conclusion = conclusion
	never := startupFailure || ((conclusion == "skipped" || conclusion == "cancelled") && n.StartedAt == "")
	if never {
		t := true
		ck.NeverStarted = &t
		// completed_at is the native terminal time; without one, the immutable creation time
		// is the canonical fallback (never a runner-observed time).
		ck.CompletedAt = n.CompletedAt
		if ck.CompletedAt == "" {
			ck.CompletedAt = n.CreatedAt
		}
		return ck, true
	}
	if n.StartedAt == "" || n.CompletedAt == "" {
		return ck, false
	}
	f := false
	ck.NeverStarted = &f
	ck.StartedAt, ck.CompletedAt = n.StartedAt, n.CompletedAt
	return ck, true
}

// mapRole maps the collaborator-permission response to a v1 role: role_name when it is one of
// GitHub's base roles; for a custom repository role (role_name outside the base set) the
// legacy permission field, which GitHub reports as the custom role's base (admin, write, read)
// or none. ok is false when neither is recognisable; the actor is then unverified.
func mapRole(roleName, permission string) (string, bool) {
	switch roleName {
	case "admin", "maintain", "write", "triage", "read":
		return roleName, true
	}
	switch permission {
	case "admin", "write", "read", "none":
		return permission, true
	}
	return "", false
}

// ts formats a native time for the acquisition (RFC 3339, UTC, nanoseconds when present).
func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
