package rework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/forgectx/forgectx/internal/forge/forgejo"
)

// Snapshot is one capture's parsed native records, in provider row order, with body text: the
// receipt's raw_input_snapshot. It is not a byte archive of the HTTP exchange: each row is
// decoded and re-encoded canonically (RFC 8785), numbers kept as literals.
type Snapshot struct {
	Version             any          `json:"version"`
	Repository          any          `json:"repository"`
	PullRequest         any          `json:"pull_request"`
	SourceIssue         any          `json:"source_issue"`
	SourceIssueComments []any        `json:"source_issue_comments"`
	PRIssueComments     []any        `json:"pr_issue_comments"`
	Reviews             []any        `json:"reviews"`
	Inline              []InlineList `json:"inline"`
	Provenance          []Provenance `json:"provenance"`
}

// InlineList is one review's inline (code) comments from its real inline endpoint.
type InlineList struct {
	ReviewID int64 `json:"review_id"`
	Records  []any `json:"records"`
}

// Provenance is the pages one resource was read from.
type Provenance struct {
	Resource string `json:"resource"`
	Pages    []Page `json:"pages"`
}

// model is the typed view of one capture the decision reads.
type model struct {
	version        string
	repo           forgejo.RepoRecord
	pull           forgejo.PullRecord
	issue          forgejo.IssueRecord
	issueComments  []forgejo.CommentRecord
	prComments     []forgejo.CommentRecord
	reviews        []forgejo.ReviewRecord
	inline         map[int64][]forgejo.ReviewCommentRecord
	inlineRecordsN int
}

// captureError is a capture that could not complete; Reason classifies it.
type captureError struct {
	Blocking
}

func (e *captureError) Error() string { return string(e.Reason) + ": " + e.Subject + ": " + e.Rule }

func capFail(r Reason, subject, format string, a ...any) *captureError {
	return &captureError{Blocking{Reason: r, Subject: subject, Rule: fmt.Sprintf(format, a...)}}
}

// native decodes one row the Reader has already checked (a JSON object) generically, numbers
// kept as literals: the raw snapshot's form of it.
func native(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return nil // unreachable: the Reader refused the row
	}
	return g
}

// rowsOf appends l's rows, in the order served, to raw (generic) and typed.
func rowsOf[T any](l forgejo.List[T], raw *[]any, typed *[]T) {
	for _, r := range l.Rows {
		*raw = append(*raw, native(r.Raw))
		*typed = append(*typed, r.Value)
	}
}

// capture makes one complete capture through the forgejo Reader's services. It stops at the
// first failure, returning what it read so far and a *captureError.
func capture(ctx context.Context, rd *forgejo.Reader, t *Target) (*Snapshot, *model, error) {
	c := &capturer{ctx: ctx, rd: rd, repo: rd.Repo(t.Owner, t.Repository), t: t,
		s: &Snapshot{SourceIssueComments: []any{}, PRIssueComments: []any{}, Reviews: []any{}, Inline: []InlineList{}, Provenance: []Provenance{}},
		m: &model{inline: map[int64][]forgejo.ReviewCommentRecord{}}}
	for _, step := range []func() error{c.objects, c.lists, c.inline, func() error {
		if err := uniqueIDs("source_issue_comments", c.m.issueComments); err != nil {
			return err
		}
		return uniqueIDs("pr_issue_comments", c.m.prComments)
	}} {
		if err := step(); err != nil {
			return c.s, c.m, err
		}
	}
	return c.s, c.m, nil
}

// capturer is one capture in progress: what was read (s, m) and where (provenance in s).
type capturer struct {
	ctx  context.Context
	rd   *forgejo.Reader
	repo forgejo.Repo // the target repository's services
	t    *Target
	s    *Snapshot
	m    *model
}

// object records one single-object answer's provenance and returns its raw form, its typed
// view stored in typed.
func object[T any](c *capturer, resource string, o forgejo.Object[T], err error, typed *T) (any, error) {
	c.s.Provenance = append(c.s.Provenance, Provenance{Resource: resource, Pages: []Page{o.Page}})
	if err != nil {
		return nil, classify(resource, err)
	}
	*typed = o.Value
	return native(o.Raw), nil
}

// listOf records one list's rows (raw and typed, also those read before a failure) and its
// provenance.
func listOf[T any](c *capturer, resource string, l forgejo.List[T], err error, raw *[]any, typed *[]T) error {
	rowsOf(l, raw, typed)
	c.s.Provenance = append(c.s.Provenance, Provenance{Resource: resource, Pages: l.Pages})
	if err != nil {
		return classify(resource, err)
	}
	return nil
}

// objects reads the version, the repository, the pull request and the Source Issue.
func (c *capturer) objects() error {
	ver, err := c.rd.Version(c.ctx)
	var vr forgejo.VersionRecord
	if c.s.Version, err = object(c, "version", ver, err, &vr); err != nil {
		return err
	}
	if vr.Version == nil {
		return capFail(ReasonMalformedRecord, "version", "version is missing or not a string")
	}
	c.m.version = *vr.Version
	repo, err := c.repo.Get(c.ctx)
	if c.s.Repository, err = object(c, "repository", repo, err, &c.m.repo); err != nil {
		return err
	}
	pull, err := c.repo.Pulls.Get(c.ctx, c.t.PR)
	if c.s.PullRequest, err = object(c, "pull_request", pull, err, &c.m.pull); err != nil {
		return err
	}
	issue, err := c.repo.Issues.Get(c.ctx, c.t.Issue)
	c.s.SourceIssue, err = object(c, "source_issue", issue, err, &c.m.issue)
	return err
}

