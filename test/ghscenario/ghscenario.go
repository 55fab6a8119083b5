// Package ghscenario is the deterministic maker of GitHub cassettes for the adapter's tests
// and benchmark: a Scenario (the forge's state) becomes the exact exchanges the adapter makes,
// with response bodies in GitHub's real shapes (taken from the @octokit/openapi examples and
// the @octokit/graphql-schema types). Small scenarios are committed under
// test/fixtures/github/<name>/ (regenerated with `go test ./internal/forge/github -run
// TestFixtures -update`); the large one is generated at test time.
package ghscenario

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/internal/forge/github"
)

// APIURL is the base the cassettes are recorded against.
const APIURL = "https://api.github.com"

// User is a GitHub account.
type User struct {
	Login  string
	ID     int64
	NodeID string
	Bot    bool
	// Role is the collaborator-permission role_name; Permission the legacy field. An empty
	// Role and Permission make the permission endpoint answer 404.
	Role, Permission string
}

// Comment is an issue comment or review-thread comment.
type Comment struct {
	ID        int64
	NodeID    string
	User      *User // nil: deleted (the REST API shows the ghost account)
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
	ReplyTo   string // review-thread comments: the node ID replied to
	ReviewID  string // review-thread comments: the review node ID
	Minimized bool
}

// Review is a formal review.
type Review struct {
	ID          int64
	NodeID      string
	User        *User
	State       string
	Body        string
	SubmittedAt *time.Time
	CommitID    string
	// Dismissal (for DISMISSED reviews): the timeline event, when exposed.
	DismissedBy *User
	DismissedAt *time.Time
}

// Thread is a review thread.
type Thread struct {
	NodeID                                           string
	Resolved, Outdated                               bool
	ResolvedBy                                       *User
	Path                                             string
	Line, StartLine, OriginalLine, OriginalStartLine *int
	DiffSide                                         string
	StartDiffSide                                    *string
	Comments                                         []Comment
}

// CheckRun is a check run; Job, for Actions check runs, is its job (same ID) in workflow run
// RunID.
type CheckRun struct {
	ID          int64
	NodeID      string
	Name        string
	HeadSHA     string
	Status      string
	Conclusion  string
	StartedAt   *time.Time
	CompletedAt *time.Time
	Actions     bool
	RunID       int64
	JobCreated  time.Time
	Log         string
}

// Scenario is one entity on a GitHub repository.
type Scenario struct {
	Owner, Repo string
	RepoID      string
	Number      int
	NodeID      string
	PR          bool
	State       string // OPEN or CLOSED
	Merged      bool
	Title, Body string
	Author      *User
	Labels      []string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	HeadSHA     string

	Comments []Comment
	Reviews  []Review
	Threads  []Thread
	// Checks lists the check runs for HeadSHA; OtherChecks those of an earlier head revision
	// (recorded but never requested by a correct adapter).
	Checks      []CheckRun
	OtherSHA    string
	OtherChecks []CheckRun

	// EmptyLastCommentsPage makes the comments list end with an empty page that the previous
	// page's Link header announced.
	EmptyLastCommentsPage bool

	// LogSelected tells the maker which checks' logs the adapter will request.
	LogSelected func(conclusion string) bool
}

// Build renders the scenario as a cassette.
func Build(s *Scenario) (*cassette.Cassette, error) {
	b := &builder{s: s, c: &cassette.Cassette{Meta: cassette.Meta{Version: cassette.Version, Forge: "github", APIURL: APIURL}}}
	if err := b.entity(); err != nil {
		return nil, err
	}
	b.comments()
	if s.PR {
		b.reviews()
		if err := b.dismissals(); err != nil {
			return nil, err
		}
		if err := b.threads(); err != nil {
			return nil, err
		}
		b.checks()
	}
	b.permissions()
	return b.c, nil
}

type builder struct {
	s *Scenario
	c *cassette.Cassette
}

func (b *builder) repoPath() string { return "/repos/" + b.s.Owner + "/" + b.s.Repo }

func (b *builder) add(method, rawURL string, reqBody []byte, status int, hdr http.Header, body []byte) {
	in := cassette.Interaction{
		Request:  cassette.Request{Method: method, URL: rawURL, Body: cassette.NewBody(reqBody)},
		Response: &cassette.Response{Status: status, Header: hdr, Body: cassette.NewBody(body)},
	}
	if reqBody != nil {
		in.Request.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	}
	b.c.Interactions = append(b.c.Interactions, in)
}

