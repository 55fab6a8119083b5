package gitlab

import (
	"context"
	"fmt"

	gl "gitlab.com/gitlab-org/api/client-go"
)

// PerPage is the page size requested from every list endpoint (GitLab's maximum).
const PerPage = 100

// maxPages stops a server that never stops handing out next pages.
const maxPages = 10000

// listFunc fetches one page; opts carry the context and the next-page parameters.
type listFunc[T any] func(opts ...gl.RequestOptionFunc) ([]T, *gl.Response, error)

// all reads every page of a list. It follows the keyset next link (Link: rel="next") when the
// server offers one and the X-Next-Page offset otherwise (client-go's WithNext), and fails on
// a next page that does not advance.
func all[T any](ctx context.Context, fetch listFunc[T]) ([]T, error) {
	var out []T
	var next gl.RequestOptionFunc
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page >= maxPages {
			return nil, fmt.Errorf("pagination: more than %d pages", maxPages)
		}
		opts := []gl.RequestOptionFunc{gl.WithContext(ctx)}
		if next != nil {
			opts = append(opts, next)
		}
		items, resp, err := fetch(opts...)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if resp == nil {
			return out, nil
		}
		n, ok := gl.WithNext(resp)
		if !ok {
			return out, nil
		}
		key := fmt.Sprintf("%s|%d", resp.NextLink, resp.NextPage)
		if seen[key] {
			return nil, fmt.Errorf("pagination: next page %q repeats", key)
		}
		seen[key] = true
		next = n
	}
}
