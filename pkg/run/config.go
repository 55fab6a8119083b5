package run

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/canon"
	"github.com/forgectx/forgectx/pkg/forge"
	"github.com/forgectx/forgectx/pkg/forge/github"
	"github.com/forgectx/forgectx/pkg/harness"
	"github.com/forgectx/forgectx/pkg/stage"
)

// config is Options resolved against the environment: everything a run needs, validated
// before anything is posted.
type config struct {
	h        *harness.Harness
	ref      forge.Ref
	kind     string
	profile  acquisition.Profile
	token    string
	tokenEnv string
	author   string
	headSHA  string
	runURL   string
	receipt  string // receipt id
	base     string // stage Base: host tree and sandbox copy
	state    string // stage state root
	actions  bool   // running under GitHub Actions
}

var (
	repoPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	gitOID      = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	digits      = regexp.MustCompile(`^[1-9][0-9]{0,19}$`)
)

// maxEventBytes bounds the event payload read for defaults (GitHub caps deliveries at 25 MB).
const maxEventBytes = 32 << 20

// resolve validates o and fills the defaults. Every problem is a *ConfigError (exit 2).
func resolve(o *Options, start time.Time) (*config, error) {
	getenv := o.Getenv
	c := &config{actions: getenv("GITHUB_ACTIONS") == "true"}
	h := o.Harness
	if h == nil {
		if o.HarnessPath == "" {
			return nil, &ConfigError{Field: "--harness", Rule: "required"}
		}
		var err error
		if h, err = harness.Load(o.HarnessPath); err != nil {
			return nil, &ConfigError{Field: "--harness " + o.HarnessPath, Rule: "invalid", Err: err}
		}
	}
	c.h = h
	fg := o.Forge
	if fg == "" {
		fg = "github"
	}
	if fg != "github" {
		return nil, &ConfigError{Field: "--forge", Rule: fg + ": forgectx run drives GitHub in this build (GitLab and Forgejo adapters exist but their run wiring is pending)"}
	}
	c.ref.Forge = fg

	ev := readEvent(getenv("GITHUB_EVENT_PATH"))
	c.ref.Repo = o.Repo
	if c.ref.Repo == "" {
		c.ref.Repo = getenv("GITHUB_REPOSITORY")
	}
	if !repoPattern.MatchString(c.ref.Repo) {
		return nil, &ConfigError{Field: "--repo", Rule: "required as OWNER/NAME (default $GITHUB_REPOSITORY)"}
	}
	c.ref.Number = o.Number
	if c.ref.Number == 0 {
		c.ref.Number = ev.number()
	}
	if c.ref.Number < 1 {
		return nil, &ConfigError{Field: "--number", Rule: "required: a positive issue or pull request number (default: the event payload's)"}
	}
	c.ref.APIURL = o.APIURL
	if c.ref.APIURL == "" {
		c.ref.APIURL = getenv("GITHUB_API_URL")
	}
	if c.ref.APIURL == "" {
		c.ref.APIURL = github.DefaultAPIURL
	}
	if _, err := github.SourceHost(c.ref.APIURL); err != nil {
		return nil, &ConfigError{Field: "--api-url", Rule: "must be an absolute http(s) URL", Err: err}
	}

	c.kind = o.Kind
	if c.kind == "" {
		c.kind = ev.kind(getenv("GITHUB_EVENT_NAME"), c.ref.Number)
	}
	if c.kind == "" && len(h.Profiles) == 1 {
		for k := range h.Profiles {
			c.kind = k
		}
	}
	if c.kind == "" {
		return nil, &ConfigError{Field: "--kind", Rule: "cannot tell from the CI event whether #" + strconv.Itoa(c.ref.Number) + " is an issue or a pull request; pass work_item or change_proposal"}
	}
	if c.kind != acquisition.KindWorkItem && c.kind != acquisition.KindChangeProposal {
		return nil, &ConfigError{Field: "--kind", Rule: "must be work_item or change_proposal"}
	}
	p, err := h.ProfileFor(c.kind)
	if err != nil {
		return nil, &ConfigError{Field: "--harness", Rule: "no collection profile for this entity", Err: err}
	}
	c.profile = p

	c.tokenEnv = o.TokenEnv
	if c.tokenEnv == "" {
		c.tokenEnv = "GITHUB_TOKEN"
	}
	c.token = getenv(c.tokenEnv)
	if c.token == "" {
		return nil, &ConfigError{Field: "--token-env " + c.tokenEnv, Rule: "the environment variable is unset or empty"}
	}
	if containsName(h.Agent.Env, c.tokenEnv) {
		return nil, &ConfigError{Field: "agent.env", Rule: c.tokenEnv + " holds the forge token and cannot be passed to the agent"}
	}

	c.author = o.CommentAuthor
	if c.author == "" && c.actions {
		c.author = github.ActionsBotLogin
	}
	if c.author == "" {
		return nil, &ConfigError{Field: "--comment-author", Rule: "required outside GitHub Actions: the login the token posts as (GITHUB_TOKEN cannot call GET /user, so forgectx never looks it up)"}
	}

	c.headSHA = o.HeadSHA
	if c.headSHA == "" {
		c.headSHA = getenv("GITHUB_SHA")
	}
	if !gitOID.MatchString(c.headSHA) {
		c.headSHA = ""
	}
	c.runURL, c.receipt = ciIdentity(getenv, start)

	c.base, c.state = stagePlaces(o)
	for _, dir := range []*string{&c.base, &c.state} {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return nil, &ConfigError{Field: "--tree-dir/--state-dir", Rule: "cannot be made absolute", Err: err}
		}
		*dir = abs
		if ws := getenv("GITHUB_WORKSPACE"); ws != "" {
			if wabs, err := filepath.Abs(ws); err == nil && within(abs, wabs) {
				return nil, &ConfigError{Field: "--tree-dir/--state-dir", Rule: "must lie outside $GITHUB_WORKSPACE: snapshot trees never land in the checkout or uploaded output"}
			}
		}
	}
	if _, err := stage.ParseMode(string(o.Immutability)); err != nil {
		return nil, &ConfigError{Field: "--immutability", Rule: "must be auto, ownership or bind-mount"}
	}
	if (o.AgentUID != 0) != (o.AgentGID != 0) || o.AgentUID < 0 || o.AgentGID < 0 {
		return nil, &ConfigError{Field: "--agent-uid/--agent-gid", Rule: "give both, as positive numbers"}
	}
	return c, nil
}

func containsName(list []string, n string) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// ciIdentity returns the CI run link and the receipt id. Under GitHub Actions (GITHUB_RUN_ID
// numeric) the link is $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID and
// the id gha-<run id>-<attempt> ($GITHUB_RUN_ATTEMPT, default 1). Elsewhere there is no link
// and the id is local-<start as an order key>-<pid> (docs/run.md, "Receipt id").
func ciIdentity(getenv func(string) string, start time.Time) (string, string) {
	runID := getenv("GITHUB_RUN_ID")
	if !digits.MatchString(runID) {
		return "", fmt.Sprintf("local-%s-%d", canon.OrderKeyOf(start), os.Getpid())
	}
	attempt := getenv("GITHUB_RUN_ATTEMPT")
	if !digits.MatchString(attempt) {
		attempt = "1"
	}
	link := ""
	server, repo := strings.TrimRight(getenv("GITHUB_SERVER_URL"), "/"), getenv("GITHUB_REPOSITORY")
	if server != "" && repoPattern.MatchString(repo) {
		link = server + "/" + repo + "/actions/runs/" + runID
	}
	return link, "gha-" + runID + "-" + attempt
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
	f, err := os.Open(path)
	if err != nil {
		return ev
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxEventBytes))
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
