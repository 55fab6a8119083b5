package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// EntityError is an entity-scope failure: without the entity there is no snapshot, so it
// aborts collection. It is the one provider-neutral forge.EntityError (Forge "gitlab"); Code is
// the spec gap code the assembler would report (fetch_failed, authorization_failed or
// invalid_metadata), Field what it is about. The alias keeps errors.As on *gitlab.EntityError
// working for existing callers.
type EntityError = forge.EntityError

func entityFetchError(field string, err error) error {
	code := acquisition.GapFetchFailed
	if s := statusOf(err); s == http.StatusUnauthorized || s == http.StatusForbidden || s == http.StatusNotFound {
		code = acquisition.GapAuthorizationFailed
	}
	return &EntityError{Forge: "gitlab", Code: code, Field: field, Err: quiet(err)}
}

// apiError replaces a client-go error's text, which can quote the response body and the
// request path, with the HTTP status alone; the original stays reachable through Unwrap.
type apiError struct {
	status int
	err    error
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.status, http.StatusText(e.status))
}

func (e *apiError) Unwrap() error { return e.err }

// quiet wraps an API error so that printing it never prints a response body.
func quiet(err error) error {
	if s := statusOf(err); s != 0 {
		return &apiError{status: s, err: err}
	}
	return err
}

func invalidEntity(field, rule string) error {
	return &EntityError{Forge: "gitlab", Code: acquisition.GapInvalidMetadata, Field: field, Err: errors.New(rule)}
}

// statusOf extracts the HTTP status of a client-go error (0 when there is none).
func statusOf(err error) int {
	if errors.Is(err, gl.ErrNotFound) {
		return http.StatusNotFound
	}
	var er *gl.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

// ValidateRepo reports whether repo is usable as Ref.Repo: a numeric project id (base 10,
// no leading zero) or a full path namespace/project in GitLab's path alphabet. Callers check
// it up front to report a usage error before any request.
func ValidateRepo(repo string) error {
	_, err := projectID(repo)
	return err
}

// projectID turns Ref.Repo into what client-go accepts: a numeric id or a full path.
func projectID(repo string) (any, error) {
	if repo == "" {
		return nil, errors.New("gitlab: repo: required (numeric project id or full path)")
	}
	if numericID.MatchString(repo) {
		n, err := strconv.ParseInt(repo, 10, 64)
		if err == nil {
			return n, nil
		}
	}
	if err := validProjectPath(repo); err != nil {
		return nil, err
	}
	return repo, nil
}

// validProjectPath checks a full project path against GitLab's path alphabet: at least two
// '/'-separated segments (namespace/project) of letters, digits, '_', '-' and '.', none empty,
// "." or "..", none starting with '-', at most 255 bytes each (GitLab's limits). The path becomes one URL-encoded segment, but an input outside the
// alphabet is refused up front so that no flag value can steer a request (a ".." project,
// an encoded slash, a query) or reach the API as something the forge never names.
func validProjectPath(repo string) error {
	bad := func() error {
		return fmt.Errorf("gitlab: repo %q: must be a numeric project id or a full path namespace/project of segments made of A-Z a-z 0-9 _ - . (not . or .., not starting with -)", repo)
	}
	if len(repo) > 4096 {
		return bad()
	}
	segs := strings.Split(repo, "/")
	if len(segs) < 2 {
		return bad() // a project always lives in a namespace: group/project
	}
	for _, seg := range segs {
		if seg == "" || seg == "." || seg == ".." || len(seg) > 255 || seg[0] == '-' {
			return bad()
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
				return bad()
			}
		}
	}
	return nil
}

