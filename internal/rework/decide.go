package rework

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/forgectx/forgectx/internal/forge/forgejo"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// DiscoveryDraftLine is the exact first line a Source Issue body must carry.
const DiscoveryDraftLine = "discovery-draft/v2"

// Author is a review author's native binding and role.
type Author struct {
	ID    *int64  `json:"id"`
	Login *string `json:"login"`
	Role  string  `json:"role"`
}

// TimelineEntry is one review in the derived timeline.
type TimelineEntry struct {
	ReviewID         int64    `json:"review_id"`
	Author           Author   `json:"author"`
	State            string   `json:"state"`
	SubmittedAt      string   `json:"submitted_at"`
	ReviewedSHA      string   `json:"reviewed_sha"`
	Stale            bool     `json:"stale"`
	Dismissed        bool     `json:"dismissed"`
	CurrentHead      bool     `json:"current_head"`
	Marker           Marker   `json:"marker"`
	BodySHA256       string   `json:"body_sha256"`
	InlineRecords    int      `json:"inline_records"`
	Eligible         bool     `json:"eligible"`
	Selected         bool     `json:"selected"`
	ExclusionReasons []string `json:"exclusion_reasons"`

	instant time.Time
	ok      bool // the row is well typed
}

// Selected names the review selected per role (null when none).
type Selected struct {
	SpecReviewer *int64 `json:"spec_reviewer"`
	CodeReviewer *int64 `json:"code_reviewer"`
}

// Decision is the gate's outcome.
type Decision struct {
	Decision             string     `json:"decision"`
	Route                string     `json:"route"`
	BlockingReasons      []Blocking `json:"blocking_reasons"`
	ReworkReviewIDs      []int64    `json:"rework_review_ids"`
	MissingCurrentReview []string   `json:"missing_current_review"`
	Selected             Selected   `json:"selected"`
}

// Routes.
const (
	RouteImpl      = "impl"      // rework: the implementation agent acts
	RouteDiscovery = "discovery" // blocked_spec: Discovery investigates, not impl repair
	RouteNone      = "none"
)

// Counter statuses.
const (
	StatusMatch      = "match"
	StatusMismatch   = "mismatch"
	StatusUnverified = "unverified"
)

// CounterDiagnostic is one declared counter formula against one observation.
type CounterDiagnostic struct {
	Field      string          `json:"field"`
	Components []string        `json:"components"`
	Observed   json.RawMessage `json:"observed"`
	Expected   int             `json:"expected"`
	Status     string          `json:"status"`
}

// ReviewCounter is the inline counter of one review.
type ReviewCounter struct {
	ReviewID int64           `json:"review_id"`
	Observed json.RawMessage `json:"observed"`
	Expected int             `json:"expected"`
	Status   string          `json:"status"`
}

// InlineDiagnostic is the per-review inline counter diagnostic; Status aggregates the reviews
// (mismatch if any mismatches, else unverified if any is unverified, else match).
type InlineDiagnostic struct {
	Field      string          `json:"field"`
	Components []string        `json:"components"`
	Status     string          `json:"status"`
	Reviews    []ReviewCounter `json:"reviews"`
}

// CounterDiagnostics is the receipt's counter_diagnostics.
type CounterDiagnostics struct {
	Inline  InlineDiagnostic  `json:"inline"`
	PR      CounterDiagnostic `json:"pr"`
	PRIssue CounterDiagnostic `json:"pr_issue"`
}

var counterLiteralRe = regexp.MustCompile(`^(0|[1-9][0-9]{0,15})$`)

// counterStatus compares an observed native counter, unmodified, with expected: a missing,
// null, boolean, string, negative or non-integer literal is unverified.
func counterStatus(observed json.RawMessage, expected int) (json.RawMessage, string) {
	lit := bytes.TrimSpace(observed)
	if len(lit) == 0 {
		return json.RawMessage("null"), StatusUnverified
	}
	if !counterLiteralRe.Match(lit) {
		return lit, StatusUnverified
	}
	if string(lit) == fmt.Sprint(expected) {
		return lit, StatusMatch
	}
	return lit, StatusMismatch
}

