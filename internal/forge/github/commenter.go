package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v66/github"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/forge/retry"
)

// ActionsBotLogin is the account every comment written with a GitHub Actions GITHUB_TOKEN is
// attributed to.
const ActionsBotLogin = "github-actions[bot]"

// Commenter implements forge.Commenter on the conversation comments of an issue or pull
// request (docs/run.md, "Status comment").
//
// GITHUB_TOKEN cannot call GET /user, so the token's own identity is not looked up: it is the
// configured Login (github-actions[bot] for GITHUB_TOKEN, the App's "<slug>[bot]" for an App
// token, the user for a PAT). FindComments accepts a comment only when its author's login
// equals Login (GitHub logins are case-insensitive) and, for a "[bot]" login, GitHub reports
// the author as type Bot — so a human can never make forgectx adopt, and later overwrite,
// their comment. The caller remembers the ID of the comment it created or adopted and edits
// that ID; it never searches again within a run. CreateComment reports the author GitHub
// actually attributed the comment to, so a misconfigured Login is visible at once.
type Commenter struct {
	c      *Client
	login  string
	create *gh.Client // retries only rate-limit refusals: a retried POST after a 5xx may post twice
}

var _ forge.Commenter = (*Commenter)(nil)

// NewCommenter returns the commenter whose own identity is login.
func NewCommenter(c *Client, login string) (*Commenter, error) {
	if strings.TrimSpace(login) == "" || strings.ContainsAny(login, " \t\r\n/") {
		return nil, errors.New("github: commenter: login: required, a GitHub login such as github-actions[bot]")
	}
	// Creation has its own retrying client: the shared policy under retry.Once (only a rate-limit
	// refusal is retried), at most three attempts, waits capped at a minute.
	rc := retryablehttp.NewClient()
	rc.HTTPClient = &http.Client{Transport: c.counter, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	pol := newPolicy(retry.Limits{Max: 2, WaitMin: time.Second, WaitMax: time.Minute, MaxServerWait: time.Minute}, c.log)
	pol.Limiter = c.limiter
	pol.Apply(rc)
	hc := retry.StandardClient(rc)
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	create := gh.NewClient(hc)
	create.BaseURL = c.rest.BaseURL
	create.UserAgent = c.rest.UserAgent
	if c.token != "" {
		create = create.WithAuthToken(c.token)
	}
	return &Commenter{c: c, login: login, create: create}, nil
}

// Login is the identity the commenter treats as its own.
func (m *Commenter) Login() string { return m.login }

// splitRef checks the reference with parseRepo's alphabet (no "." or ".." segment), so a
// comment write can never be steered to another API path.
func splitRef(ref forge.Ref) (string, string, error) {
	owner, name, err := parseRepo(ref.Repo)
	if err != nil {
		return "", "", fmt.Errorf("github: %w", err)
	}
	if ref.Number < 1 {
		return "", "", fmt.Errorf("github: number %d: must be positive", ref.Number)
	}
	return owner, name, nil
}

// own reports whether u is the commenter's identity.
func (m *Commenter) own(u *gh.User) bool { return isIdentity(u, m.login) }

// isIdentity reports whether u is the account login names: the login compared
// case-insensitively (GitHub logins are) and, for a "[bot]" login, GitHub reporting the
// account as type Bot (no user account can take a "[bot]" login, so the pair is unique).
func isIdentity(u *gh.User, login string) bool {
	if u == nil || login == "" || !strings.EqualFold(u.GetLogin(), login) {
		return false
	}
	if strings.HasSuffix(strings.ToLower(login), "[bot]") {
		return u.GetType() == "Bot"
	}
	return true
}

// firstLine is the first line of body without a trailing CR.
func firstLine(body string) string {
	first, _, _ := strings.Cut(body, "\n")
	return strings.TrimSuffix(first, "\r")
}

// FindComments returns, oldest first, the comments on the entity whose FIRST line is exactly
// marker and whose author is the commenter's identity, reading every page (100 per page).
// Marker text elsewhere in a body never counts.
func (m *Commenter) FindComments(ctx context.Context, ref forge.Ref, marker string) ([]forge.Comment, error) {
	if marker == "" || strings.ContainsAny(marker, "\r\n") {
		return nil, errors.New("github: find comments: marker: must be one non-empty line")
	}
	owner, name, err := splitRef(ref)
	if err != nil {
		return nil, err
	}
	const endpoint = "GET /repos/{owner}/{repo}/issues/{number}/comments"
	var out []forge.Comment
	// Each page is decoded one comment at a time and only a marked comment keeps its body, so
	// memory stays a few MiB whatever the answer holds (maxListedComment).
	keep := func(c *gh.IssueComment) *gh.IssueComment {
		if firstLine(c.GetBody()) == marker {
			return c
		}
		return &gh.IssueComment{ID: c.ID, User: c.User}
	}
	list := func(ctx context.Context, opt gh.ListOptions) ([]*gh.IssueComment, *gh.Response, error) {
		return m.c.listCommentsStreamed(ctx, owner, name, ref.Number, opt, keep)
	}
	_, _, err = pagesREST(withEndpoint(ctx, endpoint), 1, endpoint, nil, restRows(list), func(items []*gh.IssueComment) {
		for _, c := range items {
			if firstLine(c.GetBody()) == marker && m.own(c.User) && c.GetID() > 0 {
				out = append(out, toComment(c))
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("github: list comments: %w", quietErr(err))
	}
	return out, nil
}

func toComment(c *gh.IssueComment) forge.Comment {
	return forge.Comment{ID: strconv.FormatInt(c.GetID(), 10), AuthorID: c.GetUser().GetNodeID(), Body: c.GetBody()}
}

// CreateComment posts a comment. It is retried only when GitHub refused it with a rate limit
// (429, or 403 with Retry-After or an exhausted x-ratelimit-remaining: the comment was not
// created), waiting what GitHub asks up to one minute, at most three attempts; never after a
// 5xx or a transport error, where the comment may exist (retry.Once).
func (m *Commenter) CreateComment(ctx context.Context, ref forge.Ref, body string) (forge.Comment, error) {
	owner, name, err := splitRef(ref)
	if err != nil {
		return forge.Comment{}, err
	}
	ctx = retry.Once(withEndpoint(ctx, "POST /repos/{owner}/{repo}/issues/{number}/comments"))
	c, _, err := m.create.Issues.CreateComment(ctx, owner, name, ref.Number, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return forge.Comment{}, fmt.Errorf("github: create comment: %w", quietErr(err))
	}
	if c.GetID() <= 0 {
		return forge.Comment{}, errors.New("github: create comment: answer has no comment id")
	}
	if !m.own(c.User) {
		m.c.log.Warn().Str("configured_login", m.login).Msg("github: the created comment is not attributed to the configured comment author; later runs will not find it")
	}
	return toComment(c), nil
}

// UpdateComment replaces a comment's body (PATCH is idempotent, so the ordinary retries apply).
func (m *Commenter) UpdateComment(ctx context.Context, ref forge.Ref, id string, body string) error {
	owner, name, err := splitRef(ref)
	if err != nil {
		return err
	}
	cid, err := strconv.ParseInt(id, 10, 64)
	if err != nil || cid <= 0 || strconv.FormatInt(cid, 10) != id {
		return fmt.Errorf("github: update comment: id %q: must be a positive base-10 comment id", id)
	}
	ctx = withEndpoint(ctx, "PATCH /repos/{owner}/{repo}/issues/comments/{id}")
	if _, _, err := m.c.rest.Issues.EditComment(ctx, owner, name, cid, &gh.IssueComment{Body: gh.String(body)}); err != nil {
		return fmt.Errorf("github: update comment %s: %w", id, quietErr(err))
	}
	return nil
}

// RunState is what WorkflowRunState learned about a GitHub Actions workflow run.
type RunState struct {
	Found     bool   // false: GitHub answered 404 (deleted, or never existed)
	Completed bool   // status "completed"
	Status    string // GitHub's status: queued, in_progress, completed, …
}

// WorkflowRunState reads GET /repos/{owner}/{repo}/actions/runs/{run_id} (needs actions: read),
// used by `forgectx status reconcile` to tell a dead job from a running one.
func (c *Client) WorkflowRunState(ctx context.Context, repo string, runID int64) (RunState, error) {
	owner, name, err := parseRepo(repo)
	if err != nil || runID <= 0 {
		return RunState{}, fmt.Errorf("github: workflow run: repo %q and run id %d: must be OWNER/NAME and positive", repo, runID)
	}
	ctx = withEndpoint(ctx, "GET /repos/{owner}/{repo}/actions/runs/{run_id}")
	wr, _, err := c.rest.Actions.GetWorkflowRunByID(ctx, owner, name, runID)
	if err != nil {
		if isNotFound(err) {
			return RunState{}, nil
		}
		return RunState{}, fmt.Errorf("github: workflow run %d: %w", runID, quietErr(err))
	}
	return RunState{Found: true, Status: wr.GetStatus(), Completed: wr.GetStatus() == "completed"}, nil
}

// quietErr keeps an API error's status code and GitHub's message class but drops the request
// URL's query and any echoed body text: what reaches a log or a status comment is the status.
func quietErr(err error) error {
	if errors.Is(err, errPaginationBackwards) || errors.Is(err, forge.ErrTooManyPages) || errors.Is(err, errCommentTooLarge) || errors.Is(err, errNotAList) || errors.Is(err, errTooManyComments) {
		return err // our own words, no URL
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return fmt.Errorf("HTTP %d", er.Response.StatusCode)
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		return errors.New("rate limited")
	}
	var al *gh.AbuseRateLimitError
	if errors.As(err, &al) {
		return errors.New("secondary rate limit")
	}
	if errors.Is(err, context.Canceled) {
		return context.Canceled
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	// A transport failure: its class, never the URL it carries.
	return errors.New("request failed: " + retry.Cause(err))
}
