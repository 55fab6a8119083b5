package reviewctx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
	// The registry's provider list: review context reaches GitLab through the registry.
	_ "github.com/forgectx/forgectx/internal/forge/providers"
)

// This file is the only GitLab HTTP plumbing of the package: client construction (the
// forge/gitlab adapter's retrying client-go client, its auth and redirect policy), bounded
// pagination and bounded raw reads. It takes an *http.Client and a base URL so that it can
// be rewired onto the shared forge provider client without touching the acquisition logic.

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
	// PerPage is the list page size (default 100, GitLab's maximum); tests lower it to
	// exercise pagination bounds.
	PerPage int64
}

// newGitLabAPI builds the client-go client exactly as the GitLab adapter does.
func newGitLabAPI(o GitLabOptions) (*gl.Client, error) {
	_, api, err := ConnectGitLab(o, "")
	return api, err
}

// ConnectGitLab opens the registry's GitLab provider (the adapter's retry, auth and redirect
// policy; JOB-TOKEN for CI_JOB_TOKEN) and returns its connection and client-go client. With
// a kind, the connection carries the commenter for that entity kind. It makes no request and
// leaves the transport rule to the caller, which checks it before the first request.
func ConnectGitLab(o GitLabOptions, kind string) (*forge.Conn, *gl.Client, error) {
	p, err := forge.Resolve("--forge", "gitlab")
	if err != nil {
		return nil, nil, err
	}
	fo := forge.Options{APIURL: o.APIURL, Token: o.Token, TokenEnv: o.TokenEnv, Retry: forge.Retry{Max: o.RetryMax},
		Kind: kind, WithCommenter: kind != ""}
	if o.HTTPClient != nil {
		fo.Transport = o.HTTPClient.Transport
	}
	conn, err := forge.Connect(p, fo, false)
	if err != nil {
		return nil, nil, err
	}
	native, ok := conn.Native.(interface{ API() *gl.Client })
	if !ok {
		return nil, nil, errors.New("reviewctx: the gitlab provider exposes no client-go client")
	}
	return conn, native.API(), nil
}

// glList fetches one page.
type glList[T any] func(page int64, opts ...gl.RequestOptionFunc) ([]T, *gl.Response, error)

// pageResult is a bounded list read: Items in provider order, Pages read, and NextDeclared
// when the provider declared a page that was not fetched (a visible omission).
type pageResult[T any] struct {
	Items        []T
	Pages        int
	NextDeclared bool
}

// readPages reads offset pages 1.. until the provider declares no next page, maxPages pages
// have been read, or filled reports the bound satisfied — a next page is then never
// fetched, only recorded as declared. A next page that does not advance is an error.
func readPages[T any](ctx context.Context, maxPages int, filled func([]T) bool, fetch glList[T]) (pageResult[T], error) {
	var r pageResult[T]
	page := int64(1)
	for {
		items, resp, err := fetch(page, gl.WithContext(ctx))
		if err != nil {
			return r, err
		}
		r.Items = append(r.Items, items...)
		r.Pages++
		if resp == nil || resp.NextPage == 0 {
			return r, nil
		}
		if resp.NextPage != page+1 {
			return r, fmt.Errorf("pagination: next page %d after page %d", resp.NextPage, page)
		}
		if r.Pages >= maxPages || (filled != nil && filled(r.Items)) {
			r.NextDeclared = true
			return r, nil
		}
		page = resp.NextPage
	}
}

// errTooLarge is a bounded read that hit its bound.
var errTooLarge = errors.New("response over its byte bound")

// limitWriter accepts at most n bytes and then fails, which stops client-go's io.Copy.
type limitWriter struct {
	buf []byte
	n   int
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if len(w.buf)+len(p) > w.n {
		return 0, errTooLarge
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// getRaw GETs path (relative to the API base) into at most max bytes through the retrying
// client.
func getRaw(ctx context.Context, api *gl.Client, path string, max int) ([]byte, error) {
	req, err := api.NewRequest(http.MethodGet, path, nil, []gl.RequestOptionFunc{gl.WithContext(ctx)})
	if err != nil {
		return nil, err
	}
	w := &limitWriter{n: max}
	if _, err := api.Do(req, w); err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, errTooLarge
		}
		return nil, err
	}
	return w.buf, nil
}

var _ io.Writer = (*limitWriter)(nil)