func jsonHeader() http.Header {
	return http.Header{
		"Content-Type":          {"application/json; charset=utf-8"},
		"X-Github-Api-Version":  {"2022-11-28"},
		"X-Ratelimit-Limit":     {"5000"},
		"X-Ratelimit-Remaining": {"4999"},
		"X-Ratelimit-Reset":     {"1798761600"},
		"X-Ratelimit-Resource":  {"core"},
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maker input is Go values built by tests
	}
	return b
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func isoPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return iso(*t)
}

var ghost = &User{Login: "ghost", ID: 10137, NodeID: "MDQ6VXNlcjEwMTM3"}

// restUser is GitHub's simple-user object.
func restUser(u *User) map[string]any {
	if u == nil {
		u = ghost
	}
	typ := "User"
	login := u.Login
	if u.Bot {
		typ = "Bot"
	}
	base := "https://api.github.com/users/" + url.PathEscape(login)
	return map[string]any{
		"login": login, "id": u.ID, "node_id": u.NodeID,
		"avatar_url":          fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", u.ID),
		"gravatar_id":         "",
		"url":                 base,
		"html_url":            "https://github.com/" + login,
		"followers_url":       base + "/followers",
		"following_url":       base + "/following{/other_user}",
		"gists_url":           base + "/gists{/gist_id}",
		"starred_url":         base + "/starred{/owner}{/repo}",
		"subscriptions_url":   base + "/subscriptions",
		"organizations_url":   base + "/orgs",
		"repos_url":           base + "/repos",
		"events_url":          base + "/events{/privacy}",
		"received_events_url": base + "/received_events",
		"type":                typ,
		"user_view_type":      "public",
		"site_admin":          false,
	}
}

// gqlActor is a GraphQL Actor selection (__typename login ... on Node { id }).
func gqlActor(u *User) any {
	if u == nil {
		return nil
	}
	t := "User"
	login := u.Login
	if u.Bot {
		t = "Bot"
		login = strings.TrimSuffix(login, "[bot]")
	}
	return map[string]any{"__typename": t, "login": login, "id": u.NodeID}
}

func (b *builder) gql(op string, vars map[string]any, data any) error {
	body, err := github.GraphQLRequestBody(op, vars)
	if err != nil {
		return err
	}
	b.add("POST", APIURL+"/graphql", body, 200, jsonHeader(), mustJSON(map[string]any{"data": data}))
	return nil
}

func (b *builder) entity() error {
	s := b.s
	labels := []any{}
	for _, l := range s.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	// Labels come 100 per Entity answer; more are read by the same query with labelsAfter.
	var after any
	for lo := 0; ; lo += github.PerPage {
		hi := min(lo+github.PerPage, len(labels))
		if err := b.entityPage(labels, lo, hi, after); err != nil {
			return err
		}
		if hi >= len(labels) {
			return nil
		}
		after = cursor(hi)
	}
}

// entityPage is one Entity answer carrying labels [lo, hi).
func (b *builder) entityPage(labels []any, lo, hi int, after any) error {
	s := b.s
	e := map[string]any{
		"__typename": "Issue",
		"id":         s.NodeID, "number": s.Number, "title": s.Title, "body": s.Body,
		"issueState": s.State, "createdAt": iso(s.CreatedAt), "updatedAt": iso(s.UpdatedAt),
		"author":   gqlActor(s.Author),
		"comments": map[string]any{"totalCount": len(s.Comments)},
		"labels": map[string]any{"totalCount": len(labels), "pageInfo": map[string]any{"hasNextPage": hi < len(labels), "endCursor": cursor(hi)},
			"nodes": labels[lo:hi]},
	}
	if s.PR {
		e["__typename"] = "PullRequest"
		delete(e, "issueState")
		e["pullRequestState"] = s.State
		e["merged"] = s.Merged
		if s.Merged {
			e["pullRequestState"] = "MERGED"
		}
		e["headRefOid"] = s.HeadSHA
		e["reviews"] = map[string]any{"totalCount": len(s.Reviews)}
		e["reviewThreads"] = map[string]any{"totalCount": len(s.Threads)}
	}
	vars := map[string]any{"owner": s.Owner, "name": s.Repo, "number": s.Number, "labelsAfter": after}
	return b.gql("Entity", vars, map[string]any{"repository": map[string]any{
		"id": s.RepoID, "nameWithOwner": s.Owner + "/" + s.Repo, "issueOrPullRequest": e,
	}})
}

// startCursor is the cursor of the first of the page of items [lo, hi) (null when empty).
func startCursor(lo, hi int) any {
	if hi == lo {
		return nil
	}
	return cursor(lo + 1)
}

func cursor(n int) any {
	if n == 0 {
		return nil
	}
	return "Y3Vyc29yOnYyOpHO" + strconv.Itoa(n)
}

