package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// entityErr is an entity-scope failure as the one provider-neutral *forge.EntityError: without
// the entity there is no snapshot, so it aborts the acquisition, and the session logs its code
// and field (never its text).
func entityErr(code, field string, err error) error {
	return &forge.EntityError{Forge: "github", Code: code, Field: field, Err: err}
}

// invalidEntity is an entity GitHub returned that the v1 mapping cannot represent.
func invalidEntity(field, format string, a ...any) error {
	return entityErr(acquisition.GapInvalidMetadata, field, fmt.Errorf(format, a...))
}

// entityFetchError classifies a failed entity read: GitHub answers NOT_FOUND (or 401, 403, 404)
// for an entity the token may not see as well as for one that does not exist, so both are
// authorization_failed, like the other adapters; anything else is fetch_failed.
func entityFetchError(field string, err error) error {
	code := acquisition.GapFetchFailed
	var ge *GraphQLError
	var he *httpError
	if errors.As(err, &ge) && ge.NotFound() ||
		errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden || he.Status == http.StatusNotFound) {
		code = acquisition.GapAuthorizationFailed
	}
	return entityErr(code, field, err)
}

type gqlLabels struct {
	TotalCount int         `json:"totalCount"`
	PageInfo   gqlPageInfo `json:"pageInfo"`
	Nodes      []struct {
		Name string `json:"name"`
	} `json:"nodes"`
}

type gqlCount struct {
	TotalCount int `json:"totalCount"`
}

type gqlEntity struct {
	Typename      string    `json:"__typename"`
	ID            string    `json:"id"`
	Number        int       `json:"number"`
	Title         string    `json:"title"`
	Body          string    `json:"body"`
	IssueState    string    `json:"issueState"`
	PRState       string    `json:"pullRequestState"`
	Merged        bool      `json:"merged"`
	CreatedAt     string    `json:"createdAt"`
	UpdatedAt     string    `json:"updatedAt"`
	HeadRefOid    string    `json:"headRefOid"`
	Author        *gqlActor `json:"author"`
	Comments      gqlCount  `json:"comments"`
	Reviews       gqlCount  `json:"reviews"`
	ReviewThreads gqlCount  `json:"reviewThreads"`
	Labels        gqlLabels `json:"labels"`
}

type entityData struct {
	Repository *struct {
		ID                 string     `json:"id"`
		NameWithOwner      string     `json:"nameWithOwner"`
		IssueOrPullRequest *gqlEntity `json:"issueOrPullRequest"`
	} `json:"repository"`
}

// readEntity reads the repository node ID and the entity in one GraphQL query (auto-detecting
// issue or pull request), capturing the head revision at collection start; more than 100
// labels are read with the same query's labels cursor.
func (r *run) readEntity(ctx context.Context) error {
	vars := map[string]any{"owner": r.owner, "name": r.name, "number": r.number, "labelsAfter": nil}
	var d entityData
	if err := readPage(ctx, func() error { return r.c.graphql(ctx, "Entity", vars, &d) }); err != nil {
		return entityFetchError("entity", fmt.Errorf("%s#%d: %w", r.owner+"/"+r.name, r.number, err))
	}
	r.countPage(acquisition.SourceEntity)
	if d.Repository == nil || d.Repository.IssueOrPullRequest == nil {
		return entityErr(acquisition.GapAuthorizationFailed, "entity", fmt.Errorf("%s#%d: not found", r.owner+"/"+r.name, r.number))
	}
	e := d.Repository.IssueOrPullRequest
	a := r.acq
	a.Source = acquisition.Source{
		Forge:        "github",
		Host:         r.c.host,
		RepositoryID: d.Repository.ID,
		Repository:   strings.ToLower(d.Repository.NameWithOwner),
	}
	if !validNodeID(d.Repository.ID) {
		return invalidEntity("repository id", "%q: not a GitHub node ID", d.Repository.ID)
	}
	// GraphQL resolves a renamed or transferred repository to its current name; every later
	// request uses that name, so REST does not meet the old name's 301 (the REST client also
	// follows a same-origin 301 for the cases GraphQL does not cover).
	if o, n, ok := strings.Cut(d.Repository.NameWithOwner, "/"); ok && validRepoSegment(o) && validRepoSegment(n) {
		r.owner, r.name = o, n
	}
	if err := r.classify(e.Typename); err != nil {
		return err
	}
	if !validNodeID(e.ID) {
		return invalidEntity("entity id", "%q: not a GitHub node ID", e.ID)
	}
	native := e.IssueState
	if r.isPR {
		native = e.PRState
	}
	state, ok := mapEntityState(native, r.isPR, e.Merged)
	if !ok {
		return invalidEntity("state", "%q: not in the v1 GitHub state table", native)
	}
	if r.isPR {
		r.head = strings.ToLower(e.HeadRefOid)
		if !gitOID.MatchString(r.head) {
			return invalidEntity("headRefOid", "%q: not a Git object ID", e.HeadRefOid)
		}
	}
	author, ok := r.refGQL(e.Author)
	if !ok {
		return invalidEntity("author id", "not a GitHub node ID")
	}
	labels, err := r.readLabels(ctx, vars, e.Labels)
	if err != nil {
		return err
	}
	sort.Strings(labels)
	r.needPages("entity", e.Labels.TotalCount)
	a.Entity = acquisition.Entity{
		Kind:      a.Entity.Kind,
		ID:        e.ID,
		Number:    e.Number,
		Title:     e.Title,
		State:     state,
		Author:    author,
		Labels:    labels,
		Body:      e.Body,
		CreatedAt: e.CreatedAt,
		UpdatedAt: e.UpdatedAt,
		HeadSHA:   r.head,
	}
	r.totals = entityTotals{Comments: e.Comments.TotalCount, Reviews: e.Reviews.TotalCount, Threads: e.ReviewThreads.TotalCount}
	return nil
}

