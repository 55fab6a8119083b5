package run

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/pkg/forge"
	"github.com/forgectx/forgectx/pkg/forge/github"
	"github.com/forgectx/forgectx/pkg/harness"
	"github.com/forgectx/forgectx/pkg/status"
)

// ReconcileDetail is the detail a reconciled status comment shows.
const ReconcileDetail = "the job ended before forgectx finished; finalised by forgectx status reconcile"

// ReconcileOptions configure `forgectx status reconcile`.
type ReconcileOptions struct {
	// Agent is the agent whose sticky comment is reconciled; HarnessPath reads it from a harness.
	Agent       string
	HarnessPath string

	Forge, Repo   string
	Number        int
	APIURL        string
	TokenEnv      string
	CommentAuthor string
	// CurrentRun treats a started comment linked to this workflow run ($GITHUB_RUN_ID) as dead
	// without asking GitHub: for an `if: always()` step after `forgectx run` in the same job,
	// where the run is still in progress but the forgectx step is over.
	CurrentRun bool

	Getenv func(string) string
	Log    zerolog.Logger
}

// ReconcileResult counts what reconcile saw and did.
type ReconcileResult struct {
	Comments  int `json:"comments"`  // status comments of the agent by forgectx's identity
	Started   int `json:"started"`   // of those, left in the started state
	Finalized int `json:"finalized"` // edited to ⚠️ cancelled
	Running   int `json:"running"`   // started, but their workflow run is still in progress: left alone
}

var runLink = regexp.MustCompile(`\(\[CI run\]\((https?://[^()\s]+/actions/runs/([0-9]{1,19}))\)\)`)

// parseRunLink returns the CI run link of a status comment body and the workflow run id in it
// (0 when there is none or it does not fit an int64).
func parseRunLink(body string) (string, int64) {
	m := runLink.FindStringSubmatch(body)
	if m == nil {
		return "", 0
	}
	id, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil || id <= 0 {
		return m[1], 0
	}
	return m[1], id
}

// Reconcile finalises the agent's sticky status comment when a job died leaving it "started"
// (a SIGKILL, a lost runner): the comment becomes ⚠️ cancelled with ReconcileDetail, keeping its
// CI run link. A started comment is finalised only when its job is known to be over: its
// workflow run is this one (CurrentRun), or GitHub reports that run completed or gone
// (GET /repos/{owner}/{repo}/actions/runs/{run_id}; needs actions: read), or it carries no run
// link at all (written outside Actions, nothing to ask). A comment whose run is still in
// progress is left alone. No receipt is posted: the dead run's consumed index is unknown, and
// a receipt must not guess it (docs/run.md).
func Reconcile(ctx context.Context, o ReconcileOptions) (*ReconcileResult, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	getenv := o.Getenv
	agent := o.Agent
	if agent == "" && o.HarnessPath != "" {
		h, err := harness.Load(o.HarnessPath)
		if err != nil {
			return nil, &ConfigError{Field: "--harness " + o.HarnessPath, Rule: "invalid", Err: err}
		}
		agent = h.Agent.Name
	}
	if agent == "" {
		return nil, &ConfigError{Field: "--agent", Rule: "required (or --harness)"}
	}
	if o.Forge != "" && o.Forge != "github" {
		return nil, &ConfigError{Field: "--forge", Rule: o.Forge + ": reconcile drives GitHub in this build"}
	}
	ref := forge.Ref{Forge: "github", Repo: o.Repo, Number: o.Number, APIURL: o.APIURL}
	if ref.Repo == "" {
		ref.Repo = getenv("GITHUB_REPOSITORY")
	}
	if !validRepo(ref.Repo) {
		return nil, &ConfigError{Field: "--repo", Rule: "required as OWNER/NAME (default $GITHUB_REPOSITORY)"}
	}
	if ref.Number == 0 {
		ref.Number = readEvent(getenv("GITHUB_EVENT_PATH")).number()
	}
	if ref.Number < 1 {
		return nil, &ConfigError{Field: "--number", Rule: "required: a positive issue or pull request number"}
	}
	if ref.APIURL == "" {
		ref.APIURL = getenv("GITHUB_API_URL")
	}
	if ref.APIURL == "" {
		ref.APIURL = github.DefaultAPIURL
	}
	tokenEnv := o.TokenEnv
	if tokenEnv == "" {
		tokenEnv = "GITHUB_TOKEN"
	}
	token := getenv(tokenEnv)
	if token == "" {
		return nil, &ConfigError{Field: "--token-env " + tokenEnv, Rule: "the environment variable is unset or empty"}
	}
	author := o.CommentAuthor
	if author == "" && getenv("GITHUB_ACTIONS") == "true" {
		author = github.ActionsBotLogin
	}
	if author == "" {
		return nil, &ConfigError{Field: "--comment-author", Rule: "required outside GitHub Actions"}
	}
	var current int64
	if o.CurrentRun {
		id, err := strconv.ParseInt(getenv("GITHUB_RUN_ID"), 10, 64)
		if err != nil || id <= 0 {
			return nil, &ConfigError{Field: "--current-run", Rule: "needs $GITHUB_RUN_ID"}
		}
		current = id
	}
	gc, err := github.New(github.Options{APIURL: ref.APIURL, Token: token, Log: o.Log})
	if err != nil {
		return nil, &ConfigError{Field: "--api-url", Rule: "invalid", Err: err}
	}
	cm, err := github.NewCommenter(gc, author)
	if err != nil {
		return nil, &ConfigError{Field: "--comment-author", Rule: "invalid", Err: err}
	}
	pipe := filter.New([]string{token})

	res := &ReconcileResult{}
	found, err := cm.FindComments(ctx, ref, status.Marker(agent))
	if err != nil {
		return res, fmt.Errorf("reconcile: %w", err)
	}
	res.Comments = len(found)
	for _, c := range found {
		p, ok := status.ParseStatus(c.Body)
		if !ok || p.State != status.Started {
			continue
		}
		res.Started++
		link, runID := parseRunLink(c.Body)
		dead := true
		if runID > 0 && runID != current {
			st, err := gc.WorkflowRunState(ctx, ref.Repo, runID)
			if err != nil {
				return res, fmt.Errorf("reconcile: %w", err)
			}
			dead = !st.Found || st.Completed
			o.Log.Info().Int64("run_id", runID).Bool("found", st.Found).Str("run_status", st.Status).Msg("reconcile: workflow run state")
		}
		if !dead {
			res.Running++
			continue
		}
		body, err := status.Render(pipe, status.Status{Agent: agent, State: status.Cancelled, RunURL: link, Detail: ReconcileDetail})
		if err != nil {
			return res, err
		}
		if err := cm.UpdateComment(ctx, ref, c.ID, body); err != nil {
			return res, fmt.Errorf("reconcile: %w", err)
		}
		res.Finalized++
	}
	o.Log.Info().Int("comments", res.Comments).Int("started", res.Started).Int("finalized", res.Finalized).
		Int("running", res.Running).Msg("reconcile: done")
	return res, nil
}
