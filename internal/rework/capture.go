package rework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
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

type nUser struct {
	ID    *int64  `json:"id"`
	Login *string `json:"login"`
}

type nRepo struct {
	ID            *int64  `json:"id"`
	Name          *string `json:"name"`
	FullName      *string `json:"full_name"`
	Owner         *nUser  `json:"owner"`
	DefaultBranch *string `json:"default_branch"`
}

type nBranch struct {
	Ref    *string `json:"ref"`
	SHA    *string `json:"sha"`
	RepoID *int64  `json:"repo_id"`
}

type nPull struct {
	ID             *int64          `json:"id"`
	Number         *int64          `json:"number"`
	User           *nUser          `json:"user"`
	State          *string         `json:"state"`
	Merged         *bool           `json:"merged"`
	Base           *nBranch        `json:"base"`
	Head           *nBranch        `json:"head"`
	Comments       json.RawMessage `json:"comments"`
	ReviewComments json.RawMessage `json:"review_comments"`
}

type nIssue struct {
	ID          *int64          `json:"id"`
	Number      *int64          `json:"number"`
	Body        *string         `json:"body"`
	PullRequest json.RawMessage `json:"pull_request"`
	Comments    json.RawMessage `json:"comments"`
}

type nComment struct {
	ID *int64 `json:"id"`
}

type nReview struct {
	ID            *int64          `json:"id"`
	User          *nUser          `json:"user"`
	State         *string         `json:"state"`
	Body          *string         `json:"body"`
	CommitID      *string         `json:"commit_id"`
	Stale         *bool           `json:"stale"`
	Dismissed     *bool           `json:"dismissed"`
	CommentsCount json.RawMessage `json:"comments_count"`
	SubmittedAt   *string         `json:"submitted_at"`
}

type nInline struct {
	ID       *int64 `json:"id"`
	ReviewID *int64 `json:"pull_request_review_id"`
}

// model is the typed view of one capture the decision reads.
type model struct {
	version        string
	repo           nRepo
	pull           nPull
	issue          nIssue
	issueComments  []nComment
	prComments     []nComment
	reviews        []nReview
	inline         map[int64][]nInline
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

// decodeRow decodes one JSON value both generically (numbers as literals, for the raw
// snapshot) and into the typed view v.
func decodeRow(b []byte, v any) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return nil, err
	}
	if _, ok := g.(map[string]any); !ok {
		return nil, errors.New("not a JSON object")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, err
	}
	return g, nil
}

// decodeRows splits a JSON array page into rows, decoding each with decodeRow into a new T.
func decodeRows[T any](b []byte, raw *[]any, typed *[]T) (int, error) {
	var rows []json.RawMessage
	if err := json.Unmarshal(b, &rows); err != nil {
		return 0, decodeErr{"the page is not a JSON array"}
	}
	for i, r := range rows {
		var t T
		g, err := decodeRow(r, &t)
		if err != nil {
			return 0, decodeErr{fmt.Sprintf("row %d is not a well-typed JSON object (%v)", i+1, err)}
		}
		*raw = append(*raw, g)
		*typed = append(*typed, t)
	}
	return len(rows), nil
}

// capture makes one complete capture. It stops at the first failure, returning what it read so
// far and a *captureError.
func capture(ctx context.Context, g *Getter, t *Target) (*Snapshot, *model, error) {
	c := &capturer{ctx: ctx, g: g, t: t,
		s:        &Snapshot{SourceIssueComments: []any{}, PRIssueComments: []any{}, Reviews: []any{}, Inline: []InlineList{}, Provenance: []Provenance{}},
		m:        &model{inline: map[int64][]nInline{}},
		repoPath: "/repos/" + url.PathEscape(t.Owner) + "/" + url.PathEscape(t.Repository)}
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
	ctx      context.Context
	g        *Getter
	t        *Target
	s        *Snapshot
	m        *model
	repoPath string
}

func (c *capturer) object(resource, rel string, typed any) (any, error) {
	body, pg, err := c.g.getObject(c.ctx, rel)
	c.s.Provenance = append(c.s.Provenance, Provenance{Resource: resource, Pages: []Page{pg}})
	if err != nil {
		return nil, classify(resource, err)
	}
	v, err := decodeRow(body, typed)
	if err != nil {
		return nil, capFail(ReasonMalformedRecord, resource, "the response is not a well-typed JSON object (%v)", err)
	}
	return v, nil
}

