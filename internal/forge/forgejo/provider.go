package forgejo

import (
	"context"

	"github.com/forgectx/forgectx/internal/forge"
)

// Provider is Forgejo's (and Gitea's) entry in the forge registry (internal/forge/providers).
func Provider() forge.Provider { return provider{} }

type provider struct{}

func (provider) Name() string { return Forge }

// Detect: Forgejo and Gitea runners set FORGEJO_ACTIONS or GITEA_ACTIONS to true (and also
// GITHUB_ACTIONS, for compatibility: this provider registers before GitHub's).
func (provider) Detect(getenv func(string) string) bool {
	return getenv("FORGEJO_ACTIONS") == "true" || getenv("GITEA_ACTIONS") == "true"
}

// Policy: there is no public default instance (a token must never be sent to a host the
// operator did not name), and role lookups need a token.
func (provider) Policy() forge.Policy {
	return forge.Policy{
		APIURLRule:      "required for --forge forgejo (the server URL plus /api/v1)",
		DefaultTokenEnv: "FORGEJO_TOKEN",
		TokenRule:       "role lookups need a token with repository admin access",
		RepoRule:        "required as OWNER/NAME (default from Forgejo Actions)",
		ValidateRepo:    ValidateRepo,
	}
}

// CIDefaults fills the Forgejo Actions defaults (ActionsEnvironmentDefaults, under Forgejo
// Actions): API URL, repository, number and kind from the event, the run link, the head
// revision, the token variable. The receipt id is fja-<run id>-<attempt>. The comment
// identity is in.CommentAuthorID (the automatic Actions token writes as the pseudo-user -2),
// else GET /user.
func (p provider) CIDefaults(in forge.JobInput) (forge.Job, error) {
	getenv := in.Getenv
	j := forge.Job{TokenEnv: "FORGEJO_TOKEN", ReceiptID: forge.LocalReceiptID(in.Start)}
	if p.Detect(getenv) {
		var ev []byte
		if path := forge.FirstOf(getenv("FORGEJO_EVENT_PATH"), getenv("GITHUB_EVENT_PATH")); path != "" {
			ev, _ = forge.ReadEvent(path)
		}
		d, err := ActionsEnvironmentDefaults(getenv, ev)
		if err != nil && in.Number == 0 {
			return j, &forge.ConfigError{Field: "Forgejo Actions variables", Rule: "unusable", Err: err}
		}
		if err == nil {
			j.Ref, j.Kind, j.RunURL, j.HeadSHA = d.Ref, d.EntityKind, d.JobURL, d.HeadSHA
			if d.TokenEnv != "" {
				j.TokenEnv = d.TokenEnv
			}
		}
		runID := forge.FirstOf(getenv("FORGEJO_RUN_ID"), getenv("GITHUB_RUN_ID"))
		attempt := forge.FirstOf(getenv("FORGEJO_RUN_ATTEMPT"), getenv("GITHUB_RUN_ATTEMPT"))
		if id := forge.CIReceiptID("fja", runID, attempt); id != "" {
			j.ReceiptID = id
		}
	}
	j.Ref.Forge = Forge
	j.Ref.Repo = forge.FirstOf(in.Repo, j.Ref.Repo)
	if !validOwnerName(j.Ref.Repo) {
		return j, &forge.ConfigError{Field: "--repo", Rule: p.Policy().RepoRule}
	}
	if in.Number != 0 {
		j.Ref.Number = in.Number
	}
	j.Ref.APIURL = forge.FirstOf(in.APIURL, j.Ref.APIURL)
	if j.Ref.APIURL == "" {
		return j, &forge.ConfigError{Field: "--api-url", Rule: "required for Forgejo: the server URL plus /api/v1"}
	}
	j.CommentAuthorID = in.CommentAuthorID
	return j, nil
}

// Open builds the client (which is also the commenter). With o.OwnReceipts the receipts read
// into agent_runs are only the comments posted as the token's own identity; ResolveIdentity
// settles that identity once (GET /user unless o.CommentAuthorID names it) and rebuilds the
// client with it, so the status comment lookup and the receipt reader share one request.
func (provider) Open(o forge.Options) (*forge.Conn, error) {
	opts := Options{APIURL: o.APIURL, Token: o.Token, Transport: o.Pool.Wrap(o.Transport), SelfID: o.CommentAuthorID, ReceiptsBySelf: o.OwnReceipts, Log: o.Log,
		Concurrency: o.Concurrency, Limiter: o.Pool.RetryLimiter(),
		RetryMax: o.Retry.Max, RetryWaitMin: o.Retry.WaitMin, RetryWaitMax: o.Retry.WaitMax}
	fc, err := New(opts)
	if err != nil {
		return nil, &forge.ConfigError{Field: "--api-url", Rule: "invalid", Err: err}
	}
	conn := &forge.Conn{Acquirer: fc}
	conn.Stats = fc.Stats
	conn.RunState = func(ctx context.Context, repo, link string) (forge.RunState, error) {
		return fc.RunState(ctx, repo, link)
	}
	if o.WithCommenter {
		conn.Commenter = fc
	}
	conn.ResolveIdentity = func(ctx context.Context) error {
		if opts.SelfID != 0 {
			return nil
		}
		id, err := fc.Self(ctx)
		if err != nil {
			return err
		}
		opts.SelfID = id
		nc, err := New(opts)
		if err != nil {
			return err
		}
		fc, conn.Acquirer = nc, nc
		if o.WithCommenter {
			conn.Commenter = nc
		}
		return nil
	}
	return conn, nil
}

// validOwnerName accepts OWNER/NAME (ValidateRepo's rule).
func validOwnerName(repo string) bool { return ValidateRepo(repo) == nil }