// restPages emits a REST list in pages of 100 with GitHub's Link header (no rel="next" on the
// last page, even when it is full).
func (b *builder) restPages(path string, query url.Values, items []any, wrap func(page []any) any, emptyTail bool) int {
	n := (len(items) + github.PerPage - 1) / github.PerPage
	if n == 0 {
		n = 1
	}
	last := n
	if emptyTail {
		last = n + 1
	}
	for p := 1; p <= last; p++ {
		q := url.Values{}
		for k, v := range query {
			q[k] = v
		}
		q.Set("per_page", strconv.Itoa(github.PerPage))
		if p > 1 {
			q.Set("page", strconv.Itoa(p))
		}
		lo, hi := (p-1)*github.PerPage, p*github.PerPage
		lo, hi = min(lo, len(items)), min(hi, len(items))
		page := items[lo:hi]
		hdr := jsonHeader()
		if p < last {
			link := func(pg int, rel string) string {
				lq := url.Values{}
				for k, v := range q {
					lq[k] = v
				}
				lq.Set("page", strconv.Itoa(pg))
				return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, APIURL, path, lq.Encode(), rel)
			}
			hdr.Set("Link", link(p+1, "next")+", "+link(last, "last"))
		}
		var body any = page
		if wrap != nil {
			body = wrap(page)
		}
		b.add("GET", APIURL+path+"?"+q.Encode(), nil, 200, hdr, mustJSON(body))
	}
	return last
}

func (b *builder) comments() {
	s := b.s
	items := []any{}
	for _, c := range s.Comments {
		kind := "issues"
		if s.PR {
			kind = "pull"
		}
		items = append(items, map[string]any{
			"id": c.ID, "node_id": c.NodeID,
			"url":                      fmt.Sprintf("%s%s/issues/comments/%d", APIURL, b.repoPath(), c.ID),
			"html_url":                 fmt.Sprintf("https://github.com/%s/%s/%s/%d#issuecomment-%d", s.Owner, s.Repo, kind, s.Number, c.ID),
			"body":                     c.Body,
			"user":                     restUser(c.User),
			"created_at":               iso(c.CreatedAt),
			"updated_at":               iso(c.UpdatedAt),
			"issue_url":                fmt.Sprintf("%s%s/issues/%d", APIURL, b.repoPath(), s.Number),
			"author_association":       "CONTRIBUTOR",
			"performed_via_github_app": nil,
			"reactions": map[string]any{"url": fmt.Sprintf("%s%s/issues/comments/%d/reactions", APIURL, b.repoPath(), c.ID),
				"total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0, "confused": 0, "heart": 0, "rocket": 0, "eyes": 0},
		})
	}
	pages := b.restPages(fmt.Sprintf("%s/issues/%d/comments", b.repoPath(), s.Number), nil, items, nil, s.EmptyLastCommentsPage)
	b.existsCheck(items, pages)
}

// existsCheck emits the adapter's drift check of a REST listing of more than one page:
// Exists requests for the node IDs of every page but the last, 1,000 per request, all present.
func (b *builder) existsCheck(items []any, pages int) {
	if pages < 2 {
		return
	}
	var ids []string
	for _, it := range items[:min(len(items), (pages-1)*github.PerPage)] {
		ids = append(ids, it.(map[string]any)["node_id"].(string))
	}
	for lo := 0; lo < len(ids); lo += 1000 {
		chunk := ids[lo:min(len(ids), lo+1000)]
		vars := github.ExistsVars(chunk)
		data := map[string]any{}
		for k, v := range vars {
			nodes := []any{}
			for _, id := range v.([]string) {
				nodes = append(nodes, map[string]any{"id": id})
			}
			data["n"+strings.TrimPrefix(k, "ids")] = nodes
		}
		body, err := github.GraphQLRequestBody("Exists", vars)
		if err != nil {
			panic(err) // the document is the adapter's own
		}
		b.add("POST", APIURL+"/graphql", body, 200, jsonHeader(), mustJSON(map[string]any{"data": data}))
	}
}

func (b *builder) reviews() {
	s := b.s
	items := []any{}
	for _, r := range s.Reviews {
		m := map[string]any{
			"id": r.ID, "node_id": r.NodeID, "user": restUser(r.User), "body": r.Body, "state": r.State,
			"html_url":           fmt.Sprintf("https://github.com/%s/%s/pull/%d#pullrequestreview-%d", s.Owner, s.Repo, s.Number, r.ID),
			"pull_request_url":   fmt.Sprintf("%s%s/pulls/%d", APIURL, b.repoPath(), s.Number),
			"author_association": "COLLABORATOR",
			"_links": map[string]any{
				"html":         map[string]any{"href": fmt.Sprintf("https://github.com/%s/%s/pull/%d#pullrequestreview-%d", s.Owner, s.Repo, s.Number, r.ID)},
				"pull_request": map[string]any{"href": fmt.Sprintf("%s%s/pulls/%d", APIURL, b.repoPath(), s.Number)},
			},
			"commit_id": r.CommitID,
		}
		if r.SubmittedAt != nil {
			m["submitted_at"] = iso(*r.SubmittedAt)
		}
		items = append(items, m)
	}
	b.existsCheck(items, b.restPages(fmt.Sprintf("%s/pulls/%d/reviews", b.repoPath(), s.Number), nil, items, nil, false))
}

func (b *builder) dismissals() error {
	s := b.s
	dismissed := false
	for _, r := range s.Reviews {
		dismissed = dismissed || r.State == "DISMISSED"
	}
	if !dismissed {
		return nil
	}
	nodes := b.dismissalNodes()
	var after any
	for lo := 0; ; lo += github.PerPage {
		hi := min(lo+github.PerPage, len(nodes))
		vars := map[string]any{"owner": s.Owner, "name": s.Repo, "number": s.Number, "after": after}
		err := b.gql("Dismissals", vars, map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
			"timelineItems": map[string]any{"pageInfo": map[string]any{"hasNextPage": hi < len(nodes), "endCursor": cursor(hi)}, "nodes": nodes[lo:hi]},
		}}})
		if err != nil || hi >= len(nodes) {
			return err
		}
		after = cursor(hi)
	}
}