// Acquire reads the entity named by ref and the sources profile selects. ref.Number is the
// issue iid for a work_item profile and the merge-request iid for a change_proposal profile.
func (c *Client) Acquire(ctx context.Context, ref forge.Ref, profile acquisition.Profile) (*acquisition.Acquisition, error) {
	pid, err := c.checkRef(ref, profile)
	if err != nil {
		return nil, err
	}
	c.counter.reset()
	log := c.opts.Log.With().Str("forge", "gitlab").Int("iid", ref.Number).Str("kind", profile.EntityKind).Logger()

	a := acquisition.New()
	proj, _, err := c.gl.Projects.GetProject(pid, nil, gl.WithContext(ctx))
	if err != nil {
		return nil, entityFetchError("project", err)
	}
	repoID, ok := idString(proj.ID)
	if !ok {
		return nil, invalidEntity("project.id", "missing or not a positive integer")
	}
	if proj.PathWithNamespace == "" {
		return nil, invalidEntity("project.path_with_namespace", "missing")
	}
	a.Source = acquisition.Source{Forge: "gitlab", Host: c.host, RepositoryID: repoID, Repository: proj.PathWithNamespace}
	// Later calls address the project by its immutable id, so a concurrent rename cannot
	// split one collection across two projects.
	pid = proj.ID

	change := profile.EntityKind == acquisition.KindChangeProposal
	if change {
		err = c.mergeRequest(ctx, pid, int64(ref.Number), a)
	} else {
		err = c.issue(ctx, pid, int64(ref.Number), a)
	}
	if err != nil {
		return nil, err
	}
	log.Debug().Str("entity_id", a.Entity.ID).Msg("entity read")

	rn := c.newRun(pid)
	defer rn.lookups.Wait() // a lookup started early whose actor no record kept still ends here
	rn.lookAhead(ctx, a.Entity.Author)
	// The discussions and the pipelines are independent: they are read at once (one after
	// the other at concurrency 1), each into a part merged in that order.
	disc, ck := &acquisition.Acquisition{Entity: a.Entity}, &acquisition.Acquisition{Entity: a.Entity}
	b := rn.fan.Batch()
	b.Go(func() {
		c.discussionSources(ctx, pid, int64(ref.Number), change, profile, disc)
		rn.lookAheadAll(ctx, disc)
	})
	if change && profile.Includes(acquisition.SourceChecks) {
		b.Go(func() { c.checks(ctx, pid, profile, ck, rn) })
	}
	b.Wait()
	forge.MergePart(a, disc)
	if change && profile.Includes(acquisition.SourceReviews) {
		// GitLab approvals have no immutable review record ids (spec, review mappings):
		// there is no formal review history to read.
		a.Outcomes.Add(acquisition.ScopeReviews, acquisition.GapHistoryUnavailable, 1)
	}
	forge.MergePart(a, ck)
	c.actors(ctx, pid, a, rn)
	c.finishStats(a)
	log.Info().Int("comments", len(a.Comments)).Int("threads", len(a.Threads)).Int("checks", len(a.Checks)).
		Int("actors", len(a.Actors)).Msg("gitlab acquisition complete")
	return a, nil
}

// checkRef refuses a ref or profile this client cannot read, before any request, and returns
// the project id to address.
func (c *Client) checkRef(ref forge.Ref, profile acquisition.Profile) (any, error) {
	if ref.Forge != "" && ref.Forge != "gitlab" {
		return nil, fmt.Errorf("gitlab: ref.forge %q: this adapter reads gitlab only", ref.Forge)
	}
	if ref.APIURL != "" {
		b, err := parseAPIURL(ref.APIURL)
		if err != nil {
			return nil, err
		}
		if b.String() != c.base.String() {
			return nil, fmt.Errorf("gitlab: ref.api_url %q: differs from the client's %q", ref.APIURL, c.base.String())
		}
	}
	if ref.Number < 1 {
		return nil, fmt.Errorf("gitlab: number %d: must be a positive iid", ref.Number)
	}
	if profile.EntityKind != acquisition.KindWorkItem && profile.EntityKind != acquisition.KindChangeProposal {
		return nil, fmt.Errorf("gitlab: profile entity_kind %q: must be work_item or change_proposal", profile.EntityKind)
	}
	return projectID(ref.Repo)
}