// diagnose computes counter_diagnostics from the declared formulas. Diagnostics never change
// a count or select a projection; only the review-level inline counter feeds a blocking check
// (in evaluate), as the spec keeps it.
func diagnose(c *Contract, m *model) CounterDiagnostics {
	var d CounterDiagnostics
	f := c.Counters[CounterInline]
	d.Inline = InlineDiagnostic{Field: f.Field, Components: f.Components, Status: StatusMatch, Reviews: []ReviewCounter{}}
	for _, r := range m.reviews {
		exp := len(m.inline[*r.ID])
		obs, st := counterStatus(r.CommentsCount, exp)
		d.Inline.Reviews = append(d.Inline.Reviews, ReviewCounter{ReviewID: *r.ID, Observed: obs, Expected: exp, Status: st})
		switch {
		case st == StatusMismatch:
			d.Inline.Status = StatusMismatch
		case st == StatusUnverified && d.Inline.Status == StatusMatch:
			d.Inline.Status = StatusUnverified
		}
	}
	sum := func(comps []string) int {
		n := 0
		for _, c := range comps {
			switch c {
			case ComponentInlineRecords:
				n += m.inlineRecordsN
			case ComponentReviews:
				n += len(m.reviews)
			case ComponentPRIssueComments:
				n += len(m.prComments)
			}
		}
		return n
	}
	for _, k := range []string{CounterPR, CounterPRIssue} {
		f := c.Counters[k]
		var obsRaw json.RawMessage
		switch f.Field {
		case "review_comments":
			obsRaw = m.pull.ReviewComments
		case "comments":
			obsRaw = m.pull.Comments
		}
		exp := sum(f.Components)
		obs, st := counterStatus(obsRaw, exp)
		cd := CounterDiagnostic{Field: f.Field, Components: f.Components, Observed: obs, Expected: exp, Status: st}
		if k == CounterPR {
			d.PR = cd
		} else {
			d.PRIssue = cd
		}
	}
	return d
}

// SourceIssueCommentCheck is the Source Issue comment crosscheck: the issue's native
// `comments` counter against the collected comment rows. Unlike the PR-wide diagnostics it
// blocks unless it matches.
type SourceIssueCommentCheck struct {
	Field    string          `json:"field"`
	Observed json.RawMessage `json:"observed"`
	Expected int             `json:"expected"`
	Status   string          `json:"status"`
}

// bindings checks identity, provider, head, default branch, author and Source Issue rules, in
// that order (the order of the reasons is the order of precedence).
func bindings(t *Target, c *Contract, actorID int64, m *model) []Blocking {
	b := &blocker{}
	if name := ServerName(m.version); name != c.Provider {
		b.add(ReasonProviderNameMismatch, "version", "GET /version reports a %s server; the contract's provider.name is %s", name, c.Provider)
	}
	if m.version != c.APIVersion {
		b.add(ReasonProviderVersionMismatch, "version", "GET /version does not report the contract's provider.api_version")
	}
	bindRepository(b, t, &m.repo)
	bindPull(b, t, actorID, &m.pull, &m.repo)
	bindSourceIssue(b, t, &m.issue)
	return b.out
}

// ServerName names the server behind a GET /version answer: "forgejo" when the version's
// build metadata (after "+") names the Gitea version it is compatible with, as Forgejo reports
// on this endpoint (11.0.1+gitea-1.22.0; 1.21.11+1-gitea-1.21.11 before Forgejo 7), else
// "gitea" (Gitea reports its own version, 1.25.5, without that metadata). The two names are
// the values provider.name allows.
func ServerName(version string) string {
	if _, meta, ok := strings.Cut(version, "+"); ok && strings.Contains(meta, "gitea-") {
		return "forgejo"
	}
	return "gitea"
}

