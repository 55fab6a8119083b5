package gitlab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/retry"
)

// Services is the GitLab API forgectx reads and writes, one typed service per API area (the
// habit of go-github's client): every caller — the snapshot acquisition, the commenter and
// review context (acquisition and posting) — reaches GitLab through these, on one Client
// (its auth, retry, redirect and counting policy). Project IDs (pid) are a numeric ID or a
// full path, as client-go takes them. Every list reads through forge.Paginate by the
// ListOptions its caller passes; the caller's own options struct (page size, filters, an
// explicit first page) shapes the first request, and the pagination options replace only the
// page of the ones after.
type Services struct {
	MergeRequests *MergeRequestsService
	Discussions   *DiscussionsService
	Pipelines     *PipelinesService
	Members       *MembersService
	Repository    *RepositoryService
	Users         *UsersService
}

// service is what every API area holds: the one client.
type service struct{ c *Client }

// MergeRequestsService reads a merge request and approves one.
type MergeRequestsService service

// DiscussionsService lists and opens discussions (threads of notes) on merge requests and
// issues.
type DiscussionsService service

// PipelinesService lists a project's pipelines and a pipeline's jobs.
type PipelinesService service

// MembersService reads project membership.
type MembersService service

// RepositoryService reads branches, trees and blobs.
type RepositoryService service

// UsersService reads users.
type UsersService service

// Services returns the client's typed services.
func (c *Client) Services() *Services {
	s := service{c: c}
	return &Services{
		MergeRequests: (*MergeRequestsService)(&s),
		Discussions:   (*DiscussionsService)(&s),
		Pipelines:     (*PipelinesService)(&s),
		Members:       (*MembersService)(&s),
		Repository:    (*RepositoryService)(&s),
		Users:         (*UsersService)(&s),
	}
}

// Open is the registry provider's Open (forge.Options: the same auth, retry and transport)
// that also returns the connection client's typed services: a capability GitLab alone
// offers (review context) opens the adapter through the provider options and reads through
// Services, never through a client of its own.
func Open(o forge.Options) (*forge.Conn, *Services, error) {
	conn, c, err := open(o)
	if err != nil {
		return nil, nil, err
	}
	return conn, c.Services(), nil
}

// Get reads merge request iid of project pid.
func (s *MergeRequestsService) Get(ctx context.Context, pid any, iid int64) (*gl.MergeRequest, *gl.Response, error) {
	return s.c.gl.MergeRequests.GetMergeRequest(pid, iid, nil, gl.WithContext(ctx))
}

// Approve approves merge request iid at head sha. An approval is sent once: it is retried
// only after a rate limit, never after a server error (retry.Once).
func (s *MergeRequestsService) Approve(ctx context.Context, pid any, iid int64, sha string) (*gl.Response, error) {
	_, resp, err := s.c.gl.MergeRequestApprovals.ApproveMergeRequest(pid, iid, &gl.ApproveMergeRequestOptions{SHA: gl.Ptr(sha)}, gl.WithContext(retry.Once(ctx)))
	return resp, err
}

// ListMergeRequest lists the discussions of merge request iid, in the order GitLab serves
// them, by lo's pagination rules.
func (s *DiscussionsService) ListMergeRequest(ctx context.Context, pid any, iid int64, opt *gl.ListMergeRequestDiscussionsOptions, lo ListOptions[*gl.Discussion]) (List[*gl.Discussion], error) {
	return listOn(ctx, s.c, lo, func(o ...gl.RequestOptionFunc) ([]*gl.Discussion, *gl.Response, error) {
		return s.c.gl.Discussions.ListMergeRequestDiscussions(pid, iid, opt, o...)
	})
}

// ListIssue lists the discussions of issue iid, in the order GitLab serves them, by lo's
// pagination rules.
func (s *DiscussionsService) ListIssue(ctx context.Context, pid any, iid int64, opt *gl.ListIssueDiscussionsOptions, lo ListOptions[*gl.Discussion]) (List[*gl.Discussion], error) {
	return listOn(ctx, s.c, lo, func(o ...gl.RequestOptionFunc) ([]*gl.Discussion, *gl.Response, error) {
		return s.c.gl.Discussions.ListIssueDiscussions(pid, iid, opt, o...)
	})
}

// CreateMergeRequest opens a discussion on merge request iid. A create is sent once: it is
// retried only after a rate limit, never after a server error (the discussion may exist
// already; retry.Once). The response is returned with the error so that the caller can tell
// a refused position (400) from a failure.
func (s *DiscussionsService) CreateMergeRequest(ctx context.Context, pid any, iid int64, opt *gl.CreateMergeRequestDiscussionOptions) (*gl.Discussion, *gl.Response, error) {
	return s.c.gl.Discussions.CreateMergeRequestDiscussion(pid, iid, opt, gl.WithContext(retry.Once(ctx)))
}

