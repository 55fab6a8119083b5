package forgejo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
)

// The typed services of the Reader, one per API area. Each answer keeps the provider's bytes
// (Raw) beside a typed view (Value) whose pointer fields tell an absent or null field from a
// zero one, so a caller can both archive what the server said and refuse a malformed record.
// Rows keep the order the server served them in; which orders carry meaning is the caller's
// decision (docs/forgejo.md, "Strict reader").

// UserRef is a user as a row names it.
type UserRef struct {
	ID    *int64  `json:"id"`
	Login *string `json:"login"`
}

// RepoRecord is GET /repos/{owner}/{repo}.
type RepoRecord struct {
	ID            *int64   `json:"id"`
	Name          *string  `json:"name"`
	FullName      *string  `json:"full_name"`
	Owner         *UserRef `json:"owner"`
	DefaultBranch *string  `json:"default_branch"`
}

// BranchRef is a pull request's base or head.
type BranchRef struct {
	Ref    *string `json:"ref"`
	SHA    *string `json:"sha"`
	RepoID *int64  `json:"repo_id"`
}

// PullRecord is GET /repos/{owner}/{repo}/pulls/{n}. The counters are kept raw: a caller
// decides how strictly a counter must be an integer.
type PullRecord struct {
	ID             *int64          `json:"id"`
	Number         *int64          `json:"number"`
	User           *UserRef        `json:"user"`
	State          *string         `json:"state"`
	Merged         *bool           `json:"merged"`
	Base           *BranchRef      `json:"base"`
	Head           *BranchRef      `json:"head"`
	Comments       json.RawMessage `json:"comments"`
	ReviewComments json.RawMessage `json:"review_comments"`
}

// IssueRecord is GET /repos/{owner}/{repo}/issues/{n}.
type IssueRecord struct {
	ID          *int64          `json:"id"`
	Number      *int64          `json:"number"`
	Body        *string         `json:"body"`
	PullRequest json.RawMessage `json:"pull_request"`
	Comments    json.RawMessage `json:"comments"`
}

// CommentRecord is one row of GET /repos/{owner}/{repo}/issues/{n}/comments.
type CommentRecord struct {
	ID *int64 `json:"id"`
}

// ReviewRecord is one row of GET /repos/{owner}/{repo}/pulls/{n}/reviews.
type ReviewRecord struct {
	ID            *int64          `json:"id"`
	User          *UserRef        `json:"user"`
	State         *string         `json:"state"`
	Body          *string         `json:"body"`
	CommitID      *string         `json:"commit_id"`
	Stale         *bool           `json:"stale"`
	Dismissed     *bool           `json:"dismissed"`
	CommentsCount json.RawMessage `json:"comments_count"`
	SubmittedAt   *string         `json:"submitted_at"`
}

// ReviewCommentRecord is one row of GET /repos/{owner}/{repo}/pulls/{n}/reviews/{id}/comments.
type ReviewCommentRecord struct {
	ID       *int64 `json:"id"`
	ReviewID *int64 `json:"pull_request_review_id"`
}

// VersionRecord is GET /version.
type VersionRecord struct {
	Version *string `json:"version"`
}

// Object is one single-object answer: the body as sent, its typed view and its provenance.
type Object[T any] struct {
	Raw   json.RawMessage
	Value T
	Page  RawPage
}

// Row is one list row: its bytes as sent and its typed view.
type Row[T any] struct {
	Raw   json.RawMessage
	Value T
}

// List is one list read: its rows in the order served and the provenance of every page.
type List[T any] struct {
	Rows  []Row[T]
	Pages []RawPage
}

// DecodeObject checks that b is one well-typed JSON object and decodes it into a T.
func DecodeObject[T any](b []byte) (T, error) {
	var v T
	if err := decodeRecord(b, &v); err != nil {
		return v, &DecodeError{Msg: fmt.Sprintf("the response is not a well-typed JSON object (%v)", err)}
	}
	return v, nil
}

// DecodeRows splits a JSON array page into rows, checking each is a well-typed JSON object.
// On a bad row it returns the rows before it with the error (a caller archiving what was read
// keeps them).
func DecodeRows[T any](b []byte) ([]Row[T], error) {
	var rows []json.RawMessage
	if err := json.Unmarshal(b, &rows); err != nil {
		return nil, &DecodeError{Msg: "the page is not a JSON array"}
	}
	out := make([]Row[T], 0, len(rows))
	for i, r := range rows {
		var v T
		if err := decodeRecord(r, &v); err != nil {
			return out, &DecodeError{Msg: fmt.Sprintf("row %d is not a well-typed JSON object (%v)", i+1, err)}
		}
		out = append(out, Row[T]{Raw: r, Value: v})
	}
	return out, nil
}