// discussionSources reads the comments and agent_runs sources: one discussions read serves
// both (receipts are notes too).
func (c *Client) discussionSources(ctx context.Context, pid any, iid int64, change bool, profile acquisition.Profile, a *acquisition.Acquisition) {
	wantComments, wantRuns := profile.Includes(acquisition.SourceComments), profile.Includes(acquisition.SourceAgentRuns)
	if wantComments || wantRuns {
		// One discussions read serves both sources: receipts are notes too.
		l := c.discussions(ctx, pid, iid, change)
		ds := uniqueDiscussions(l.rows)
		if l.err != nil {
			// The discussions not read are missing comments, threads and receipts: every scope
			// the listing feeds is short. The discussions read are kept as comments; receipts
			// are not read from an incomplete history.
			name := listIssueDiscussions
			if change {
				name = listMRDiscussions
			}
			c.shortfall(a, name, l.err, l.lost, forge.Selected(profile))
		}
		if wantComments {
			comments, threads, out := mapDiscussions(ds)
			a.Comments = append(a.Comments, comments...)
			a.Threads = append(a.Threads, threads...)
			a.Outcomes.Comments = append(a.Outcomes.Comments, out.Comments...)
		}
		if wantRuns && l.err == nil {
			c.agentRuns(ctx, ds, a)
		}
	}
}

func actorRef(id int64, username string) acquisition.ActorRef {
	var r acquisition.ActorRef
	if s, ok := idString(id); ok {
		r.ID = &s
		if username != "" {
			u := username
			r.Login = &u
		}
	}
	return r
}

func (c *Client) issue(ctx context.Context, pid any, iid int64, a *acquisition.Acquisition) error {
	is, _, err := c.gl.Issues.GetIssue(pid, iid, gl.WithContext(ctx))
	if err != nil {
		return entityFetchError("issue", err)
	}
	ans := entityAnswer{what: "issue", kind: acquisition.KindWorkItem, stateOf: issueState,
		id: is.ID, iid: is.IID, state: is.State, title: is.Title, description: is.Description,
		labels: is.Labels, created: is.CreatedAt, updated: is.UpdatedAt}
	if is.Author != nil {
		ans.author = &author{id: is.Author.ID, username: is.Author.Username}
	}
	e, err := ans.entity(iid)
	if err != nil {
		return err
	}
	a.Entity = e
	return nil
}

func (c *Client) mergeRequest(ctx context.Context, pid any, iid int64, a *acquisition.Acquisition) error {
	mr, _, err := c.Services().MergeRequests.Get(ctx, pid, iid)
	if err != nil {
		return entityFetchError("merge_request", err)
	}
	ans := entityAnswer{what: "merge_request", kind: acquisition.KindChangeProposal, stateOf: mergeRequestState,
		id: mr.ID, iid: mr.IID, state: mr.State, title: mr.Title, description: mr.Description,
		labels: mr.Labels, created: mr.CreatedAt, updated: mr.UpdatedAt}
	if mr.Author != nil {
		ans.author = &author{id: mr.Author.ID, username: mr.Author.Username}
	}
	e, err := ans.entity(iid)
	if err != nil {
		return err
	}
	e.HeadSHA = HeadSHA(mr)
	a.Entity = e
	return nil
}

// entityAnswer is what GitLab's issue and merge request answers share. Both are checked and
// mapped by the same rules, in the same order; only the field prefix of an error ("issue" or
// "merge_request"), the entity kind and the state mapping differ.
type entityAnswer struct {
	what    string
	kind    string
	stateOf func(native string) (string, error)

	id, iid            int64
	state              string
	title, description string
	labels             gl.Labels
	created, updated   *time.Time
	author             *author // nil when the answer names no author
}