func (b *builder) reviewComment(c Comment, sha string) map[string]any {
	var reply, review any
	if c.ReplyTo != "" {
		reply = map[string]any{"id": c.ReplyTo}
	}
	if c.ReviewID != "" {
		review = map[string]any{"id": c.ReviewID}
	}
	var author any
	if c.User != nil {
		author = gqlActor(c.User)
	}
	return map[string]any{
		"id": c.NodeID, "body": c.Body, "createdAt": iso(c.CreatedAt), "updatedAt": iso(c.UpdatedAt),
		"isMinimized": c.Minimized, "author": author, "replyTo": reply, "pullRequestReview": review,
		"commit": map[string]any{"oid": sha}, "originalCommit": map[string]any{"oid": sha},
	}
}

// threadNode is one review thread with its first page of comments, as the thread queries
// select it.
func (b *builder) threadNode(t Thread) map[string]any {
	first := t.Comments
	if len(first) > github.PerPage {
		first = first[:github.PerPage]
	}
	cn := []any{}
	for _, c := range first {
		cn = append(cn, b.reviewComment(c, b.s.HeadSHA))
	}
	var resolvedBy any
	if t.ResolvedBy != nil {
		resolvedBy = map[string]any{"login": t.ResolvedBy.Login, "id": t.ResolvedBy.NodeID}
	}
	return map[string]any{
		"id": t.NodeID, "isResolved": t.Resolved, "isOutdated": t.Outdated, "path": t.Path,
		"line": t.Line, "startLine": t.StartLine, "originalLine": t.OriginalLine, "originalStartLine": t.OriginalStartLine,
		"diffSide": t.DiffSide, "startDiffSide": t.StartDiffSide, "resolvedBy": resolvedBy,
		"comments": map[string]any{"totalCount": len(t.Comments),
			"pageInfo": map[string]any{"hasNextPage": len(t.Comments) > github.PerPage, "endCursor": cursor(len(first))},
			"nodes":    cn},
	}
}

// ThreadsFromEnd renders the review-thread pages the adapter reads backwards from the last
// thread (ThreadsFromEnd, last: 100, before: the previous page's startCursor) after a forward
// page failed: every backward page down to the first thread, the last thread's page first.
// Tests register the ones the adapter is expected to reach.
func ThreadsFromEnd(s *Scenario) ([]cassette.Interaction, error) {
	b := &builder{s: s, c: &cassette.Cassette{}}
	var before any
	hi := len(s.Threads)
	for {
		lo := max(0, hi-github.PerPage)
		nodes := []any{}
		for _, t := range s.Threads[lo:hi] {
			nodes = append(nodes, b.threadNode(t))
		}
		vars := map[string]any{"owner": s.Owner, "name": s.Repo, "number": s.Number, "before": before}
		err := b.gql("ThreadsFromEnd", vars, map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
			"reviewThreads": map[string]any{"totalCount": len(s.Threads),
				"pageInfo": map[string]any{"hasPreviousPage": lo > 0, "startCursor": startCursor(lo, hi)}, "nodes": nodes},
		}}})
		if err != nil {
			return nil, err
		}
		if lo == 0 {
			return b.c.Interactions, nil
		}
		before, hi = cursor(lo+1), lo
	}
}