// blocker collects blocking reasons in the order they are found.
type blocker struct{ out []Blocking }

func (b *blocker) add(r Reason, subject, format string, a ...any) {
	b.out = append(b.out, Blocking{Reason: r, Subject: subject, Rule: fmt.Sprintf(format, a...)})
}

func bindRepository(b *blocker, t *Target, r *forgejo.RepoRecord) {
	switch {
	case r.ID == nil || r.FullName == nil || r.Name == nil || r.Owner == nil || r.Owner.Login == nil || r.DefaultBranch == nil:
		b.add(ReasonMalformedRecord, "repository", "id, name, full_name, owner.login and default_branch are required")
	case *r.FullName != t.Owner+"/"+t.Repository || *r.Name != t.Repository || *r.Owner.Login != t.Owner:
		b.add(ReasonIdentityMismatch, "repository", "the repository's owner and name are not the target's")
	}
}

func bindPull(b *blocker, t *Target, actorID int64, p *forgejo.PullRecord, r *forgejo.RepoRecord) {
	if p.Number == nil || p.User == nil || p.User.ID == nil || p.State == nil || p.Merged == nil || p.Base == nil || p.Base.Ref == nil || p.Head == nil || p.Head.SHA == nil {
		b.add(ReasonMalformedRecord, "pull_request", "number, user.id, state, merged, base.ref and head.sha are required")
		return
	}
	if *p.Number != t.PR {
		b.add(ReasonIdentityMismatch, "pull_request", "number is not target.pr")
	}
	if p.Base.RepoID != nil && r.ID != nil && *p.Base.RepoID != *r.ID {
		b.add(ReasonIdentityMismatch, "pull_request", "base.repo_id is not the repository's id")
	}
	if *p.State != "open" || *p.Merged {
		b.add(ReasonPullRequestNotOpen, "pull_request", "the pull request is not open")
	}
	if *p.Head.SHA != t.Head {
		b.add(ReasonHeadMismatch, "pull_request", "head.sha is not the target's head")
	}
	if *p.User.ID != actorID {
		b.add(ReasonAuthorBindingMismatch, "pull_request", "the pull request's author is not --actor-id")
	}
	if r.DefaultBranch != nil && *p.Base.Ref != *r.DefaultBranch {
		b.add(ReasonDefaultBranchMismatch, "pull_request", "base.ref is not the repository's native default_branch")
	}
}

func bindSourceIssue(b *blocker, t *Target, is *forgejo.IssueRecord) {
	if is.Number == nil || is.Body == nil {
		b.add(ReasonMalformedRecord, "source_issue", "number and body are required")
		return
	}
	if *is.Number != t.Issue {
		b.add(ReasonIdentityMismatch, "source_issue", "number is not target.issue")
	}
	if pr := bytes.TrimSpace(is.PullRequest); len(pr) > 0 && string(pr) != "null" {
		b.add(ReasonIdentityMismatch, "source_issue", "the Source Issue is a pull request")
	}
	if firstLine(*is.Body) != DiscoveryDraftLine {
		b.add(ReasonDiscoveryDraftMissing, "source_issue", "the body's first line is not exactly %s", DiscoveryDraftLine)
	}
	sum := sha256.Sum256([]byte(*is.Body))
	if hex.EncodeToString(sum[:]) != t.ContractSHA256 {
		b.add(ReasonContractDigestMismatch, "source_issue", "the SHA-256 of the body's UTF-8 bytes is not contract_sha256")
	}
}

func sourceIssueCheck(m *model) SourceIssueCommentCheck {
	obs, st := counterStatus(m.issue.Comments, len(m.issueComments))
	return SourceIssueCommentCheck{Field: "comments", Observed: obs, Expected: len(m.issueComments), Status: st}
}

var knownStates = map[string]bool{"APPROVED": true, "REQUEST_CHANGES": true, "COMMENT": true, "PENDING": true, "REQUEST_REVIEW": true}