// author is an answer's author as GitLab names it (issues and merge requests use different
// SDK types for it).
type author struct {
	id       int64
	username string
}

// entity validates the answer for the entity asked for by iid and maps it to the neutral
// entity; every failure is an entity-scope invalid_metadata error naming the field.
func (ans entityAnswer) entity(iid int64) (acquisition.Entity, error) {
	id, ok := idString(ans.id)
	if !ok {
		return acquisition.Entity{}, invalidEntity(ans.what+".id", "missing or not a positive integer")
	}
	if ans.iid != iid {
		return acquisition.Entity{}, invalidEntity(ans.what+".iid", fmt.Sprintf("answer has iid %d, asked for %d", ans.iid, iid))
	}
	state, err := ans.stateOf(ans.state)
	if err != nil {
		return acquisition.Entity{}, invalidEntity(ans.what+".state", err.Error())
	}
	created, ok := timestamp(ans.created)
	if !ok {
		return acquisition.Entity{}, invalidEntity(ans.what+".created_at", "missing")
	}
	updated, ok := timestamp(ans.updated)
	if !ok {
		return acquisition.Entity{}, invalidEntity(ans.what+".updated_at", "missing")
	}
	e := acquisition.Entity{
		Kind: ans.kind, ID: id, Number: int(iid), Title: ans.title, State: state,
		Labels: labels(ans.labels), Body: ans.description, CreatedAt: created, UpdatedAt: updated,
	}
	if ans.author != nil {
		e.Author = actorRef(ans.author.id, ans.author.username)
	}
	return e, nil
}

// HeadSHA is the merge request's head revision as captured at collection start: `sha`, or
// diff_refs.head_sha when `sha` is absent. An invalid or disagreeing pair yields "" (no
// revision: no check can be retained).
func HeadSHA(mr *gl.MergeRequest) string {
	sha, diff := mr.SHA, mr.DiffRefs.HeadSha
	switch {
	case sha != "" && diff != "" && sha != diff:
		return ""
	case sha == "":
		sha = diff
	}
	if !validSHA(sha) {
		return ""
	}
	return sha
}

func labels(l gl.Labels) []string {
	out := make([]string, 0, len(l))
	out = append(out, l...)
	return out
}

// discussions reads every discussion of the entity, all pages, in forge order.
func (c *Client) discussions(ctx context.Context, pid any, iid int64, change bool) listed[*gl.Discussion] {
	lo := ListOptions[*gl.Discussion]{Complete: true, DriftKey: discussionKey}
	svc := c.Services().Discussions
	if change {
		opt := &gl.ListMergeRequestDiscussionsOptions{ListOptions: gl.ListOptions{PerPage: c.perPage()}}
		return kept(svc.ListMergeRequest(ctx, pid, iid, opt, lo))
	}
	opt := &gl.ListIssueDiscussionsOptions{ListOptions: gl.ListOptions{PerPage: c.perPage()}}
	return kept(svc.ListIssue(ctx, pid, iid, opt, lo))
}

// uniqueDiscussions keeps the first listing of each discussion id: offset pages can repeat a
// discussion when the list shifts while it is read, and a repeated copy would make every copy
// of its notes a duplicate record.
func uniqueDiscussions(ds []*gl.Discussion) []*gl.Discussion {
	seen := map[string]bool{}
	out := ds[:0:0]
	for _, d := range ds {
		if d != nil && d.ID != "" {
			if seen[d.ID] {
				continue
			}
			seen[d.ID] = true
		}
		out = append(out, d)
	}
	return out
}

func fetchGap(err error) string {
	if s := statusOf(err); s == http.StatusUnauthorized || s == http.StatusForbidden {
		return acquisition.GapAuthorizationFailed
	}
	return acquisition.GapFetchFailed
}

