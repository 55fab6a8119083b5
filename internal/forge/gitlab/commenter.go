package gitlab

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/retry"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Commenter implements forge.Commenter on GitLab notes of one entity kind (merge requests for
// change_proposal, issues for work_item: forge.Ref carries only the iid). System notes are
// never candidates. A CI job token cannot create notes or read /user; use an access token.
type Commenter struct {
	c    *Client
	kind string

	mu   sync.Mutex
	self int64 // the token's own user id, read once from GET /user
}

var _ forge.Commenter = (*Commenter)(nil)

// newCommenter returns the commenter for entities of kind (acquisition.KindChangeProposal or
// acquisition.KindWorkItem).
func newCommenter(c *Client, kind string) (*Commenter, error) {
	if kind != acquisition.KindChangeProposal && kind != acquisition.KindWorkItem {
		return nil, fmt.Errorf("gitlab: commenter kind %q: must be work_item or change_proposal", kind)
	}
	return &Commenter{c: c, kind: kind}, nil
}

func (m *Commenter) target(ref forge.Ref) (any, int64, error) {
	if ref.Number < 1 {
		return nil, 0, fmt.Errorf("gitlab: number %d: must be a positive iid", ref.Number)
	}
	pid, err := projectID(ref.Repo)
	return pid, int64(ref.Number), err
}

func (m *Commenter) whoami(ctx context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.self > 0 {
		return m.self, nil
	}
	u, _, err := m.c.Services().Users.Current(ctx)
	if err != nil {
		return 0, fmt.Errorf("gitlab: current user: %w", quiet(err))
	}
	if u.ID <= 0 {
		return 0, errors.New("gitlab: current user: id missing")
	}
	m.self = u.ID
	return m.self, nil
}

// FindComments returns, in forge order, the non-system notes on the entity whose body
// contains marker and whose author is the token's own user, across all pages.
func (m *Commenter) FindComments(ctx context.Context, ref forge.Ref, marker string) ([]forge.Comment, error) {
	if marker == "" {
		return nil, errors.New("gitlab: find comments: marker: must not be empty")
	}
	pid, iid, err := m.target(ref)
	if err != nil {
		return nil, err
	}
	self, err := m.whoami(ctx)
	if err != nil {
		return nil, err
	}
	sortAsc, orderBy := "asc", "created_at"
	var notes []*gl.Note
	if m.kind == acquisition.KindChangeProposal {
		opt := &gl.ListMergeRequestNotesOptions{ListOptions: gl.ListOptions{PerPage: PerPage}, OrderBy: &orderBy, Sort: &sortAsc}
		notes, err = all(ctx, func(o ...gl.RequestOptionFunc) ([]*gl.Note, *gl.Response, error) {
			return m.c.gl.Notes.ListMergeRequestNotes(pid, iid, opt, o...)
		})
	} else {
		opt := &gl.ListIssueNotesOptions{ListOptions: gl.ListOptions{PerPage: PerPage}, OrderBy: &orderBy, Sort: &sortAsc}
		notes, err = all(ctx, func(o ...gl.RequestOptionFunc) ([]*gl.Note, *gl.Response, error) {
			return m.c.gl.Notes.ListIssueNotes(pid, iid, opt, o...)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("gitlab: list notes: %w", quiet(err))
	}
	var out []forge.Comment
	for _, n := range notes {
		if n == nil || n.System || n.Author.ID != self || !strings.Contains(n.Body, marker) {
			continue
		}
		out = append(out, toComment(n))
	}
	return out, nil
}

func toComment(n *gl.Note) forge.Comment {
	return forge.Comment{ID: strconv.FormatInt(n.ID, 10), AuthorID: strconv.FormatInt(n.Author.ID, 10), Body: n.Body}
}

// CreateComment posts a note. Only a 429 is retried: after a 5xx the note may exist, and a
// retry would post it twice.
func (m *Commenter) CreateComment(ctx context.Context, ref forge.Ref, body string) (forge.Comment, error) {
	pid, iid, err := m.target(ref)
	if err != nil {
		return forge.Comment{}, err
	}
	opts := []gl.RequestOptionFunc{gl.WithContext(retry.Once(ctx))}
	var n *gl.Note
	if m.kind == acquisition.KindChangeProposal {
		n, _, err = m.c.gl.Notes.CreateMergeRequestNote(pid, iid, &gl.CreateMergeRequestNoteOptions{Body: &body}, opts...)
	} else {
		n, _, err = m.c.gl.Notes.CreateIssueNote(pid, iid, &gl.CreateIssueNoteOptions{Body: &body}, opts...)
	}
	if err != nil {
		return forge.Comment{}, fmt.Errorf("gitlab: create note: %w", quiet(err))
	}
	if n.ID <= 0 {
		return forge.Comment{}, errors.New("gitlab: create note: answer has no note id")
	}
	return toComment(n), nil
}

// UpdateComment replaces a note's body (PUT is idempotent, so the ordinary retries apply).
func (m *Commenter) UpdateComment(ctx context.Context, ref forge.Ref, id string, body string) error {
	pid, iid, err := m.target(ref)
	if err != nil {
		return err
	}
	if !numericID.MatchString(id) {
		return fmt.Errorf("gitlab: update note: id %q: must be a positive base-10 note id", id)
	}
	nid, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return fmt.Errorf("gitlab: update note: id %q: %w", id, err)
	}
	if m.kind == acquisition.KindChangeProposal {
		_, _, err = m.c.gl.Notes.UpdateMergeRequestNote(pid, iid, nid, &gl.UpdateMergeRequestNoteOptions{Body: &body}, gl.WithContext(ctx))
	} else {
		_, _, err = m.c.gl.Notes.UpdateIssueNote(pid, iid, nid, &gl.UpdateIssueNoteOptions{Body: &body}, gl.WithContext(ctx))
	}
	if err != nil {
		return fmt.Errorf("gitlab: update note %s: %w", id, quiet(err))
	}
	return nil
}