// ThreadCommentsFromEnd renders, for every thread with more than one page of comments, the
// pages the adapter reads backwards from its last comment (ThreadCommentsFromEnd) after a
// forward page failed: every backward page down to the first comment.
func ThreadCommentsFromEnd(s *Scenario) ([]cassette.Interaction, error) {
	b := &builder{s: s, c: &cassette.Cassette{}}
	for _, t := range s.Threads {
		if len(t.Comments) <= github.PerPage {
			continue
		}
		var before any
		for hi := len(t.Comments); hi > 0; {
			lo := max(0, hi-github.PerPage)
			nodes := []any{}
			for _, c := range t.Comments[lo:hi] {
				nodes = append(nodes, b.reviewComment(c, s.HeadSHA))
			}
			err := b.gql("ThreadCommentsFromEnd", map[string]any{"id": t.NodeID, "before": before}, map[string]any{"node": map[string]any{"comments": map[string]any{
				"totalCount": len(t.Comments), "pageInfo": map[string]any{"hasPreviousPage": lo > 0, "startCursor": startCursor(lo, hi)}, "nodes": nodes,
			}}})
			if err != nil {
				return nil, err
			}
			before, hi = cursor(lo+1), lo
		}
	}
	return b.c.Interactions, nil
}

// DismissalsFromEnd renders the review-dismissed timeline pages the adapter reads backwards
// from the last event (DismissalsFromEnd) after a forward page failed.
func DismissalsFromEnd(s *Scenario) ([]cassette.Interaction, error) {
	b := &builder{s: s, c: &cassette.Cassette{}}
	nodes := b.dismissalNodes()
	var before any
	for hi := len(nodes); hi > 0; {
		lo := max(0, hi-github.PerPage)
		vars := map[string]any{"owner": s.Owner, "name": s.Repo, "number": s.Number, "before": before}
		err := b.gql("DismissalsFromEnd", vars, map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
			"timelineItems": map[string]any{"pageInfo": map[string]any{"hasPreviousPage": lo > 0, "startCursor": startCursor(lo, hi)}, "nodes": nodes[lo:hi]},
		}}})
		if err != nil {
			return nil, err
		}
		before, hi = cursor(lo+1), lo
	}
	return b.c.Interactions, nil
}

// dismissalNodes are the review-dismissed timeline events, oldest first (a dismissal the
// timeline does not expose has none).
func (b *builder) dismissalNodes() []any {
	nodes := []any{}
	for _, r := range b.s.Reviews {
		if r.State != "DISMISSED" || r.DismissedAt == nil {
			continue
		}
		nodes = append(nodes, map[string]any{
			"__typename": "ReviewDismissedEvent",
			"id":         "RDE_kwDO" + strings.TrimPrefix(r.NodeID, "PRR_kwDO"),
			"createdAt":  iso(*r.DismissedAt),
			"actor":      gqlActor(r.DismissedBy),
			"review":     map[string]any{"id": r.NodeID},
		})
	}
	return nodes
}

// FromEnd is every backward page the adapter may read (ThreadsFromEnd, ThreadCommentsFromEnd,
// DismissalsFromEnd).
func FromEnd(s *Scenario) ([]cassette.Interaction, error) {
	var out []cassette.Interaction
	for _, f := range []func(*Scenario) ([]cassette.Interaction, error){ThreadsFromEnd, ThreadCommentsFromEnd, DismissalsFromEnd} {
		ins, err := f(s)
		if err != nil {
			return nil, err
		}
		out = append(out, ins...)
	}
	return out, nil
}

