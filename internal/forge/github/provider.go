package github

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Provider is GitHub's entry in the forge registry (internal/forge/providers).
func Provider() forge.Provider { return provider{} }

type provider struct{}

func (provider) Name() string { return "github" }

// Detect: GitHub Actions sets GITHUB_ACTIONS=true (so do Forgejo runners, which register
// first).
func (provider) Detect(getenv func(string) string) bool { return getenv("GITHUB_ACTIONS") == "true" }

func (provider) Policy() forge.Policy {
	return forge.Policy{
		DefaultAPIURL:   DefaultAPIURL,
		DefaultTokenEnv: "GITHUB_TOKEN",
		TokenRule:       "GitHub's GraphQL API requires a token",
		RepoRule:        "required as OWNER/NAME (default $GITHUB_REPOSITORY)",
		ValidateRepo:    func(repo string) error { _, _, err := parseRepo(repo); return err },
	}
}

// CIDefaults fills the GitHub Actions defaults: repository, number and kind from the job and
// its event, API URL, GITHUB_TOKEN, github-actions[bot] as the comment author, GITHUB_SHA,
// the run link and the gha- receipt id.
func (p provider) CIDefaults(in forge.JobInput) (forge.Job, error) {
	getenv := in.Getenv
	actions := getenv("GITHUB_ACTIONS") == "true"
	ev := readEvent(getenv("GITHUB_EVENT_PATH"))
	j := forge.Job{Ref: forge.Ref{Forge: "github"}, TokenEnv: "GITHUB_TOKEN", Summary: actions}
	j.Ref.Repo = forge.FirstOf(in.Repo, getenv("GITHUB_REPOSITORY"))
	if _, _, err := parseRepo(j.Ref.Repo); err != nil {
		return j, &forge.ConfigError{Field: "--repo", Rule: p.Policy().RepoRule}
	}
	j.Ref.Number = in.Number
	if j.Ref.Number == 0 {
		j.Ref.Number = ev.number()
	}
	j.Ref.APIURL = forge.FirstOf(in.APIURL, getenv("GITHUB_API_URL"), DefaultAPIURL)
	if _, err := SourceHost(j.Ref.APIURL); err != nil {
		return j, &forge.ConfigError{Field: "--api-url", Rule: "must be an absolute http(s) URL", Err: err}
	}
	j.Kind = ev.kind(getenv("GITHUB_EVENT_NAME"), j.Ref.Number)
	j.CommentAuthor = in.CommentAuthor
	if j.CommentAuthor == "" && actions {
		j.CommentAuthor = ActionsBotLogin
	}
	if j.CommentAuthor == "" {
		return j, &forge.ConfigError{Field: "--comment-author", Rule: "required outside GitHub Actions: the login the token posts as (GITHUB_TOKEN cannot call GET /user, so forgectx never looks it up)"}
	}
	j.HeadSHA = getenv("GITHUB_SHA")
	j.RunURL, j.ReceiptID = ciIdentity(getenv, in.Start)
	return j, nil
}

// Open builds the client, and with o.WithCommenter the commenter of o.CommentAuthor.
// Receipts are read from the conversation comments (the same listing as the comments source):
// every author's for a snapshot (the bot registry decides admission), only the comment
// author's with o.OwnReceipts.
func (provider) Open(o forge.Options) (*forge.Conn, error) {
	receipts := ReceiptsFromComments
	if o.OwnReceipts {
		receipts = ReceiptsFromCommentsBy(o.CommentAuthor)
	}
	opts := Options{APIURL: o.APIURL, Token: o.Token, Transport: o.Pool.Wrap(o.Transport), SourceHost: o.SourceHost, Receipts: receipts, Log: o.Log,
		Concurrency: o.Concurrency, Limiter: o.Pool.RetryLimiter(),
		RetryMax: o.Retry.Max, RetryWaitMin: o.Retry.WaitMin, RetryWaitMax: o.Retry.WaitMax, MaxRateLimitWait: o.Retry.MaxServerWait}
	gc, err := New(opts)
	if err != nil {
		return nil, &forge.ConfigError{Field: "--api-url", Rule: "invalid", Err: err}
	}
	conn := &forge.Conn{Acquirer: gc, Stats: gc.Stats}
	conn.RunState = func(ctx context.Context, repo, link string) (forge.RunState, error) {
		// Only this repository's run can be asked about: another link (another repository's
		// run, which would answer 404 here, or no Actions run at all) is Unknown, and the
		// comment is left alone rather than finalised on a guess.
		id := runIDOf(link)
		if id == 0 || !linkOfRepo(link, repo) {
			return forge.RunState{Unknown: true}, nil
		}
		st, err := gc.WorkflowRunState(ctx, repo, id)
		return forge.RunState{Found: st.Found, Completed: st.Completed, Status: st.Status}, err
	}
	if o.WithCommenter {
		cm, err := NewCommenter(gc, o.CommentAuthor)
		if err != nil {
			return nil, &forge.ConfigError{Field: "--comment-author", Rule: "invalid", Err: err}
		}
		conn.Commenter = cm
	}
	return conn, nil
}