// lists reads both comment lists and the reviews, and checks the review IDs.
func (c *capturer) lists() error {
	s, m, t := c.s, c.m, c.t
	ic, err := c.repo.Issues.ListComments(c.ctx, t.Issue)
	if err := listOf(c, "source_issue_comments", ic, err, &s.SourceIssueComments, &m.issueComments); err != nil {
		return err
	}
	pc, err := c.repo.Issues.ListComments(c.ctx, t.PR)
	if err := listOf(c, "pr_issue_comments", pc, err, &s.PRIssueComments, &m.prComments); err != nil {
		return err
	}
	rv, err := c.repo.Reviews.List(c.ctx, t.PR)
	if err := listOf(c, "reviews", rv, err, &s.Reviews, &m.reviews); err != nil {
		return err
	}
	return uniqueReviewIDs(m.reviews)
}

// inline reads every review's inline comment list, in review order.
func (c *capturer) inline() error {
	seen := map[int64]int64{}
	for _, r := range c.m.reviews {
		id := *r.ID
		list := InlineList{ReviewID: id, Records: []any{}}
		var typed []forgejo.ReviewCommentRecord
		resource := fmt.Sprintf("inline review %d", id)
		l, err := c.repo.ReviewComments.List(c.ctx, c.t.PR, id)
		err = listOf(c, resource, l, err, &list.Records, &typed)
		c.s.Inline = append(c.s.Inline, list)
		if err != nil {
			return err
		}
		if err := checkInline(resource, id, typed, seen); err != nil {
			return err
		}
		c.m.inline[id] = typed
		c.m.inlineRecordsN += len(typed)
	}
	return nil
}

func uniqueReviewIDs(reviews []forgejo.ReviewRecord) error {
	seen := map[int64]bool{}
	for i, r := range reviews {
		if r.ID == nil || *r.ID <= 0 {
			return capFail(ReasonMalformedRecord, fmt.Sprintf("reviews row %d", i+1), "id is missing or not a positive integer")
		}
		if seen[*r.ID] {
			return capFail(ReasonDuplicateRecordID, fmt.Sprintf("review %d", *r.ID), "the review ID is listed twice")
		}
		seen[*r.ID] = true
	}
	return nil
}

// checkInline checks one review's inline rows: positive IDs, bound to the endpoint's review,
// and each inline comment ID listed once across every review (seen maps ID to review).
func checkInline(resource string, id int64, typed []forgejo.ReviewCommentRecord, seen map[int64]int64) error {
	for j, c := range typed {
		if c.ID == nil || *c.ID <= 0 {
			return capFail(ReasonMalformedRecord, fmt.Sprintf("%s row %d", resource, j+1), "id is missing or not a positive integer")
		}
		if c.ReviewID != nil && *c.ReviewID != id {
			return capFail(ReasonIdentityMismatch, fmt.Sprintf("inline comment %d", *c.ID), "pull_request_review_id names another review than the endpoint's")
		}
		if other, dup := seen[*c.ID]; dup {
			where := "twice in the same review's inline list"
			if other != id {
				where = fmt.Sprintf("in the inline lists of reviews %d and %d", other, id)
			}
			return capFail(ReasonDuplicateRecordID, fmt.Sprintf("inline comment %d", *c.ID), "the inline comment ID appears %s", where)
		}
		seen[*c.ID] = id
	}
	return nil
}

func uniqueIDs(resource string, cs []forgejo.CommentRecord) error {
	seen := map[int64]bool{}
	for i, c := range cs {
		if c.ID == nil || *c.ID <= 0 {
			return capFail(ReasonMalformedRecord, fmt.Sprintf("%s row %d", resource, i+1), "id is missing or not a positive integer")
		}
		if seen[*c.ID] {
			return capFail(ReasonDuplicateRecordID, fmt.Sprintf("%s comment %d", resource, *c.ID), "the comment ID is listed twice")
		}
		seen[*c.ID] = true
	}
	return nil
}

// classify turns a GET or pagination failure into a typed capture failure. A 404 or 405 of a
// review's inline endpoint is inline_endpoint_unavailable: the initial gate has no
// counter-only fallback, whatever the contract declares.
func classify(resource string, err error) error {
	var ce *captureError
	if errors.As(err, &ce) {
		return ce
	}
	var se *forgejo.StatusError
	if errors.As(err, &se) {
		if len(resource) > 7 && resource[:7] == "inline " && (se.Status == http.StatusNotFound || se.Status == http.StatusMethodNotAllowed) {
			return capFail(ReasonInlineEndpointUnavailable, resource, "the review's inline endpoint answered HTTP %d; a counter-only fallback is not allowed at initial intake", se.Status)
		}
		return capFail(ReasonCaptureFailed, resource, "GET answered HTTP %s", strconv.Itoa(se.Status))
	}
	var pe *forgejo.PaginationError
	if errors.As(err, &pe) {
		return capFail(ReasonPaginationIncomplete, resource, "%s", pe.Rule)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return capFail(ReasonCaptureFailed, resource, "the request was cancelled or timed out")
	}
	// Decoding failures carry no body text (the Reader formats its own messages).
	var de *forgejo.DecodeError
	if errors.As(err, &de) {
		return capFail(ReasonMalformedRecord, resource, "%s", de.Msg)
	}
	return capFail(ReasonCaptureFailed, resource, "the request failed (%v)", err)
}