func (b *builder) threads() error {
	s := b.s
	pages := (len(s.Threads) + github.PerPage - 1) / github.PerPage
	if pages == 0 {
		pages = 1
	}
	var after any
	type more struct {
		id       string
		comments []Comment
	}
	var overflow []more
	for p := 0; p < pages; p++ {
		lo, hi := min(p*github.PerPage, len(s.Threads)), min((p+1)*github.PerPage, len(s.Threads))
		nodes := []any{}
		for _, t := range s.Threads[lo:hi] {
			if len(t.Comments) > github.PerPage {
				overflow = append(overflow, more{t.NodeID, t.Comments[github.PerPage:]})
			}
			nodes = append(nodes, b.threadNode(t))
		}
		end := cursor(hi)
		vars := map[string]any{"owner": s.Owner, "name": s.Repo, "number": s.Number, "after": after}
		err := b.gql("Threads", vars, map[string]any{"repository": map[string]any{"pullRequest": map[string]any{
			"reviewThreads": map[string]any{"totalCount": len(s.Threads),
				"pageInfo": map[string]any{"hasNextPage": p < pages-1, "endCursor": end}, "nodes": nodes},
		}}})
		if err != nil {
			return err
		}
		after = end
	}
	for _, o := range overflow {
		done := github.PerPage
		rest := o.comments
		for len(rest) > 0 {
			n := min(len(rest), github.PerPage)
			cn := []any{}
			for _, c := range rest[:n] {
				cn = append(cn, b.reviewComment(c, s.HeadSHA))
			}
			vars := map[string]any{"id": o.id, "after": cursor(done)}
			done += n
			rest = rest[n:]
			err := b.gql("ThreadComments", vars, map[string]any{"node": map[string]any{"comments": map[string]any{
				"totalCount": done + len(rest), "pageInfo": map[string]any{"hasNextPage": len(rest) > 0, "endCursor": cursor(done)}, "nodes": cn,
			}}})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *builder) checkRunJSON(c CheckRun) map[string]any {
	s := b.s
	app := map[string]any{"id": 15368, "slug": "github-actions", "node_id": "MDM6QXBwMTUzNjg=", "name": "GitHub Actions",
		"owner":       map[string]any{"login": "github", "id": 9919, "node_id": "MDEyOk9yZ2FuaXphdGlvbjk5MTk=", "type": "Organization", "site_admin": false},
		"description": "Automate your workflow from idea to production", "external_url": "https://help.github.com/en/actions",
		"html_url": "https://github.com/apps/github-actions", "created_at": "2018-07-30T09:30:17Z", "updated_at": "2019-12-10T19:04:12Z",
		"permissions": map[string]any{"checks": "write", "contents": "write", "metadata": "read"}, "events": []any{"check_run", "push"}}
	details := fmt.Sprintf("https://github.com/%s/%s/actions/runs/%d/job/%d", s.Owner, s.Repo, c.RunID, c.ID)
	if !c.Actions {
		app = map[string]any{"id": 1, "slug": "octoapp", "node_id": "MDExOkludGVncmF0aW9uMQ==", "name": "Octocat App",
			"owner":       map[string]any{"login": "github", "id": 1, "node_id": "MDEyOk9yZ2FuaXphdGlvbjE=", "type": "Organization", "site_admin": false},
			"description": "", "external_url": "https://example.com", "html_url": "https://github.com/apps/octoapp",
			"created_at": "2017-07-08T16:18:44-04:00", "updated_at": "2017-07-08T16:18:44-04:00",
			"permissions": map[string]any{"metadata": "read", "checks": "write"}, "events": []any{"push", "pull_request"}}
		details = "https://example.com/ci/" + strconv.FormatInt(c.ID, 10)
	}
	var conclusion any
	if c.Conclusion != "" {
		conclusion = c.Conclusion
	}
	return map[string]any{
		"id": c.ID, "head_sha": c.HeadSHA, "node_id": c.NodeID, "external_id": "",
		"url":         fmt.Sprintf("%s%s/check-runs/%d", APIURL, b.repoPath(), c.ID),
		"html_url":    fmt.Sprintf("https://github.com/%s/%s/runs/%d", s.Owner, s.Repo, c.ID),
		"details_url": details, "status": c.Status, "conclusion": conclusion,
		"started_at": isoPtr(c.StartedAt), "completed_at": isoPtr(c.CompletedAt),
		"output":        map[string]any{"title": nil, "summary": nil, "text": nil, "annotations_count": 0, "annotations_url": fmt.Sprintf("%s%s/check-runs/%d/annotations", APIURL, b.repoPath(), c.ID)},
		"name":          c.Name,
		"check_suite":   map[string]any{"id": c.RunID + 1000000},
		"app":           app,
		"pull_requests": []any{},
	}
}

func (b *builder) checks() {
	s := b.s
	list := func(sha string, runs []CheckRun) {
		items := []any{}
		for _, c := range runs {
			items = append(items, b.checkRunJSON(c))
		}
		total := len(items)
		b.existsCheck(items, b.restPages(fmt.Sprintf("%s/commits/%s/check-runs", b.repoPath(), sha), url.Values{"filter": {"all"}}, items,
			func(page []any) any { return map[string]any{"total_count": total, "check_runs": page} }, false))
	}
	list(s.HeadSHA, s.Checks)
	if s.OtherSHA != "" {
		list(s.OtherSHA, s.OtherChecks)
	}
	// Actions: the head revision's workflow runs, then one jobs listing per run.
	byRun := map[int64][]CheckRun{}
	for _, c := range s.Checks {
		if c.Actions {
			byRun[c.RunID] = append(byRun[c.RunID], c)
		}
	}
	if len(byRun) == 0 {
		return
	}
	ids := make([]int64, 0, len(byRun))
	for id := range byRun {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	runs := []any{}
	for _, id := range ids {
		runs = append(runs, map[string]any{
			"id": id, "name": "CI", "node_id": fmt.Sprintf("WFR_kwLOAAAB%d", id), "head_branch": "feature", "head_sha": s.HeadSHA,
			"path": ".github/workflows/ci.yml", "run_number": id % 1000, "event": "pull_request", "display_title": s.Title,
			"status": "completed", "conclusion": "success", "workflow_id": 159038, "check_suite_id": id + 1000000,
			"url":        fmt.Sprintf("%s%s/actions/runs/%d", APIURL, b.repoPath(), id),
			"html_url":   fmt.Sprintf("https://github.com/%s/%s/actions/runs/%d", s.Owner, s.Repo, id),
			"created_at": iso(byRun[id][0].JobCreated), "updated_at": iso(byRun[id][0].JobCreated), "run_attempt": 1,
			"pull_requests":   []any{},
			"jobs_url":        fmt.Sprintf("%s%s/actions/runs/%d/jobs", APIURL, b.repoPath(), id),
			"logs_url":        fmt.Sprintf("%s%s/actions/runs/%d/logs", APIURL, b.repoPath(), id),
			"check_suite_url": fmt.Sprintf("%s%s/check-suites/%d", APIURL, b.repoPath(), id+1000000),
			"artifacts_url":   fmt.Sprintf("%s%s/actions/runs/%d/artifacts", APIURL, b.repoPath(), id),
			"cancel_url":      fmt.Sprintf("%s%s/actions/runs/%d/cancel", APIURL, b.repoPath(), id),
			"rerun_url":       fmt.Sprintf("%s%s/actions/runs/%d/rerun", APIURL, b.repoPath(), id),
			"workflow_url":    fmt.Sprintf("%s%s/actions/workflows/159038", APIURL, b.repoPath()),
			"head_commit": map[string]any{"id": s.HeadSHA, "tree_id": "d23f6eedb1e1b9610bbc754ddb5197bfe7271223",
				"message": s.Title, "timestamp": iso(byRun[id][0].JobCreated),
				"author":    map[string]any{"name": "Monalisa Octocat", "email": "monalisa@example.com"},
				"committer": map[string]any{"name": "GitHub", "email": "noreply@github.com"}},
			"repository":      b.minimalRepo(),
			"head_repository": b.minimalRepo(),
		})
	}
	nRuns := len(runs)
	b.existsCheck(runs, b.restPages(b.repoPath()+"/actions/runs", url.Values{"head_sha": {s.HeadSHA}}, runs,
		func(page []any) any { return map[string]any{"total_count": nRuns, "workflow_runs": page} }, false))
	for _, id := range ids {
		jobs := []any{}
		for _, c := range byRun[id] {
			var conclusion any
			if c.Conclusion != "" {
				conclusion = c.Conclusion
			}
			jobs = append(jobs, map[string]any{
				"id": c.ID, "run_id": id, "run_attempt": 1, "node_id": "CR_kwDO" + strconv.FormatInt(c.ID, 10),
				"run_url":  fmt.Sprintf("%s%s/actions/runs/%d", APIURL, b.repoPath(), id),
				"head_sha": c.HeadSHA, "url": fmt.Sprintf("%s%s/actions/jobs/%d", APIURL, b.repoPath(), c.ID),
				"html_url": fmt.Sprintf("https://github.com/%s/%s/actions/runs/%d/job/%d", s.Owner, s.Repo, id, c.ID),
				"status":   c.Status, "conclusion": conclusion, "created_at": iso(c.JobCreated),
				"started_at": isoPtr(c.StartedAt), "completed_at": isoPtr(c.CompletedAt), "name": c.Name, "steps": []any{},
				"check_run_url": fmt.Sprintf("%s%s/check-runs/%d", APIURL, b.repoPath(), c.ID),
				"labels":        []any{"ubuntu-latest"}, "runner_id": 1, "runner_name": "GitHub Actions 1",
				"runner_group_id": 2, "runner_group_name": "GitHub Actions", "workflow_name": "CI", "head_branch": "feature",
			})
		}
		nJobs := len(jobs)
		b.existsCheck(jobs, b.restPages(fmt.Sprintf("%s/actions/runs/%d/jobs", b.repoPath(), id), url.Values{"filter": {"all"}}, jobs,
			func(page []any) any { return map[string]any{"total_count": nJobs, "jobs": page} }, false))
	}
	// Logs of the checks the profile selects (Actions checks only: others are omitted).
	for _, c := range s.Checks {
		if !c.Actions || s.LogSelected == nil || !s.LogSelected(mappedConclusion(c.Conclusion)) || c.Status != "completed" {
			continue
		}
		blob := fmt.Sprintf("https://productionresultssa0.blob.core.windows.net/actions-results/%d/logs/job-%d.txt?rsct=text%%2Fplain&se=2026-11-30T08%%3A00%%3A00Z&sig=REDACTED&sp=r&sv=2025-01-05", c.RunID, c.ID)
		hdr := http.Header{"Location": {blob}, "Content-Type": {"text/html;charset=utf-8"}}
		b.add("GET", fmt.Sprintf("%s%s/actions/jobs/%d/logs", APIURL, b.repoPath(), c.ID), nil, http.StatusFound, hdr, nil)
		b.add("GET", blob, nil, 200, http.Header{"Content-Type": {"text/plain"}}, []byte(c.Log))
	}
}

// minimalRepo is GitHub's minimal-repository object for the scenario's repository.
func (b *builder) minimalRepo() map[string]any {
	s := b.s
	api := APIURL + b.repoPath()
	owner := restUser(&User{Login: s.Owner, ID: 9919, NodeID: "O_kgDOAAAmzw"})
	owner["type"] = "Organization"
	m := map[string]any{
		"id": 123456789, "node_id": s.RepoID, "name": s.Repo, "full_name": s.Owner + "/" + s.Repo, "owner": owner,
		"private": false, "html_url": "https://github.com/" + s.Owner + "/" + s.Repo, "description": "This your first repo!",
		"fork": false, "url": api,
	}
	for _, k := range []string{"archive_url:/{archive_format}{/ref}", "assignees_url:/assignees{/user}", "blobs_url:/git/blobs{/sha}",
		"branches_url:/branches{/branch}", "collaborators_url:/collaborators{/collaborator}", "comments_url:/comments{/number}",
		"commits_url:/commits{/sha}", "compare_url:/compare/{base}...{head}", "contents_url:/contents/{+path}",
		"contributors_url:/contributors", "deployments_url:/deployments", "downloads_url:/downloads", "events_url:/events",
		"forks_url:/forks", "git_commits_url:/git/commits{/sha}", "git_refs_url:/git/refs{/sha}", "git_tags_url:/git/tags{/sha}",
		"hooks_url:/hooks", "issue_comment_url:/issues/comments{/number}", "issue_events_url:/issues/events{/number}",
		"issues_url:/issues{/number}", "keys_url:/keys{/key_id}", "labels_url:/labels{/name}", "languages_url:/languages",
		"merges_url:/merges", "milestones_url:/milestones{/number}", "notifications_url:/notifications{?since,all,participating}",
		"pulls_url:/pulls{/number}", "releases_url:/releases{/id}", "stargazers_url:/stargazers", "statuses_url:/statuses/{sha}",
		"subscribers_url:/subscribers", "subscription_url:/subscription", "tags_url:/tags", "teams_url:/teams",
		"trees_url:/git/trees{/sha}"} {
		name, suffix, _ := strings.Cut(k, ":")
		m[name] = api + suffix
	}
	return m
}

func mappedConclusion(c string) string {
	if c == "startup_failure" {
		return "failure"
	}
	return c
}

// permissions emits one collaborator-permission lookup per distinct human author, resolver
// and dismisser (bots and deleted accounts are never looked up).
func (b *builder) permissions() {
	s := b.s
	seen := map[string]bool{}
	var users []*User
	addU := func(u *User) {
		if u == nil || u.Bot || seen[u.Login] {
			return
		}
		seen[u.Login] = true
		users = append(users, u)
	}
	addU(s.Author)
	for _, c := range s.Comments {
		addU(c.User)
	}
	if s.PR {
		for _, r := range s.Reviews {
			if r.State == "PENDING" {
				continue
			}
			addU(r.User)
			if r.State == "DISMISSED" && r.DismissedAt != nil {
				addU(r.DismissedBy)
			}
		}
		for _, t := range s.Threads {
			for _, c := range t.Comments {
				addU(c.User)
			}
			if t.Resolved {
				addU(t.ResolvedBy)
			}
		}
	}
	for _, u := range users {
		path := fmt.Sprintf("%s%s/collaborators/%s/permission", APIURL, b.repoPath(), u.Login)
		if u.Role == "" && u.Permission == "" {
			b.add("GET", path, nil, 404, jsonHeader(), []byte(`{"message":"Not Found","documentation_url":"https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user","status":"404"}`))
			continue
		}
		b.add("GET", path, nil, 200, jsonHeader(), mustJSON(map[string]any{"permission": u.Permission, "role_name": u.Role, "user": restUser(u)}))
	}
}
