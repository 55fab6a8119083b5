package run

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/canon"
	"github.com/forgectx/forgectx/pkg/forge"
	"github.com/forgectx/forgectx/pkg/forge/forgejo"
	"github.com/forgectx/forgectx/pkg/forge/github"
	"github.com/forgectx/forgectx/pkg/forge/gitlab"
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
	actions  bool   // running under GitHub Actions (or Forgejo Actions' compatibility)
	summary  bool   // write $GITHUB_STEP_SUMMARY
	selfID   int64  // Forgejo: the token's user id (0: GET /user)
}

var (
	gitOID = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	digits = regexp.MustCompile(`^[1-9][0-9]{0,19}$`)
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
		fg = DetectForge(getenv)
	}
	c.ref.Forge = fg
	var err error
	switch fg {
	case "github":
		err = resolveGitHub(o, c, start)
	case "gitlab":
		err = resolveGitLab(o, c, start)
	case "forgejo":
		err = resolveForgejo(o, c, start)
	default:
		return nil, &ConfigError{Field: "--forge", Rule: "must be github, gitlab or forgejo"}
	}
	if err != nil {
		return nil, err
	}
	if c.ref.Number < 1 {
		return nil, &ConfigError{Field: "--number", Rule: "required: a positive issue, pull request or merge request number (default: from the CI job)"}
	}
	if o.Kind != "" {
		c.kind = o.Kind
	}
	if c.kind == "" && len(h.Profiles) == 1 {
		for k := range h.Profiles {
			c.kind = k
		}
	}
	if c.kind == "" {
		return nil, &ConfigError{Field: "--kind", Rule: "cannot tell from the CI job whether #" + strconv.Itoa(c.ref.Number) + " is an issue or a pull/merge request; pass work_item or change_proposal"}
	}
	if c.kind != acquisition.KindWorkItem && c.kind != acquisition.KindChangeProposal {
		return nil, &ConfigError{Field: "--kind", Rule: "must be work_item or change_proposal"}
	}
	p, err := h.ProfileFor(c.kind)
	if err != nil {
		return nil, &ConfigError{Field: "--harness", Rule: "no collection profile for this entity", Err: err}
	}
	c.profile = p

	if o.TokenEnv != "" {
		c.tokenEnv = o.TokenEnv
	}
	c.token = getenv(c.tokenEnv)
	if c.token == "" {
		return nil, &ConfigError{Field: "--token-env " + c.tokenEnv, Rule: "the environment variable is unset or empty"}
	}
	// The same refusal as harness.Load, again here with the token variable actually used and
	// for a Harness built in code (Options.Harness).
	if err := h.CheckAgentEnv(c.tokenEnv); err != nil {
		return nil, err
	}
	if o.HeadSHA != "" {
		// An explicit --head-sha must be a Git object ID (either hex case); a CI default that
		// is not one is omitted from the receipt.
		c.headSHA = strings.ToLower(o.HeadSHA)
		if !gitOID.MatchString(c.headSHA) {
			return nil, &ConfigError{Field: "--head-sha", Rule: "must be a 40- or 64-digit hex Git object ID"}
		}
	}
	if !gitOID.MatchString(c.headSHA) {
		c.headSHA = ""
	}
	if c.runURL != "" && !strings.HasPrefix(c.runURL, "https://") && !strings.HasPrefix(c.runURL, "http://") {
		c.runURL = ""
	}

	c.base, c.state = stagePlaces(o)
	for _, dir := range []*string{&c.base, &c.state} {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return nil, &ConfigError{Field: "--tree-dir/--state-dir", Rule: "cannot be made absolute", Err: err}
		}
		*dir = abs
		forbidden := map[string]string{"$GITHUB_WORKSPACE": getenv("GITHUB_WORKSPACE"), "$CI_PROJECT_DIR": getenv("CI_PROJECT_DIR")}
		for _, a := range o.ArtifactDirs {
			forbidden["--artifacts-dir "+a] = a
		}
		for _, name := range sortedKeys(forbidden) {
			ws := forbidden[name]
			if ws == "" {
				continue
			}
			if wabs, err := filepath.Abs(ws); err == nil && within(abs, wabs) {
				return nil, &ConfigError{Field: "--tree-dir/--state-dir", Rule: "must lie outside " + name + ": snapshot trees never land in the checkout or uploaded output"}
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

// resolveGitHub fills the GitHub Actions defaults: repository, number and kind from the job
// and its event, API URL, GITHUB_TOKEN, github-actions[bot] as the comment author, GITHUB_SHA,
// the run link and the gha- receipt id.
func resolveGitHub(o *Options, c *config, start time.Time) error {
	getenv := o.Getenv
	ev := readEvent(getenv("GITHUB_EVENT_PATH"))
	c.ref.Repo = firstOf(o.Repo, getenv("GITHUB_REPOSITORY"))
	if !validRepo(c.ref.Repo) {
		return &ConfigError{Field: "--repo", Rule: "required as OWNER/NAME (default $GITHUB_REPOSITORY)"}
	}
	c.ref.Number = o.Number
	if c.ref.Number == 0 {
		c.ref.Number = ev.number()
	}
	c.ref.APIURL = firstOf(o.APIURL, getenv("GITHUB_API_URL"), github.DefaultAPIURL)
	if _, err := github.SourceHost(c.ref.APIURL); err != nil {
		return &ConfigError{Field: "--api-url", Rule: "must be an absolute http(s) URL", Err: err}
	}
	c.kind = ev.kind(getenv("GITHUB_EVENT_NAME"), c.ref.Number)
	c.tokenEnv = "GITHUB_TOKEN"
	c.author = o.CommentAuthor
	if c.author == "" && c.actions {
		c.author = github.ActionsBotLogin
	}
	if c.author == "" {
		return &ConfigError{Field: "--comment-author", Rule: "required outside GitHub Actions: the login the token posts as (GITHUB_TOKEN cannot call GET /user, so forgectx never looks it up)"}
	}
	c.headSHA = getenv("GITHUB_SHA")
	c.runURL, c.receipt = ciIdentity(getenv, start)
	c.summary = c.actions
	return nil
}

// resolveGitLab fills the GitLab CI defaults (gitlab.CIDefaults, when GITLAB_CI=true): API URL,
// project, merge request iid and kind, the job link, the checked-out commit, the token variable
// (GITLAB_TOKEN, else CI_JOB_TOKEN — which cannot post notes). The receipt id is
// glci-<CI_JOB_ID>-1 (a retried job is a new job id). The comment identity is GET /user.
func resolveGitLab(o *Options, c *config, start time.Time) error {
	getenv := o.Getenv
	c.tokenEnv = "GITLAB_TOKEN"
	c.receipt = localReceipt(start)
	if getenv("GITLAB_CI") == "true" {
		ci, err := gitlab.CIDefaults(getenv)
		if err != nil {
			return &ConfigError{Field: "GitLab CI variables", Rule: "unusable", Err: err}
		}
		if ci.TriggerError != nil {
			// A code only: the error's text may quote the trigger payload.
			o.Log.Warn().Str("code", "trigger_payload_unusable").Msg("forgectx run: TRIGGER_PAYLOAD names no entity; --number and --kind are needed")
		}
		c.ref, c.kind, c.runURL, c.headSHA = ci.Ref, ci.Kind, ci.JobURL, ci.CommitSHA
		if ci.TokenEnv != "" {
			c.tokenEnv = ci.TokenEnv
		}
		if id := getenv("CI_JOB_ID"); digits.MatchString(id) {
			c.receipt = "glci-" + id + "-1"
		}
	}
	c.ref.Forge = "gitlab"
	c.ref.Repo = firstOf(o.Repo, c.ref.Repo)
	if c.ref.Repo == "" {
		return &ConfigError{Field: "--repo", Rule: "required: the project's full path or numeric id (default from GitLab CI)"}
	}
	if o.Number != 0 {
		c.ref.Number = o.Number
	}
	c.ref.APIURL = firstOf(o.APIURL, c.ref.APIURL, gitlab.DefaultAPIURL)
	return nil
}

// resolveForgejo fills the Forgejo Actions defaults (forgejo.ActionsEnvironmentDefaults, when
// FORGEJO_ACTIONS or GITEA_ACTIONS is true): API URL, repository, number and kind from the
// event, the run link, the head revision, the token variable. The receipt id is
// fja-<run id>-<attempt>. The comment identity is Options.CommentAuthorID (the automatic
// Actions token writes as the pseudo-user -2), else GET /user.
func resolveForgejo(o *Options, c *config, start time.Time) error {
	getenv := o.Getenv
	c.tokenEnv = "FORGEJO_TOKEN"
	c.receipt = localReceipt(start)
	if forgejoActions(getenv) {
		path := firstOf(getenv("FORGEJO_EVENT_PATH"), getenv("GITHUB_EVENT_PATH"))
		var ev []byte
		if path != "" {
			ev, _ = readBounded(path)
		}
		d, err := forgejo.ActionsEnvironmentDefaults(getenv, ev)
		if err != nil && o.Number == 0 {
			return &ConfigError{Field: "Forgejo Actions variables", Rule: "unusable", Err: err}
		}
		if err == nil {
			c.ref, c.kind, c.runURL, c.headSHA = d.Ref, d.EntityKind, d.JobURL, d.HeadSHA
			if d.TokenEnv != "" {
				c.tokenEnv = d.TokenEnv
			}
		}
		runID := firstOf(getenv("FORGEJO_RUN_ID"), getenv("GITHUB_RUN_ID"))
		attempt := firstOf(getenv("FORGEJO_RUN_ATTEMPT"), getenv("GITHUB_RUN_ATTEMPT"))
		if !digits.MatchString(attempt) {
			attempt = "1"
		}
		if digits.MatchString(runID) {
			c.receipt = "fja-" + runID + "-" + attempt
		}
	}
	c.ref.Forge = "forgejo"
	c.ref.Repo = firstOf(o.Repo, c.ref.Repo)
	if !validRepo(c.ref.Repo) {
		return &ConfigError{Field: "--repo", Rule: "required as OWNER/NAME (default from Forgejo Actions)"}
	}
	if o.Number != 0 {
		c.ref.Number = o.Number
	}
	c.ref.APIURL = firstOf(o.APIURL, c.ref.APIURL)
	if c.ref.APIURL == "" {
		return &ConfigError{Field: "--api-url", Rule: "required for Forgejo: the server URL plus /api/v1"}
	}
	c.selfID = o.CommentAuthorID
	return nil
}

// DetectForge is the forge `forgectx run` assumes when --forge is not given: forgejo under
// Forgejo Actions (FORGEJO_ACTIONS or GITEA_ACTIONS is "true", the variables the Forgejo and
// Gitea runners set and resolveForgejo and pkg/distill recognise), gitlab under GitLab CI
// (GITLAB_CI is "true"), else github. Forgejo is tested first: its runners also set
// GITHUB_ACTIONS=true for compatibility.
func DetectForge(getenv func(string) string) string {
	switch {
	case forgejoActions(getenv):
		return "forgejo"
	case getenv("GITLAB_CI") == "true":
		return "gitlab"
	}
	return "github"
}

func forgejoActions(getenv func(string) string) bool {
	return getenv("FORGEJO_ACTIONS") == "true" || getenv("GITEA_ACTIONS") == "true"
}

// validRepo accepts OWNER/NAME as GitHub and Forgejo spell them: two segments of letters,
// digits, '-', '_' and '.', neither "." nor ".." (github.ParseRepo), so a repository argument
// or $GITHUB_REPOSITORY can never steer a request path or the run link.
func validRepo(repo string) bool {
	_, _, err := github.ParseRepo(repo)
	return err == nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func localReceipt(start time.Time) string {
	return fmt.Sprintf("local-%s-%d", canon.OrderKeyOf(start), os.Getpid())
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxEventBytes))
}

// ciIdentity returns the CI run link and the receipt id. Under GitHub Actions (GITHUB_RUN_ID
// numeric) the link is $GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID and
// the id gha-<run id>-<attempt> ($GITHUB_RUN_ATTEMPT, default 1). Elsewhere there is no link
// and the id is local-<start as an order key>-<pid> (docs/run.md, "Receipt id").
func ciIdentity(getenv func(string) string, start time.Time) (string, string) {
	runID := getenv("GITHUB_RUN_ID")
	if !digits.MatchString(runID) {
		return "", localReceipt(start)
	}
	attempt := getenv("GITHUB_RUN_ATTEMPT")
	if !digits.MatchString(attempt) {
		attempt = "1"
	}
	link := ""
	server, repo := strings.TrimRight(getenv("GITHUB_SERVER_URL"), "/"), getenv("GITHUB_REPOSITORY")
	if server != "" && validRepo(repo) {
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
	b, err := readBounded(path)
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