// parseRepo splits an OWNER/NAME repository argument, refusing anything that is not two
// segments of GitHub's owner and repository alphabet (so it cannot steer a request path).
func parseRepo(repo string) (owner, name string, err error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || !validRepoSegment(owner) || !validRepoSegment(name) {
		return "", "", fmt.Errorf("repo %q: must be OWNER/NAME (letters, digits, '-', '_', '.')", repo)
	}
	return owner, name, nil
}

// validRepoSegment accepts an owner or repository name as GitHub spells them (letters, digits,
// '-', '_', '.'), so a hostile nameWithOwner cannot steer later request paths.
func validRepoSegment(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 100 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// classify sets the entity kind from the GraphQL type: an issue is a work item, a pull request
// a change proposal; anything else has no v1 mapping.
func (r *run) classify(typename string) error {
	switch typename {
	case "Issue":
		r.acq.Entity.Kind = acquisition.KindWorkItem
	case "PullRequest":
		r.acq.Entity.Kind = acquisition.KindChangeProposal
		r.isPR = true
	default:
		return invalidEntity("type", "#%d: unsupported type %q", r.number, typename)
	}
	return nil
}

// readLabels returns every label name of the entity: the first page came with the entity query;
// more than 100 are read with the same query's labels cursor (vars is that query's variables).
// A short or endless walk fails the entity: its labels must be complete.
func (r *run) readLabels(ctx context.Context, vars map[string]any, first gqlLabels) ([]string, error) {
	labels := []string{}
	for _, l := range first.Nodes {
		labels = append(labels, l.Name)
	}
	// More labels: follow the labels cursor. The rest of each response is ignored: the entity
	// (and its head revision) is the one captured by the first read.
	total := first.TotalCount // the last declared total: labels removed meanwhile are not missing
	if first.PageInfo.HasNextPage {
		start, err := cursorPage(len(first.Nodes), first.PageInfo, first.TotalCount)
		if err != nil {
			return nil, entityErr(acquisition.GapFetchFailed, "labels", err)
		}
		seen := start.NextKey
		walk := cursorWalk{pages: 1, rows: len(first.Nodes)}
		_, err = forge.Paginate[any](start.Next, forge.PageRules{}, func(after any) (forge.Page[any], error) {
			vars["labelsAfter"] = after
			var more entityData
			if err := readPage(ctx, func() error { return r.c.graphql(ctx, "Entity", vars, &more) }); err != nil {
				return forge.Page[any]{}, entityFetchError("labels", err)
			}
			r.countPage(acquisition.SourceEntity)
			if more.Repository == nil || more.Repository.IssueOrPullRequest == nil {
				return forge.Page[any]{}, errVanished
			}
			ls := more.Repository.IssueOrPullRequest.Labels
			total = ls.TotalCount
			for _, l := range ls.Nodes {
				labels = append(labels, l.Name)
			}
			p, err := walk.page(len(ls.Nodes), ls.PageInfo, ls.TotalCount)
			if err == nil && p.HasNext && p.NextKey == seen {
				err = errors.New("the cursor did not advance")
			}
			return p, err
		})
		var ee *forge.EntityError
		if errors.As(err, &ee) {
			return nil, err
		}
		if err != nil {
			return nil, entityErr(acquisition.GapFetchFailed, "labels", err)
		}
	}
	if len(labels) < total {
		return nil, entityErr(acquisition.GapFetchFailed, "labels", fmt.Errorf("read %d of %d", len(labels), total))
	}
	return labels, nil
}