// ListProject lists the project's pipelines by opt's filters and lo's pagination rules.
func (s *PipelinesService) ListProject(ctx context.Context, pid any, opt *gl.ListProjectPipelinesOptions, lo ListOptions[*gl.PipelineInfo]) (List[*gl.PipelineInfo], error) {
	return listOn(ctx, s.c, lo, func(o ...gl.RequestOptionFunc) ([]*gl.PipelineInfo, *gl.Response, error) {
		return s.c.gl.Pipelines.ListProjectPipelines(pid, opt, o...)
	})
}

// ListJobs lists the jobs of pipeline id by opt's filters and lo's pagination rules.
func (s *PipelinesService) ListJobs(ctx context.Context, pid any, id int64, opt *gl.ListJobsOptions, lo ListOptions[*gl.Job]) (List[*gl.Job], error) {
	return listOn(ctx, s.c, lo, func(o ...gl.RequestOptionFunc) ([]*gl.Job, *gl.Response, error) {
		return s.c.gl.Jobs.ListPipelineJobs(pid, id, opt, o...)
	})
}

// Member is the members API row forgectx reads. client-go's ProjectMember has no
// membership_state, which decides whether an awaiting member holds its access level.
type Member struct {
	ID              int64                `json:"id"`
	State           string               `json:"state"`
	MembershipState string               `json:"membership_state"`
	AccessLevel     *gl.AccessLevelValue `json:"access_level"`
}

// Inherited reads GET /projects/:id/members/all/:user_id (direct, inherited from ancestor
// groups, and invited-group membership) through client-go's request machinery.
func (s *MembersService) Inherited(ctx context.Context, pid any, uid int64) (*Member, error) {
	req, err := s.c.gl.NewRequest(http.MethodGet, fmt.Sprintf("projects/%s/members/all/%d", url.PathEscape(fmt.Sprint(pid)), uid), nil, []gl.RequestOptionFunc{gl.WithContext(ctx)})
	if err != nil {
		return nil, err
	}
	var m Member
	if _, err := s.c.gl.Do(req, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Branch reads one branch (its protected flag and head commit).
func (s *RepositoryService) Branch(ctx context.Context, pid any, name string) (*gl.Branch, *gl.Response, error) {
	return s.c.gl.Branches.GetBranch(pid, name, gl.WithContext(ctx))
}

// Tree lists a repository tree by opt (path, ref) and lo's pagination rules.
func (s *RepositoryService) Tree(ctx context.Context, pid any, opt *gl.ListTreeOptions, lo ListOptions[*gl.TreeNode]) (List[*gl.TreeNode], error) {
	return listOn(ctx, s.c, lo, func(o ...gl.RequestOptionFunc) ([]*gl.TreeNode, *gl.Response, error) {
		return s.c.gl.Repositories.ListTree(pid, opt, o...)
	})
}

// ErrOverBound is a raw read that reached its byte bound; nothing of it is returned.
var ErrOverBound = errors.New("gitlab: response over its byte bound")

// Blob reads the raw bytes of blob sha, at most max of them: a larger blob is ErrOverBound,
// found while reading (the copy stops at the bound), never by trusting a declared length.
func (s *RepositoryService) Blob(ctx context.Context, pid any, sha string, max int) ([]byte, error) {
	path := "projects/" + url.PathEscape(fmt.Sprint(pid)) + "/repository/blobs/" + url.PathEscape(sha) + "/raw"
	req, err := s.c.gl.NewRequest(http.MethodGet, path, nil, []gl.RequestOptionFunc{gl.WithContext(ctx)})
	if err != nil {
		return nil, err
	}
	w := &boundWriter{n: max}
	if _, err := s.c.gl.Do(req, w); err != nil {
		if errors.Is(err, ErrOverBound) {
			return nil, ErrOverBound
		}
		return nil, err
	}
	return w.buf, nil
}

// boundWriter accepts at most n bytes and then fails, which stops client-go's io.Copy.
type boundWriter struct {
	buf []byte
	n   int
}

func (w *boundWriter) Write(p []byte) (int, error) {
	if len(w.buf)+len(p) > w.n {
		return 0, ErrOverBound
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// Current reads the token's own user (GET /user).
func (s *UsersService) Current(ctx context.Context) (*gl.User, *gl.Response, error) {
	return s.c.gl.Users.CurrentUser(gl.WithContext(ctx))
}

// Get reads user uid.
func (s *UsersService) Get(ctx context.Context, uid int64) (*gl.User, *gl.Response, error) {
	return s.c.gl.Users.GetUser(uid, gl.GetUsersOptions{}, gl.WithContext(ctx))
}

// listOn is list with the client's --concurrency as the read-ahead width, unless lo names one.
func listOn[T any](ctx context.Context, c *Client, lo ListOptions[T], fetch listFunc[T]) (List[T], error) {
	lo.Workers = cmp.Or(lo.Workers, c.opts.Concurrency)
	return list(ctx, fetch, lo)
}
