package rework

// Reason is a typed blocking reason of the receipt's decision (docs/rework.md, "Blocking
// reasons"). The string is the wire name.
type Reason string

// Blocking reasons. Capture reasons come from the two captures and their bindings; decision
// reasons from the derived timeline.
const (
	ReasonProviderNameMismatch        Reason = "provider_name_mismatch"
	ReasonProviderVersionMismatch     Reason = "provider_version_mismatch"
	ReasonCaptureFailed               Reason = "capture_failed"
	ReasonMalformedRecord             Reason = "malformed_record"
	ReasonIdentityMismatch            Reason = "identity_mismatch"
	ReasonAuthorBindingMismatch       Reason = "author_binding_mismatch"
	ReasonPullRequestNotOpen          Reason = "pull_request_not_open"
	ReasonHeadMismatch                Reason = "head_mismatch"
	ReasonDefaultBranchMismatch       Reason = "default_branch_mismatch"
	ReasonDiscoveryDraftMissing       Reason = "discovery_draft_missing"
	ReasonContractDigestMismatch      Reason = "contract_digest_mismatch"
	ReasonInlineEndpointUnavailable   Reason = "inline_endpoint_unavailable"
	ReasonPaginationIncomplete        Reason = "pagination_incomplete"
	ReasonDuplicateRecordID           Reason = "duplicate_record_id"
	ReasonReviewCommentsCountMismatch Reason = "review_comments_count_mismatch"
	ReasonSourceIssueCommentsMismatch Reason = "source_issue_comments_mismatch"
	ReasonCaptureDrift                Reason = "capture_drift"
	ReasonRoleBindingInconsistent     Reason = "role_binding_inconsistent"
	ReasonPendingReview               Reason = "pending_review"
	ReasonSameInstantConflict         Reason = "same_instant_conflict"
	ReasonCurrentManualComment        Reason = "current_manual_comment"
	ReasonMarkerMissing               Reason = "marker_missing"
	ReasonMarkerInvalid               Reason = "marker_invalid"
	ReasonMarkerContradiction         Reason = "marker_contradiction"
	ReasonBlockedSpec                 Reason = "blocked_spec"
	ReasonMissingCurrentReview        Reason = "missing_current_review"
)

// AllReasons lists every blocking reason in documentation order.
var AllReasons = []Reason{
	ReasonProviderNameMismatch, ReasonProviderVersionMismatch, ReasonCaptureFailed, ReasonMalformedRecord, ReasonIdentityMismatch,
	ReasonAuthorBindingMismatch, ReasonPullRequestNotOpen, ReasonHeadMismatch, ReasonDefaultBranchMismatch,
	ReasonDiscoveryDraftMissing, ReasonContractDigestMismatch, ReasonInlineEndpointUnavailable,
	ReasonPaginationIncomplete, ReasonDuplicateRecordID, ReasonReviewCommentsCountMismatch,
	ReasonSourceIssueCommentsMismatch, ReasonCaptureDrift, ReasonRoleBindingInconsistent,
	ReasonPendingReview, ReasonSameInstantConflict, ReasonCurrentManualComment, ReasonMarkerMissing,
	ReasonMarkerInvalid, ReasonMarkerContradiction, ReasonBlockedSpec, ReasonMissingCurrentReview,
}

// Blocking is one blocking reason with the subject it concerns ("review 12", "source_issue",
// "GET /repos/…") and the rule broken. Neither ever holds a body or a token.
type Blocking struct {
	Reason  Reason `json:"reason"`
	Subject string `json:"subject"`
	Rule    string `json:"rule"`
}

// Decision values.
const (
	DecisionRework  = "rework"
	DecisionNoOp    = "no_op"
	DecisionBlocked = "blocked"
)

// Roles of a review author.
const (
	RoleSpecReviewer = "spec_reviewer"
	RoleCodeReviewer = "code_reviewer"
	RoleImpl         = "impl"
	RoleOther        = "other"
	RoleNone         = "none" // no native author (a team review request, a deleted account)
)