// timeline derives one entry per review and the decision-level blocking reasons. Entries are
// sorted by UTC instant (up to nine fractional digits), then numeric review ID; the raw rows
// are not touched.
//
// pre holds the capture and binding reasons found before the timeline: any blocking reason,
// there or here, makes the decision blocked even when a valid request exists.
func timeline(t *Target, c *Contract, actorID int64, m *model, pre []Blocking) ([]TimelineEntry, []Blocking, Decision) {
	tl := &timelineRun{t: t, c: c, actorID: actorID, blocks: append([]Blocking(nil), pre...)}
	tl.entries = make([]TimelineEntry, 0, len(m.reviews))
	for _, r := range m.reviews {
		tl.entries = append(tl.entries, newEntry(r, len(m.inline[*r.ID])))
	}
	sort.SliceStable(tl.entries, func(i, j int) bool {
		a, b := tl.entries[i], tl.entries[j]
		if !a.instant.Equal(b.instant) {
			return a.instant.Before(b.instant)
		}
		return a.ReviewID < b.ReviewID
	})
	candidates := map[string][]int{}
	for i := range tl.entries {
		if tl.exclude(&tl.entries[i]) {
			role := tl.entries[i].Author.Role
			candidates[role] = append(candidates[role], i)
		}
	}
	d := Decision{BlockingReasons: []Blocking{}, ReworkReviewIDs: []int64{}, MissingCurrentReview: []string{}, Route: RouteNone}
	for _, role := range []string{RoleSpecReviewer, RoleCodeReviewer} {
		if len(candidates[role]) == 0 {
			d.MissingCurrentReview = append(d.MissingCurrentReview, role)
			continue
		}
		tl.selectFor(role, candidates[role], &d)
	}
	for i := range tl.entries {
		if !tl.entries[i].Selected {
			tl.entries[i].Eligible = false
		}
	}
	tl.decide(&d)
	return tl.entries, tl.blocks, d
}

// timelineRun is the state of one timeline derivation: the sorted entries, the blocking
// reasons found so far and the selected reviews' outcomes.
type timelineRun struct {
	t           *Target
	c           *Contract
	actorID     int64
	entries     []TimelineEntry
	blocks      []Blocking
	requests    []int64
	approved    map[string]bool
	blockedSpec bool
}

func (tl *timelineRun) add(r Reason, id int64, format string, a ...any) {
	tl.blocks = append(tl.blocks, Blocking{Reason: r, Subject: fmt.Sprintf("review %d", id), Rule: fmt.Sprintf(format, a...)})
}

