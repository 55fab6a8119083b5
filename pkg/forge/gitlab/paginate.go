package gitlab

import (
	"context"
	"fmt"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/pkg/forge"
)

// PerPage is the page size requested from every list endpoint (GitLab's maximum).
const PerPage = 100

// listFunc fetches one page; opts carry the context and the next-page parameters.
type listFunc[T any] func(opts ...gl.RequestOptionFunc) ([]T, *gl.Response, error)

// all reads every page of a list through the shared forge.Paginate. It follows the keyset
// next link (Link: rel="next") when the server offers one and the X-Next-Page offset otherwise
// (client-go's WithNext), and fails on a next page that does not advance. X-Total is recorded,
// not trusted: the listing ends when GitLab declares no next page.
func all[T any](ctx context.Context, fetch listFunc[T]) ([]T, error) {
	var out []T
	_, err := forge.Paginate[gl.RequestOptionFunc](nil, forge.PageRules{}, func(next gl.RequestOptionFunc) (forge.Page[gl.RequestOptionFunc], error) {
		opts := []gl.RequestOptionFunc{gl.WithContext(ctx)}
		if next != nil {
			opts = append(opts, next)
		}
		items, resp, err := fetch(opts...)
		if err != nil {
			return forge.Page[gl.RequestOptionFunc]{}, err
		}
		out = append(out, items...)
		p := forge.Page[gl.RequestOptionFunc]{Rows: len(items), Total: -1}
		if resp == nil {
			return p, nil
		}
		if resp.Header.Get("X-Total") != "" {
			p.Total = int(resp.TotalItems)
		}
		if n, ok := gl.WithNext(resp); ok {
			p.HasNext, p.Next, p.NextKey = true, n, fmt.Sprintf("%s|%d", resp.NextLink, resp.NextPage)
		}
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
