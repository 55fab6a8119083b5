package reviewctx

import (
	"cmp"
	"net/http"

	"github.com/forgectx/forgectx/internal/forge"
	glforge "github.com/forgectx/forgectx/internal/forge/gitlab"
)

// This file is the only place the package opens GitLab: through the forge layer's GitLab
// adapter (its retry, auth and redirect policy; JOB-TOKEN for CI_JOB_TOKEN) and its typed
// services, which own every request and every page loop.

// GitLabOptions configure the GitLab edge.
type GitLabOptions struct {
	APIURL   string // REST base, e.g. https://gitlab.example.com/api/v4
	Token    string // never logged
	TokenEnv string // the variable that held Token (CI_JOB_TOKEN selects JOB-TOKEN)
	// HTTPClient supplies only its Transport (tests point it at a fake); the provider's own
	// client (60 s per-request timeout, its redirect policy) is used around it. nil: the
	// pooled default transport.
	HTTPClient *http.Client
	RetryMax   int // retries after the first attempt (0: the adapter default; <0: none)
	// Concurrency is requests in flight per host (--concurrency; 0: forge.DefaultConcurrency).
	Concurrency int
	// PerPage is the list page size (default 100, GitLab's maximum); tests lower it to
	// exercise pagination bounds.
	PerPage int64
}

// ConnectGitLab opens the GitLab adapter with the provider options every forge command uses
// and returns its connection and typed services. With a kind, the connection carries the
// commenter for that entity kind. It makes no request and leaves the transport rule to the
// caller, which checks it before the first request.
func ConnectGitLab(o GitLabOptions, kind string) (*forge.Conn, *glforge.Services, error) {
	fo := forge.Options{APIURL: o.APIURL, Token: o.Token, TokenEnv: o.TokenEnv, Retry: forge.Retry{Max: o.RetryMax},
		Kind: kind, WithCommenter: kind != "", Concurrency: cmp.Or(o.Concurrency, forge.DefaultConcurrency)}
	fo.Pool = forge.NewPool(fo.Concurrency, fo.Log)
	if o.HTTPClient != nil {
		fo.Transport = o.HTTPClient.Transport
	}
	return glforge.Open(fo)
}