func (c *capturer) listOf(resource, path string, decode func([]byte) (int, error)) error {
	pages, err := c.g.list(c.ctx, path, decode)
	c.s.Provenance = append(c.s.Provenance, Provenance{Resource: resource, Pages: pages})
	if err != nil {
		return classify(resource, err)
	}
	return nil
}

// objects reads the version, the repository, the pull request and the Source Issue.
func (c *capturer) objects() error {
	var ver struct {
		Version *string `json:"version"`
	}
	var err error
	if c.s.Version, err = c.object("version", "/version", &ver); err != nil {
		return err
	}
	if ver.Version == nil {
		return capFail(ReasonMalformedRecord, "version", "version is missing or not a string")
	}
	c.m.version = *ver.Version
	if c.s.Repository, err = c.object("repository", c.repoPath, &c.m.repo); err != nil {
		return err
	}
	if c.s.PullRequest, err = c.object("pull_request", fmt.Sprintf("%s/pulls/%d", c.repoPath, c.t.PR), &c.m.pull); err != nil {
		return err
	}
	c.s.SourceIssue, err = c.object("source_issue", fmt.Sprintf("%s/issues/%d", c.repoPath, c.t.Issue), &c.m.issue)
	return err
}

// lists reads both comment lists and the reviews, and checks the review IDs.
func (c *capturer) lists() error {
	s, m, t := c.s, c.m, c.t
	if err := c.listOf("source_issue_comments", fmt.Sprintf("%s/issues/%d/comments", c.repoPath, t.Issue), func(b []byte) (int, error) {
		return decodeRows(b, &s.SourceIssueComments, &m.issueComments)
	}); err != nil {
		return err
	}
	if err := c.listOf("pr_issue_comments", fmt.Sprintf("%s/issues/%d/comments", c.repoPath, t.PR), func(b []byte) (int, error) {
		return decodeRows(b, &s.PRIssueComments, &m.prComments)
	}); err != nil {
		return err
	}
	if err := c.listOf("reviews", fmt.Sprintf("%s/pulls/%d/reviews", c.repoPath, t.PR), func(b []byte) (int, error) {
		return decodeRows(b, &s.Reviews, &m.reviews)
	}); err != nil {
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
		var typed []nInline
		resource := fmt.Sprintf("inline review %d", id)
		err := c.listOf(resource, fmt.Sprintf("%s/pulls/%d/reviews/%d/comments", c.repoPath, c.t.PR, id), func(b []byte) (int, error) {
			return decodeRows(b, &list.Records, &typed)
		})
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

func uniqueReviewIDs(reviews []nReview) error {
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
func checkInline(resource string, id int64, typed []nInline, seen map[int64]int64) error {
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

func uniqueIDs(resource string, cs []nComment) error {
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
	var se *StatusError
	if errors.As(err, &se) {
		if len(resource) > 7 && resource[:7] == "inline " && (se.Status == http.StatusNotFound || se.Status == http.StatusMethodNotAllowed) {
			return capFail(ReasonInlineEndpointUnavailable, resource, "the review's inline endpoint answered HTTP %d; a counter-only fallback is not allowed at initial intake", se.Status)
		}
		return capFail(ReasonCaptureFailed, resource, "GET answered HTTP %s", strconv.Itoa(se.Status))
	}
	var pe *PaginationError
	if errors.As(err, &pe) {
		return capFail(ReasonPaginationIncomplete, resource, "%s", pe.Rule)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return capFail(ReasonCaptureFailed, resource, "the request was cancelled or timed out")
	}
	// Decoding failures carry no body text (decodeRows formats its own messages).
	var de decodeErr
	if errors.As(err, &de) {
		return capFail(ReasonMalformedRecord, resource, "%s", de.msg)
	}
	return capFail(ReasonCaptureFailed, resource, "the request failed (%v)", err)
}

type decodeErr struct{ msg string }

func (d decodeErr) Error() string { return d.msg }