// newEntry is the timeline entry of one review row, before classification; ok is false when
// the row lacks a field the decision needs.
func newEntry(r forgejo.ReviewRecord, inline int) TimelineEntry {
	e := TimelineEntry{ReviewID: *r.ID, ExclusionReasons: []string{}, InlineRecords: inline, ok: true}
	e.Author.Role = RoleNone
	if r.User != nil {
		e.Author.ID, e.Author.Login = r.User.ID, r.User.Login
	}
	e.State = deref(r.State)
	e.ReviewedSHA = deref(r.CommitID)
	e.Stale = r.Stale != nil && *r.Stale
	e.Dismissed = r.Dismissed != nil && *r.Dismissed
	body := deref(r.Body)
	sum := sha256.Sum256([]byte(body))
	e.BodySHA256 = hex.EncodeToString(sum[:])
	e.Marker = ParseMarker(body)
	if r.SubmittedAt != nil {
		if ts, err := canon.ParseTime(*r.SubmittedAt); err == nil {
			e.instant = ts
			e.SubmittedAt = canon.FormatTime(ts)
		}
	}
	if r.State == nil || !knownStates[*r.State] || r.Body == nil || r.CommitID == nil || r.Stale == nil || r.Dismissed == nil || e.SubmittedAt == "" {
		e.ok = false
	}
	return e
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// exclude records the entry's role, exclusion reasons and blocking reasons, and reports
// whether the entry is a candidate for its role's selection.
func (tl *timelineRun) exclude(e *TimelineEntry) bool {
	x := func(s string) { e.ExclusionReasons = append(e.ExclusionReasons, s) }
	e.Author.Role = roleOf(e.Author, tl.c, tl.actorID)
	if !e.ok {
		x("malformed_record")
		tl.add(ReasonMalformedRecord, e.ReviewID, "state (a known Gitea review state), body, commit_id, stale, dismissed and an RFC 3339 submitted_at are required")
		return false
	}
	if e.Author.ID != nil && e.Author.Login != nil {
		for _, role := range []Role{tl.c.SpecReviewer, tl.c.CodeReviewer} {
			if (*e.Author.ID == role.ID) != strings.EqualFold(*e.Author.Login, role.Login) {
				x("role_binding_inconsistent")
				tl.add(ReasonRoleBindingInconsistent, e.ReviewID, "the author's native ID and login do not both match one contract role")
			}
		}
	}
	e.CurrentHead = e.ReviewedSHA == tl.t.Head
	current := e.CurrentHead && !e.Stale && !e.Dismissed
	isRole := e.Author.Role == RoleSpecReviewer || e.Author.Role == RoleCodeReviewer
	switch e.State {
	case "REQUEST_REVIEW":
		x("review_request")
	case "PENDING":
		x("pending")
		if isRole && !e.Dismissed {
			tl.add(ReasonPendingReview, e.ReviewID, "a role reviewer's review is pending (not submitted)")
		}
	case "COMMENT":
		x("manual_comment")
		if current {
			tl.add(ReasonCurrentManualComment, e.ReviewID, "a COMMENT review on the current head cannot be classified automatically")
		}
	}
	for _, f := range []struct {
		on     bool
		reason string
	}{{e.Dismissed, "dismissed"}, {e.Stale, "stale"}, {!e.CurrentHead, "old_head"}, {!isRole, "not_role_actor"}} {
		if f.on {
			x(f.reason)
		}
	}
	return len(e.ExclusionReasons) == 0 && (e.State == "APPROVED" || e.State == "REQUEST_CHANGES")
}

// selectFor selects the latest candidate of one role (idx is in timeline order): earlier ones
// are superseded, same-instant disagreement blocks, and the selected marker must be valid.
func (tl *timelineRun) selectFor(role string, idx []int, d *Decision) {
	entries := tl.entries
	latest := idx[len(idx)-1]
	same := []int{}
	for _, i := range idx {
		if entries[i].instant.Equal(entries[latest].instant) {
			same = append(same, i)
		} else {
			entries[i].ExclusionReasons = append(entries[i].ExclusionReasons, "superseded")
		}
	}
	if conflicting(entries, same) {
		for _, i := range same {
			entries[i].ExclusionReasons = append(entries[i].ExclusionReasons, "same_instant_conflict")
		}
		tl.add(ReasonSameInstantConflict, entries[latest].ReviewID, "%d %s reviews share the latest instant with different state, body or marker", len(same), role)
		return
	}
	for _, i := range same[:len(same)-1] {
		entries[i].ExclusionReasons = append(entries[i].ExclusionReasons, "superseded")
	}
	e := &entries[latest]
	if reason, rule := markerProblem(tl.t, role, e); reason != "" {
		e.ExclusionReasons = append(e.ExclusionReasons, string(reason))
		tl.add(reason, e.ReviewID, "%s", rule)
		return
	}
	e.Eligible, e.Selected = true, true
	id := e.ReviewID
	if role == RoleSpecReviewer {
		d.Selected.SpecReviewer = &id
	} else {
		d.Selected.CodeReviewer = &id
	}
	switch {
	case e.Marker.Verdict == VerdictBlockedSpec:
		tl.blockedSpec = true
		tl.add(ReasonBlockedSpec, id, "the spec reviewer's current review is blocked_spec: route to Discovery investigation, not impl repair")
	case e.State == "REQUEST_CHANGES":
		tl.requests = append(tl.requests, id)
	case e.State == "APPROVED":
		if tl.approved == nil {
			tl.approved = map[string]bool{}
		}
		tl.approved[role] = true
	}
}

// decide turns the selections and blocking reasons into the decision and route.
func (tl *timelineRun) decide(d *Decision) {
	requests := tl.requests
	sort.Slice(requests, func(i, j int) bool { return position(tl.entries, requests[i]) < position(tl.entries, requests[j]) })
	switch {
	case len(tl.blocks) > 0:
		d.Decision = DecisionBlocked
		if tl.blockedSpec {
			d.Route = RouteDiscovery
		}
	case len(requests) > 0:
		d.Decision, d.Route, d.ReworkReviewIDs = DecisionRework, RouteImpl, requests
	case tl.approved[RoleSpecReviewer] && tl.approved[RoleCodeReviewer]:
		d.Decision = DecisionNoOp
	default:
		d.Decision = DecisionBlocked
		for _, role := range d.MissingCurrentReview {
			tl.blocks = append(tl.blocks, Blocking{Reason: ReasonMissingCurrentReview, Subject: role, Rule: "no current-head, non-stale, non-dismissed review by this role and no usable request from the other"})
		}
	}
}

func position(entries []TimelineEntry, id int64) int {
	for i := range entries {
		if entries[i].ReviewID == id {
			return i
		}
	}
	return len(entries)
}

// conflicting reports whether same-instant candidates disagree on state, body or marker.
func conflicting(entries []TimelineEntry, idx []int) bool {
	for _, i := range idx[1:] {
		a, b := entries[idx[0]], entries[i]
		if a.State != b.State || a.BodySHA256 != b.BodySHA256 || a.Marker != b.Marker {
			return true
		}
	}
	return false
}

func roleOf(a Author, c *Contract, actorID int64) string {
	if a.ID == nil {
		return RoleNone
	}
	switch *a.ID {
	case c.SpecReviewer.ID:
		return RoleSpecReviewer
	case c.CodeReviewer.ID:
		return RoleCodeReviewer
	case actorID:
		return RoleImpl
	}
	if *a.ID <= 0 {
		return RoleNone
	}
	return RoleOther
}

// markerProblem checks the selected review's canonical marker against its role, head,
// contract and state.
func markerProblem(t *Target, role string, e *TimelineEntry) (Reason, string) {
	want := "code"
	if role == RoleSpecReviewer {
		want = "spec"
	}
	m := e.Marker
	switch {
	case m.Kind == "none" && m.Problem == "":
		return ReasonMarkerMissing, "the review carries no canonical " + want + "-review marker"
	case m.Problem != "":
		return ReasonMarkerInvalid, m.Problem
	case m.Kind != want:
		return ReasonMarkerInvalid, "the marker kind does not match the author's role"
	case m.Head != t.Head || m.Head != e.ReviewedSHA:
		return ReasonMarkerContradiction, "the marker's head is not the current head the review was submitted on"
	case m.Contract != t.ContractSHA256:
		return ReasonMarkerContradiction, "the marker's contract is not the fresh contract_sha256"
	}
	switch {
	case m.Verdict == VerdictApproved && e.State != "APPROVED",
		m.Verdict == VerdictRequestChanges && e.State != "REQUEST_CHANGES",
		m.Verdict == VerdictBlockedSpec && e.State != "REQUEST_CHANGES":
		return ReasonMarkerContradiction, "the marker's verdict contradicts the review state"
	}
	if m.Kind == "spec" {
		if SpecResultDigest(m.resultText) != m.Result {
			return ReasonMarkerContradiction, "the marker's result digest is not the SHA-256 of the result text before the LF separator"
		}
		if SpecCorrelation(t, m.Head, m.Contract, m.Result) != m.Correlation {
			return ReasonMarkerContradiction, "the marker's correlation is not the separator-LF digest of its binding"
		}
	}
	return "", ""
}