// decodeRecord checks that b is one JSON object (numbers read as literals, so no number is
// refused for its size) and decodes it into v.
func decodeRecord(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return err
	}
	if _, ok := g.(map[string]any); !ok {
		return errors.New("not a JSON object")
	}
	return json.Unmarshal(b, v)
}

// object reads one single-object endpoint into an Object[T]. The provenance is filled even
// when the read or the decoding fails.
func object[T any](ctx context.Context, r *Reader, rel string) (Object[T], error) {
	body, pg, err := r.getObject(ctx, rel)
	o := Object[T]{Page: pg}
	if err != nil {
		return o, err
	}
	v, err := DecodeObject[T](body)
	if err != nil {
		return o, err
	}
	o.Raw, o.Value = body, v
	return o, nil
}

// readAll reads every page of one list endpoint into a List[T]: the rows read so far and every
// page's provenance are returned with an error too.
func readAll[T any](ctx context.Context, r *Reader, path string) (List[T], error) {
	var l List[T]
	pages, err := r.list(ctx, path, func(b []byte) (int, error) {
		rows, err := DecodeRows[T](b)
		l.Rows = append(l.Rows, rows...)
		if err != nil {
			return 0, err
		}
		return len(rows), nil
	})
	l.Pages = pages
	return l, err
}

// Version reads GET /version.
func (r *Reader) Version(ctx context.Context) (Object[VersionRecord], error) {
	return object[VersionRecord](ctx, r, "/version")
}

// scope is one repository of one Reader: what every service of that repository shares.
type scope struct {
	r    *Reader
	path string // /repos/{owner}/{repo}, escaped
}

// Repo is the typed services of one repository, one per API area.
type Repo struct {
	scope
	Pulls          PullService
	Issues         IssueService
	Reviews        ReviewService
	ReviewComments ReviewCommentService
	Actions        ActionService
	Commits        CommitService
	Collaborators  CollaboratorService
}

// Repo returns the services of repository owner/name.
func (r *Reader) Repo(owner, name string) Repo {
	sc := scope{r: r, path: "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(name)}
	return Repo{scope: sc, Pulls: PullService{sc}, Issues: IssueService{sc}, Reviews: ReviewService{sc}, ReviewComments: ReviewCommentService{sc},
		Actions: ActionService{sc}, Commits: CommitService{sc}, Collaborators: CollaboratorService{sc}}
}

// Get reads GET /repos/{owner}/{repo}.
func (p Repo) Get(ctx context.Context) (Object[RepoRecord], error) {
	return object[RepoRecord](ctx, p.r, p.path)
}

// PullService reads pull requests.
type PullService struct{ scope }

// Get reads GET /repos/{owner}/{repo}/pulls/{n}.
func (s PullService) Get(ctx context.Context, n int64) (Object[PullRecord], error) {
	return object[PullRecord](ctx, s.r, fmt.Sprintf("%s/pulls/%d", s.path, n))
}

// IssueService reads issues and their comments (a pull request is an issue too: its
// conversation comments are its issue's).
type IssueService struct{ scope }

// Get reads GET /repos/{owner}/{repo}/issues/{n}.
func (s IssueService) Get(ctx context.Context, n int64) (Object[IssueRecord], error) {
	return object[IssueRecord](ctx, s.r, fmt.Sprintf("%s/issues/%d", s.path, n))
}

// ListComments reads every page of GET /repos/{owner}/{repo}/issues/{n}/comments.
func (s IssueService) ListComments(ctx context.Context, n int64) (List[CommentRecord], error) {
	return readAll[CommentRecord](ctx, s.r, fmt.Sprintf("%s/issues/%d/comments", s.path, n))
}

// ReviewService reads pull request reviews.
type ReviewService struct{ scope }

// List reads every page of GET /repos/{owner}/{repo}/pulls/{n}/reviews (Gitea sends
// X-Total-Count and no Link on it).
func (s ReviewService) List(ctx context.Context, pr int64) (List[ReviewRecord], error) {
	return readAll[ReviewRecord](ctx, s.r, fmt.Sprintf("%s/pulls/%d/reviews", s.path, pr))
}

// ReviewCommentService reads a review's inline (code) comments.
type ReviewCommentService struct{ scope }

// List reads every page of GET /repos/{owner}/{repo}/pulls/{n}/reviews/{id}/comments. Gitea
// serves these rows in no fixed order (it iterates a map), so two reads of an unchanged
// review may differ in order only.
func (s ReviewCommentService) List(ctx context.Context, pr, review int64) (List[ReviewCommentRecord], error) {
	return readAll[ReviewCommentRecord](ctx, s.r, fmt.Sprintf("%s/pulls/%d/reviews/%d/comments", s.path, pr, review))
}
