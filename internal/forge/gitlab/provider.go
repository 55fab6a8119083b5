package gitlab

import (
	"context"
	"net/http"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
)

// Provider is GitLab's entry in the forge registry (internal/forge/providers).
func Provider() forge.Provider { return provider{} }

type provider struct{}

func (provider) Name() string { return "gitlab" }

// Detect: GitLab CI sets GITLAB_CI=true.
func (provider) Detect(getenv func(string) string) bool { return getenv("GITLAB_CI") == "true" }

// Policy: gitlab.com by default; without --token-env GitLab is read unauthenticated (public
// projects), which a snapshot allows.
func (provider) Policy() forge.Policy {
	return forge.Policy{
		DefaultAPIURL: DefaultAPIURL,
		TokenOptional: true,
		RepoRule:      "required: the project's full path or numeric id (default from GitLab CI)",
		ValidateRepo:  ValidateRepo,
	}
}

// CIDefaults fills the GitLab CI defaults (CIDefaults, when GITLAB_CI=true): API URL, project,
// merge request iid and kind, the job link, the checked-out commit, the token variable
// (GITLAB_TOKEN, else CI_JOB_TOKEN — which cannot post notes). The receipt id is
// glci-<CI_JOB_ID>-1 (a retried job is a new job id). The comment identity is GET /user.
func (p provider) CIDefaults(in forge.JobInput) (forge.Job, error) {
	getenv := in.Getenv
	j := forge.Job{TokenEnv: "GITLAB_TOKEN", ReceiptID: forge.LocalReceiptID(in.Start)}
	if getenv("GITLAB_CI") == "true" {
		ci, err := CIDefaults(getenv)
		if err != nil {
			return j, &forge.ConfigError{Field: "GitLab CI variables", Rule: "unusable", Err: err}
		}
		if ci.TriggerError != nil {
			// A code only: the error's text may quote the trigger payload.
			in.Log.Warn().Str("code", "trigger_payload_unusable").Msg("forgectx run: TRIGGER_PAYLOAD names no entity; --number and --kind are needed")
		}
		j.Ref, j.Kind, j.RunURL, j.HeadSHA = ci.Ref, ci.Kind, ci.JobURL, ci.CommitSHA
		if ci.TokenEnv != "" {
			j.TokenEnv = ci.TokenEnv
		}
		if id := forge.CIReceiptID("glci", getenv("CI_JOB_ID"), "1"); id != "" {
			j.ReceiptID = id
		}
	}
	j.Ref.Forge = "gitlab"
	j.Ref.Repo = forge.FirstOf(in.Repo, j.Ref.Repo)
	if j.Ref.Repo == "" {
		return j, &forge.ConfigError{Field: "--repo", Rule: p.Policy().RepoRule}
	}
	if in.Number != 0 {
		j.Ref.Number = in.Number
	}
	j.Ref.APIURL = forge.FirstOf(in.APIURL, j.Ref.APIURL, DefaultAPIURL)
	return j, nil
}

// Open builds the client, and with o.WithCommenter the commenter for o.Kind. With
// o.OwnReceipts the receipts read into agent_runs are only the notes by forgectx's own
// identity: the commenter's GET /user, read once (the status comment lookup already made it).
func (provider) Open(o forge.Options) (*forge.Conn, error) {
	conn, _, err := open(o)
	return conn, err
}

// open builds the connection and returns the client behind it (Open, for its Services).
func open(o forge.Options) (*forge.Conn, *Client, error) {
	opts := Options{APIURL: o.APIURL, Token: o.Token, TokenKind: kindForToken(o.TokenEnv, o.Token), Log: o.Log, Concurrency: o.Concurrency,
		RetryMax: o.Retry.Max, RetryWaitMin: o.Retry.WaitMin, RetryWaitMax: o.Retry.WaitMax, MaxServerWait: o.Retry.MaxServerWait}
	opts.Concurrency, opts.Limiter = o.Concurrency, o.Pool.RetryLimiter()
	if t := o.Pool.Wrap(o.Transport); t != nil {
		opts.HTTPClient = &http.Client{Transport: t, Timeout: 60 * time.Second}
	}
	var glc *Commenter
	if o.OwnReceipts {
		opts.ReceiptAuthor = func(ctx context.Context) (int64, error) { return glc.Self(ctx) }
	}
	gc, err := New(opts)
	if err != nil {
		return nil, nil, &forge.ConfigError{Field: "--api-url", Rule: "invalid", Err: err}
	}
	conn := &forge.Conn{Acquirer: gc, Stats: gc.Stats, RunState: gc.RunState}
	if o.WithCommenter || o.OwnReceipts {
		if glc, err = newCommenter(gc, o.Kind); err != nil {
			return nil, nil, &forge.ConfigError{Field: "--kind", Rule: "invalid", Err: err}
		}
		if o.WithCommenter {
			conn.Commenter = glc
		}
	}
	return conn, gc, nil
}
