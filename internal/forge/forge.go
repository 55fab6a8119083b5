// Package forge owns the provider contract and registry (docs/architecture.md, "Package map";
// docs/forges.md): the Provider every forge registers (detection from the CI environment, CI
// defaults, construction of its clients from one Options), the small interfaces every adapter
// implements (Acquirer, Commenter), the command-line source policy (Open: replay, record,
// token, deadline), the transport policy (CheckAPIURL), the shared HTTP client
// (NewHTTPClient) and the one pagination loop (Paginate). Retries are internal/forge/retry.
//
// A new forge is one new package under internal/forge/<name> plus one line in
// internal/forge/providers; nothing else changes.
package forge

import (
	"context"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Ref names the entity to collect.
type Ref struct {
	Forge  string // github, gitlab or forgejo
	APIURL string // API base URL; empty means the forge's public default
	Repo   string // owner/name (GitLab: full path or numeric project id)
	Number int    // issue / PR / MR display number (GitLab: iid)
}

// Acquirer reads one entity and its selected sources into the neutral model. Entity-scope
// failures are errors; optional-scope failures are acquisition.Outcomes gaps.
type Acquirer interface {
	Acquire(ctx context.Context, ref Ref, profile acquisition.Profile) (*acquisition.Acquisition, error)
}

// Comment is a forge comment as the commenter sees it.
type Comment struct {
	ID       string // forge ID used to update the comment
	AuthorID string
	Body     string
}

// Commenter finds, creates and updates the comments forgectx owns on an entity (sticky status
// comments and receipts). Find returns comments whose body contains marker and that were
// written by the token's own identity, across all pages.
type Commenter interface {
	FindComments(ctx context.Context, ref Ref, marker string) ([]Comment, error)
	CreateComment(ctx context.Context, ref Ref, body string) (Comment, error)
	UpdateComment(ctx context.Context, ref Ref, id string, body string) error
}