var actionsRunLink = regexp.MustCompile(`/actions/runs/([0-9]{1,19})$`)

// runIDOf is the workflow run id of a GitHub Actions run link (…/actions/runs/<id>), or 0.
func runIDOf(link string) int64 {
	m := actionsRunLink.FindStringSubmatch(link)
	if m == nil {
		return 0
	}
	id, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || id <= 0 {
		return 0
	}
	return id
}

// linkOfRepo reports whether a run link's path is /<repo>/actions/runs/<id> (GitHub routes
// owner and name case-insensitively).
func linkOfRepo(link, repo string) bool {
	u, err := url.Parse(link)
	if err != nil {
		return false
	}
	dir, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/actions/runs/")
	return strings.EqualFold(dir, repo)
}

// ciIdentity returns the CI run link and the receipt id. Under GitHub Actions (GITHUB_RUN_ID
// numeric) the link is $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID and
// the id gha-<run id>-<attempt> ($GITHUB_RUN_ATTEMPT, default 1). Elsewhere there is no link
// and the id is local-<start as an order key>-<pid> (docs/run.md, "Receipts").
func ciIdentity(getenv func(string) string, start time.Time) (string, string) {
	runID := getenv("GITHUB_RUN_ID")
	id := forge.CIReceiptID("gha", runID, getenv("GITHUB_RUN_ATTEMPT"))
	if id == "" {
		return "", forge.LocalReceiptID(start)
	}
	link := ""
	server, repo := strings.TrimRight(getenv("GITHUB_SERVER_URL"), "/"), getenv("GITHUB_REPOSITORY")
	if _, _, err := parseRepo(repo); server != "" && err == nil {
		link = server + "/" + repo + "/actions/runs/" + runID
	}
	return link, id
}

// event is the part of a GitHub event payload that names the entity.
type event struct {
	Number      int `json:"number"`
	PullRequest *struct {
		Number int `json:"number"`
	} `json:"pull_request"`
	Issue *struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
}

func readEvent(path string) event {
	var ev event
	if path == "" {
		return ev
	}
	b, err := forge.ReadEvent(path)
	if err != nil {
		return ev
	}
	_ = json.Unmarshal(b, &ev) // a payload that does not decode names nothing
	return ev
}

func (e event) number() int {
	switch {
	case e.PullRequest != nil && e.PullRequest.Number > 0:
		return e.PullRequest.Number
	case e.Issue != nil && e.Issue.Number > 0:
		return e.Issue.Number
	}
	return 0
}

// kind derives the entity kind from the event, only when the event is about number.
func (e event) kind(name string, number int) string {
	switch name {
	case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment":
		if e.number() == number {
			return acquisition.KindChangeProposal
		}
	case "issues", "issue_comment":
		if e.Issue == nil || e.Issue.Number != number {
			return ""
		}
		if len(e.Issue.PullRequest) > 0 && string(e.Issue.PullRequest) != "null" {
			return acquisition.KindChangeProposal
		}
		return acquisition.KindWorkItem
	}
	return ""
}