// mapDiscussions maps discussions (in forge order) to comments and threads. System notes are
// dropped before anything else (see the package doc); a note without a valid id or creation
// time is invalid_metadata and omitted; a discussion whose id is outside the GitLab mapping
// loses its thread (invalid_metadata) but keeps its comments. Threads keep GitLab's note order;
// every later note replies to the discussion's first note; outdated is always false because
// GitLab exposes no outdated observation. Resolution comes from the resolvable notes.
func mapDiscussions(ds []*gl.Discussion) ([]acquisition.Comment, []acquisition.Thread, acquisition.Outcomes) {
	var out acquisition.Outcomes
	comments := []acquisition.Comment{}
	threads := []acquisition.Thread{}
	for _, d := range ds {
		if d == nil {
			continue
		}
		var kept []*gl.Note
		for _, n := range d.Notes {
			if n == nil || n.System {
				continue
			}
			id, ok := idString(n.ID)
			created, okT := timestamp(n.CreatedAt)
			if !ok || !okT {
				out.Add(acquisition.ScopeComments, acquisition.GapInvalidMetadata, 1)
				continue
			}
			cm := acquisition.Comment{ID: id, Author: actorRef(n.Author.ID, n.Author.Username), CreatedAt: created, Body: n.Body}
			if u, ok := timestamp(n.UpdatedAt); ok {
				cm.UpdatedAt = u
			}
			comments = append(comments, cm)
			kept = append(kept, n)
		}
		if d.IndividualNote || len(kept) == 0 {
			continue
		}
		if !validDiscussionID(d.ID) {
			out.Add(acquisition.ScopeComments, acquisition.GapInvalidMetadata, 1)
			continue
		}
		threads = append(threads, mapThread(d.ID, kept))
	}
	return comments, threads, out
}

func mapThread(id string, notes []*gl.Note) acquisition.Thread {
	root := notes[0]
	rootID, _ := idString(root.ID)
	created, _ := timestamp(root.CreatedAt)
	t := acquisition.Thread{ID: id, CreatedAt: created, CommentIDs: []string{}, Replies: []acquisition.Reply{}, Outdated: false}
	for i, n := range notes {
		nid, _ := idString(n.ID)
		t.CommentIDs = append(t.CommentIDs, nid)
		if i > 0 {
			t.Replies = append(t.Replies, acquisition.Reply{ID: nid, ParentID: rootID})
		}
	}
	if loc, ok := mapPosition(root.Position); ok {
		t.Path, t.Line, t.Side, t.StartLine = loc.Path, loc.Line, loc.Side, loc.StartLine
		if root.Position != nil && validSHA(root.Position.HeadSHA) {
			t.ReviewedSHA = root.Position.HeadSHA
		}
	}
	// A discussion is resolved when every resolvable note is; GitLab repeats the resolver on
	// each resolved note. A resolved thread whose resolver GitLab does not expose gets an
	// explicit null reference.
	resolvable, resolved := 0, 0
	var by *gl.NoteResolvedBy
	for _, n := range notes {
		if !n.Resolvable {
			continue
		}
		resolvable++
		if n.Resolved {
			resolved++
			if by == nil && n.ResolvedBy.ID > 0 {
				b := n.ResolvedBy
				by = &b
			}
		}
	}
	if resolvable > 0 && resolved == resolvable {
		t.Resolved = true
		r := acquisition.ActorRef{}
		if by != nil {
			r = actorRef(by.ID, by.Username)
		}
		t.ResolvedBy = &r
	}
	return t
}

