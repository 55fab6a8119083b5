package run

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/internal/status"
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
	Kind          string // GitLab: issue (work_item) or merge request (change_proposal) notes
	APIURL        string
	TokenEnv      string
	CommentAuthor string
	// CommentAuthorID is the Forgejo user id the token posts as (0: GET /user).
	CommentAuthorID int64
	// InsecureHTTP allows a plain-http API URL to a non-loopback host (logged).
	InsecureHTTP bool
	// Concurrency is --concurrency: requests in flight per forge host (0: the default).
	Concurrency int
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
	// Undetermined are started comments whose run the forge could not say anything about
	// (forge.RunState.Unknown): left alone, and logged. Omitted when 0.
	Undetermined int `json:"undetermined,omitempty"`
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

// runLinkAny is the CI run link of a status comment's start line, whatever its forge's shape.
var runLinkAny = regexp.MustCompile(`\(\[CI run\]\((https?://[^()\s]+)\)\)`)

// Reconcile finalises the agent's sticky status comment when a job died leaving it "started"
// (a SIGKILL, a lost runner): the comment becomes ⚠️ cancelled with ReconcileDetail, keeping its
// CI run link. It works on every registered forge. A started comment is finalised only when
// its job is known to be over: its run link is this job's (CurrentRun), or the forge reports
// that run over or gone through its own run/job API (forge.Conn.RunState: GitHub workflow
// runs, GitLab jobs and pipelines, Forgejo/Gitea Actions runs), or it carries no run link at
// all (nothing to ask). A comment whose run is still in progress is left alone, and so is one
// whose run the forge cannot say anything about (RunState.Unknown: fail safe, Undetermined). No receipt is posted: the dead run's consumed index is unknown, and a receipt
// must not guess it (docs/run.md).
func Reconcile(ctx context.Context, o ReconcileOptions) (*ReconcileResult, error) {
	rc, err := resolveReconcile(&o)
	if err != nil {
		return nil, err
	}
	res := &ReconcileResult{}
	if rc.conn.ResolveIdentity != nil {
		if err := rc.conn.ResolveIdentity(ctx); err != nil {
			return res, fmt.Errorf("reconcile: token identity: %w", err)
		}
	}
	found, err := rc.conn.Commenter.FindComments(ctx, rc.ref, status.Marker(rc.agent))
	if err != nil {
		return res, fmt.Errorf("reconcile: %w", err)
	}
	res.Comments = len(found)
	for _, c := range found {
		if err := rc.reconcileOne(ctx, o.Log, c, res); err != nil {
			return res, err
		}
	}
	o.Log.Info().Str("forge", rc.ref.Forge).Int("comments", res.Comments).Int("started", res.Started).Int("finalized", res.Finalized).
		Int("running", res.Running).Int("undetermined", res.Undetermined).Msg("reconcile: done")
	return res, nil
}

// reconciler is a resolved `status reconcile`.
type reconciler struct {
	agent   string
	ref     forge.Ref
	current string // this job's run link (--current-run)
	conn    *forge.Conn
	pipe    *filter.Pipeline
}

// resolveReconcile validates o through the forge's CI defaults, like a run, and connects.
func resolveReconcile(o *ReconcileOptions) (*reconciler, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	getenv := o.Getenv
	agent := o.Agent
	switch {
	case agent != "" && o.HarnessPath != "":
		return nil, &ConfigError{Field: "--agent, --harness", Rule: "mutually exclusive: give the agent name or the harness that holds it"}
	case agent != "" && !harness.ValidAgentName(agent):
		return nil, &ConfigError{Field: "--agent", Rule: harness.AgentNameRule()}
	}
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
	fg := o.Forge
	if fg == "" {
		fg = forge.Detect(getenv)
	}
	p, err := forge.Resolve("--forge", fg)
	if err != nil {
		return nil, err
	}
	job, err := p.CIDefaults(forge.JobInput{Getenv: getenv, Start: time.Now(), Log: o.Log, Repo: o.Repo, APIURL: o.APIURL,
		Number: o.Number, CommentAuthor: o.CommentAuthor, CommentAuthorID: o.CommentAuthorID})
	if err != nil {
		return nil, err
	}
	if job.Ref.Number < 1 {
		return nil, &ConfigError{Field: "--number", Rule: "required: a positive issue, pull request or merge request number"}
	}
	rc := &reconciler{agent: agent, ref: job.Ref}
	if o.CurrentRun {
		if job.RunURL == "" {
			return nil, &ConfigError{Field: "--current-run", Rule: "needs this job's CI run ($GITHUB_RUN_ID, CI_JOB_URL, FORGEJO_RUN_ID)"}
		}
		rc.current = job.RunURL
	}
	// The credential is read only once every flag has passed.
	tokenEnv := forge.FirstOf(o.TokenEnv, job.TokenEnv)
	token := getenv(tokenEnv)
	if token == "" {
		return nil, &ConfigError{Field: "--token-env " + tokenEnv, Rule: "the environment variable is unset or empty"}
	}
	rc.pipe = filter.New([]string{token})
	kind := forge.FirstOf(o.Kind, job.Kind)
	rc.conn, err = forge.Connect(p, forge.Options{APIURL: job.Ref.APIURL, Token: token, TokenEnv: tokenEnv, InsecureHTTP: o.InsecureHTTP, Log: o.Log,
		Concurrency:   o.Concurrency,
		CommentAuthor: job.CommentAuthor, CommentAuthorID: job.CommentAuthorID, Kind: kind, WithCommenter: true}, true)
	if err != nil {
		return nil, err
	}
	return rc, nil
}

// reconcileOne finalises c when it is a started comment of a job known to be over.
func (rc *reconciler) reconcileOne(ctx context.Context, log zerolog.Logger, c forge.Comment, res *ReconcileResult) error {
	p, ok := status.ParseStatus(c.Body)
	if !ok || p.State != status.Started {
		return nil
	}
	res.Started++
	link := ""
	if m := runLinkAny.FindStringSubmatch(c.Body); m != nil {
		link = m[1]
	}
	if link != "" && link != rc.current {
		st := forge.RunState{Unknown: true}
		if rc.conn.RunState != nil {
			var err error
			if st, err = rc.conn.RunState(ctx, rc.ref.Repo, link); err != nil {
				return fmt.Errorf("reconcile: %w", err)
			}
		}
		if st.Unknown {
			// Fail safe: a run nobody can look up may be alive.
			log.Warn().Str("code", "run_state_unknown").Msg("reconcile: the forge cannot say whether the comment's CI run is over; left alone")
			res.Undetermined++
			return nil
		}
		log.Info().Bool("found", st.Found).Str("run_status", st.Status).Msg("reconcile: CI run state")
		if st.Found && !st.Completed {
			res.Running++
			return nil
		}
	}
	body, err := status.Render(rc.pipe, status.Status{Agent: rc.agent, State: status.Cancelled, RunURL: link, Detail: ReconcileDetail})
	if err != nil {
		return err
	}
	if err := rc.conn.Commenter.UpdateComment(ctx, rc.ref, c.ID, body); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	res.Finalized++
	return nil
}