// checks reads the jobs (retried included) of every pipeline run for the captured head
// revision and, for the jobs whose logs the profile selects, their bounded traces. The
// pipelines' job lists are read at once, each into its own slot, and taken in pipeline order;
// a selected job's trace starts as soon as its pipeline's jobs are read (at concurrency 1 the
// traces follow every job list, in job id order, as they always did).
func (c *Client) checks(ctx context.Context, pid any, profile acquisition.Profile, a *acquisition.Acquisition, rn *glRun) {
	head := a.Entity.HeadSHA
	if head == "" {
		// No valid head revision was captured: no check can be matched to it.
		a.Outcomes.Add(acquisition.ScopeChecks, acquisition.GapInvalidMetadata, 1)
		return
	}
	popt := &gl.ListProjectPipelinesOptions{
		ListOptions: gl.ListOptions{PerPage: c.perPage()},
		SHA:         gl.Ptr(head), OrderBy: gl.Ptr("id"), Sort: gl.Ptr("asc"),
	}
	sel := forge.Selected(profile)
	pl := kept(c.Services().Pipelines.ListProject(ctx, pid, popt, ListOptions[*gl.PipelineInfo]{Complete: true, DriftKey: pipelineKey}))
	if pl.err != nil {
		// The unread pipelines' jobs are missing checks and their traces missing logs; the
		// pipelines read are kept.
		c.shortfall(a, listPipelines, pl.err, pl.lost, sel)
	}
	jobs := make([]listed[*gl.Job], len(pl.rows))
	b := rn.fan.Batch()
	var tasks []func()
	for i, p := range pl.rows {
		if p == nil {
			continue
		}
		tasks = append(tasks, func() {
			jopt := &gl.ListJobsOptions{ListOptions: gl.ListOptions{PerPage: c.perPage()}, IncludeRetried: gl.Ptr(true)}
			jobs[i] = kept(c.Services().Pipelines.ListJobs(ctx, pid, p.ID, jopt, ListOptions[*gl.Job]{Complete: true, DriftKey: jobKey}))
			rn.traceAhead(ctx, profile, jobs[i].rows, p.SHA, head)
		})
	}
	b.GoAll(tasks)
	b.Wait()
	var checks []acquisition.Check
	invalid := 0
	seenJob := map[int64]bool{}
	for i, p := range pl.rows {
		if p == nil {
			continue
		}
		jl := jobs[i]
		if jl.err != nil {
			// This pipeline's unread jobs are missing checks (and logs); the jobs read, and
			// every other pipeline's, are kept.
			c.shortfall(a, listJobs, jl.err, jl.lost, sel)
		}
		for _, j := range jl.rows {
			if j == nil {
				continue
			}
			if j.ID > 0 && seenJob[j.ID] {
				// Listed again on a later page (a job added while paging shifts the offsets):
				// one record, not two copies the assembler would have to drop.
				continue
			}
			seenJob[j.ID] = true
			ck, err := mapJob(j, p.SHA, head)
			if err != nil {
				invalid++
				c.opts.Log.Debug().Int64("job_id", j.ID).Msg("job omitted: invalid_metadata")
				continue
			}
			checks = append(checks, ck)
		}
	}
	a.Outcomes.Add(acquisition.ScopeChecks, acquisition.GapInvalidMetadata, invalid)
	// A job appears once per pipeline; sort by id so the order never depends on the pages.
	sort.SliceStable(checks, func(i, j int) bool { return lessNumeric(checks[i].ID, checks[j].ID) })
	c.logs(ctx, pid, profile, checks, rn)
	a.Checks = checks
}

// lessNumeric orders base-10 ids numerically.
func lessNumeric(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// logs sets the selected checks' logs: every trace not started yet starts now, and each is
// taken into its own check.
func (c *Client) logs(ctx context.Context, pid any, profile acquisition.Profile, checks []acquisition.Check, rn *glRun) {
	var want []*forge.Future[acquisition.Log]
	for i := range checks {
		if !profile.LogSelected(checks[i].Conclusion) {
			want = append(want, nil)
			continue
		}
		id, _ := strconv.ParseInt(checks[i].ID, 10, 64)
		want = append(want, rn.trace(ctx, id, profile.Bounds.MaxSourceBytes))
	}
	forge.StartAll(rn.lookups, want)
	for i, f := range want {
		if f != nil {
			l := forge.Await(rn.fan, f)
			checks[i].Log = &l
		}
	}
}
