package forgejo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// EntityError is an entity-scope failure: the repository, issue or pull request could not be
// read or mapped, so there is no snapshot. It is the one provider-neutral forge.EntityError;
// Code is the spec's entity gap code (fetch_failed, authorization_failed or
// invalid_metadata). Forge and Field stay empty: the message has always been unprefixed
// ("entity fetch_failed: GET /repos/{owner}/{repo}: …", wrapped by the session as
// "acquire: forgejo: …") and names the field in its text. The alias keeps errors.As on
// *forgejo.EntityError working.
type EntityError = forge.EntityError

func entityErr(err error) error {
	return &EntityError{Code: gapFor(err), Err: err}
}

func entityInvalid(format string, a ...any) error {
	return &EntityError{Code: acquisition.GapInvalidMetadata, Err: fmt.Errorf(format, a...)}
}

// splitRepo validates owner/name: two segments of Forgejo's name alphabet [A-Za-z0-9_.-],
// neither "." nor "..", so an input can never steer a request to another API path.
func splitRepo(repo string) (string, string, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || !nameSegment(owner) || !nameSegment(name) {
		return "", "", fmt.Errorf("forgejo: repository %q: must be owner/name, each of A-Z a-z 0-9 _ . - (not . or ..)", repo)
	}
	return owner, name, nil
}

// ValidateRepo reports whether repo is a usable owner/name (see splitRepo); callers check it
// up front to report a usage error before any request.
func ValidateRepo(repo string) error {
	_, _, err := splitRepo(repo)
	return err
}

func nameSegment(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 255 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// checkRef validates ref against the client.
func (c *Client) checkRef(ref forge.Ref) (string, string, error) {
	if ref.Forge != "" && ref.Forge != Forge {
		return "", "", fmt.Errorf("forgejo: ref forge %q: this adapter reads forgejo", ref.Forge)
	}
	if ref.APIURL != "" && strings.TrimRight(ref.APIURL, "/") != c.apiURL {
		return "", "", fmt.Errorf("forgejo: ref API URL %q differs from the client's %q", ref.APIURL, c.apiURL)
	}
	if ref.Number <= 0 {
		return "", "", fmt.Errorf("forgejo: number %d: must be a positive issue or pull request number", ref.Number)
	}
	return splitRepo(ref.Repo)
}

// Acquire implements forge.Acquirer: it reads the repository, the entity and the sources the
// profile selects into the neutral model. Entity-scope failures are errors (*EntityError or a
// validation error); every optional-scope failure is an outcome gap.
func (c *Client) Acquire(ctx context.Context, ref forge.Ref, p acquisition.Profile) (*acquisition.Acquisition, error) {
	owner, name, err := c.checkRef(ref)
	if err != nil {
		return nil, err
	}
	isPull := false
	switch p.EntityKind {
	case acquisition.KindWorkItem:
	case acquisition.KindChangeProposal:
		isPull = true
	default:
		return nil, fmt.Errorf("forgejo: profile entity_kind %q: must be work_item or change_proposal", p.EntityKind)
	}
	a := acquisition.New()
	r := &run{ctx: ctx, c: c, repo: c.reader.Repo(owner, name), owner: owner, name: name, number: int64(ref.Number), a: a, pages: map[string]int{}, bound: 2, sel: forge.Selected(p),
		fan: forge.NewFanout(c.concurrency), perms: &permissions{byLogin: map[string]*forge.Future[permAnswer]{}}}
	if err := r.repository(); err != nil {
		return nil, err
	}
	if isPull {
		err = r.pull()
	} else {
		err = r.issue()
	}
	if err != nil {
		return nil, err
	}
	lookups := r.fan.Batch()
	defer lookups.Wait() // a lookup started early whose actor no record kept still ends here
	r.lookups = lookups
	r.lookAhead(&r.a.Entity.Author)
	r.sources(ctx, p, isPull)
	if p.Includes(acquisition.SourceAgentRuns) {
		r.agentRuns()
	}
	r.actors()
	sortAcquisition(a)
	c.stats.finish(a, r.pages, r.bound+r.listBound())
	c.log.Info().Str("forge", Forge).Str("repository_id", a.Source.RepositoryID).
		Str("entity_id", a.Entity.ID).Int("comments", len(a.Comments)).Int("reviews", len(a.Reviews)).
		Int("threads", len(a.Threads)).Int("checks", len(a.Checks)).Int("actors", len(a.Actors)).
		Msg("forgejo acquisition complete")
	return a, nil
}

// run is the state of one Acquire call.
type run struct {
	ctx    context.Context // the Acquire call's: a listing skips no page once it is done
	c      *Client
	repo   Repo // the typed services of the repository: every list is read through them
	owner  string
	name   string
	number int64
	a      *acquisition.Acquisition
	pages  map[string]int          // successfully read pages per list
	bound  int                     // the statistics' lower bound on requests, besides the listings
	lists  []forge.Pagination      // the listings read (the reads that stand), for listBound
	sel    func(scope string) bool // the scopes the profile selects (forge.Selected)
	// issueComments is the issue comments list as read (comments and receipts share it);
	// issueCommentsErr is why it is incomplete, issueCommentsLost the rows it lost (0:
	// unknown).
	issueComments     []*gitea.Comment
	issueCommentsErr  error
	issueCommentsLost int
	// fan bounds the goroutines of the run; perms are its permission lookups, one per login,
	// started on lookups as soon as a source's records name the actor (lookAhead).
	fan     *forge.Fanout
	perms   *permissions
	lookups *forge.Batch
}

// sources reads the profile's independent sources — the issue comments, the reviews with
// their per-review comments, the Actions tasks with the head's commit statuses — each on a
// part of its own (a run whose acquisition, statistics and outcomes are its own), at once
// within the run's Fanout. The parts are merged in the sequential order (comments, reviews,
// checks), so records, gaps and statistics never depend on which source finished first; at
// concurrency 1 the sources are read one after another in that order, as before.
func (r *run) sources(ctx context.Context, p acquisition.Profile, isPull bool) {
	var parts []*run
	b := r.fan.Batch()
	read := func(f func(part *run)) {
		part := r.part()
		parts = append(parts, part)
		b.Go(func() {
			f(part)
			part.lookAheadAll()
		})
	}
	if p.Includes(acquisition.SourceComments) || p.Includes(acquisition.SourceAgentRuns) {
		read(func(part *run) { part.readIssueComments(p.Includes(acquisition.SourceComments)) })
	}
	if isPull && p.Includes(acquisition.SourceReviews) {
		read(func(part *run) { part.reviews(ctx, p.Includes(acquisition.SourceComments)) })
	}
	if isPull && p.Includes(acquisition.SourceChecks) {
		read(func(part *run) { part.checks(ctx, p) })
	}
	b.Wait()
	for _, part := range parts {
		r.merge(part)
	}
}

// part is a run for one source: it shares the client, repository, Fanout and lookups, and
// keeps its own acquisition (holding the entity, which checks need), statistics and outcomes.
func (r *run) part() *run {
	p := *r
	p.a = &acquisition.Acquisition{Entity: r.a.Entity}
	p.pages, p.bound, p.lists = map[string]int{}, 0, nil
	return &p
}

// merge adds a part's records, outcomes and statistics to r, in the part's own order. Adding a
// part's gaps scope by scope in their order yields the outcomes the sequential read added
// directly.
func (r *run) merge(part *run) {
	forge.MergePart(r.a, part.a)
	for name, n := range part.pages {
		r.pages[name] += n
	}
	r.bound += part.bound
	r.lists = append(r.lists, part.lists...)
	if part.issueComments != nil || part.issueCommentsErr != nil {
		r.issueComments, r.issueCommentsErr, r.issueCommentsLost = part.issueComments, part.issueCommentsErr, part.issueCommentsLost
	}
}

func (r *run) repository() error {
	repo, err := r.repo.GetLenient(r.ctx)
	if err != nil {
		return entityErr(err)
	}
	if repo.ID <= 0 {
		return entityInvalid("repository id %d: must be a positive integer", repo.ID)
	}
	if repo.FullName == "" {
		return entityInvalid("repository full_name: required")
	}
	r.a.Source = acquisition.Source{
		Forge:        Forge,
		Host:         r.c.host,
		RepositoryID: strconv.FormatInt(repo.ID, 10),
		Repository:   strings.ToLower(repo.FullName),
	}
	return nil
}

func labelNames(ls []*gitea.Label) []string {
	out := []string{}
	for _, l := range ls {
		if l != nil {
			out = append(out, l.Name)
		}
	}
	return out
}

func (r *run) issue() error {
	is, err := r.repo.Issues.GetLenient(r.ctx, r.number)
	if err != nil {
		return entityErr(err)
	}
	if is.PullRequest != nil {
		return entityInvalid("#%d is a pull request, but the profile's entity_kind is work_item", r.number)
	}
	if is.ID <= 0 {
		return entityInvalid("issue id %d: must be a positive integer", is.ID)
	}
	if is.Index != r.number {
		return entityInvalid("issue number %d: the answer is not #%d", is.Index, r.number)
	}
	state, ok := mapEntityState(string(is.State), false, false)
	if !ok {
		return entityInvalid("issue state %q: not in the Forgejo state table (open, closed)", is.State)
	}
	r.a.Entity = acquisition.Entity{
		Kind:      acquisition.KindWorkItem,
		ID:        strconv.FormatInt(is.ID, 10),
		Number:    int(is.Index),
		Title:     is.Title,
		State:     state,
		Author:    actorRef(is.Poster),
		Labels:    labelNames(is.Labels),
		Body:      is.Body,
		CreatedAt: timeString(is.Created),
		UpdatedAt: timeString(is.Updated),
	}
	if r.a.Entity.CreatedAt == "" {
		return entityInvalid("issue created_at: required")
	}
	return nil
}

func (r *run) pull() error {
	pr, err := r.repo.Pulls.GetLenient(r.ctx, r.number)
	if err != nil {
		return entityErr(err)
	}
	if pr.ID <= 0 {
		return entityInvalid("pull request id %d: must be a positive integer", pr.ID)
	}
	if pr.Index != r.number {
		return entityInvalid("pull request number %d: the answer is not #%d", pr.Index, r.number)
	}
	state, ok := mapEntityState(string(pr.State), true, pr.HasMerged)
	if !ok {
		return entityInvalid("pull request state %q: not in the Forgejo state table (open, closed, merged: true)", pr.State)
	}
	if pr.Head == nil {
		return entityInvalid("pull request head: required")
	}
	head, ok := normOID(pr.Head.Sha)
	if !ok {
		return entityInvalid("pull request head.sha: must be a 40- or 64-digit hexadecimal Git object ID")
	}
	r.a.Entity = acquisition.Entity{
		Kind:      acquisition.KindChangeProposal,
		ID:        strconv.FormatInt(pr.ID, 10),
		Number:    int(pr.Index),
		Title:     pr.Title,
		State:     state,
		Author:    actorRef(pr.Poster),
		Labels:    labelNames(pr.Labels),
		Body:      pr.Body,
		CreatedAt: timePtrString(pr.Created),
		UpdatedAt: timePtrString(pr.Updated),
		HeadSHA:   head,
	}
	if r.a.Entity.CreatedAt == "" {
		return entityInvalid("pull request created_at: required")
	}
	return nil
}

// readIssueComments reads every page of the issue comments API once (plain conversation
// comments; review comments come from the reviews) and, when the comments source is
// selected, maps them to comment records. Receipts are read from the same list. An
// incomplete list keeps the comments it read and gaps what it lost.
func (r *run) readIssueComments(records bool) {
	name := "comments"
	if !records {
		name = "agent_runs"
	}
	l := standing(r, name, r.repo.Issues.ListCommentsLenient(r.ctx, r.number, r.lenient(name)))
	r.issueComments, r.issueCommentsErr, r.issueCommentsLost = l.Rows, l.Err, l.Lost
	if l.Err != nil {
		// The comments scope loses the rows; receipts (agent_runs) are gapped by agentRuns.
		r.shortfall(listIssueComments, l.Err, l.Lost, func(s string) bool { return records && s == acquisition.ScopeComments })
	}
	if !records {
		return
	}
	seen := map[int64]bool{}
	for _, c := range l.Rows {
		if c == nil || c.ID <= 0 || c.Created.IsZero() {
			r.a.Outcomes.Add(acquisition.ScopeComments, acquisition.GapInvalidMetadata, 1)
			continue
		}
		if seen[c.ID] {
			continue // listed twice across a moving page boundary: one record
		}
		seen[c.ID] = true
		r.a.Comments = append(r.a.Comments, acquisition.Comment{
			ID:        strconv.FormatInt(c.ID, 10),
			Author:    actorRef(c.Poster),
			CreatedAt: timeString(c.Created),
			UpdatedAt: timeString(c.Updated),
			Body:      c.Body,
		})
	}
}

// agentRuns maps the receipt comments of the issue comments list. An incomplete list makes
// the history incomplete: a gap, never an empty history.
func (r *run) agentRuns() {
	if r.issueCommentsErr != nil {
		// The receipts of the unread comments are missing (issue_comments feeds receipts).
		r.shortfall(listReceipts, r.issueCommentsErr, r.issueCommentsLost, r.sel)
		return
	}
	r.addReceipts()
}

// nativeReview is one row of GET /repos/{owner}/{repo}/pulls/{n}/reviews. It embeds the SDK's
// gitea.PullReview for the wire shape and shadows the timestamps with raw strings: the SDK
// struct has no created_at, which the spec's timestamp rule falls back to when a completed
// review exposes no submitted_at, and it cannot tell an absent submitted_at from a zero one.
type nativeReview struct {
	gitea.PullReview
	SubmittedAt *string `json:"submitted_at"`
	CreatedAt   *string `json:"created_at"`
	UpdatedAt   *string `json:"updated_at"`
}

// reviews reads every page of formal reviews, maps their states, then reads each submitted
// review's comments and builds threads from them.
func (r *run) reviews(ctx context.Context, withComments bool) {
	l := standing(r, "reviews", r.repo.Reviews.ListLenient(ctx, r.number, r.lenient("reviews")))
	if l.Err != nil {
		// The unread reviews are missing, and with them their comments (comment records and
		// the threads of the reviews relation): every scope the reviews listing feeds is
		// short. The reviews read are kept.
		r.shortfall(listReviews, l.Err, l.Lost, r.sel)
	}
	all := l.Rows
	var kept []int64
	seen := map[int64]bool{}
	for _, nr := range all {
		state, disp := mapReviewState(string(nr.State), nr.Dismissed)
		switch disp {
		case reviewOmit:
			continue
		case reviewInvalid:
			r.a.Outcomes.Add(acquisition.ScopeReviews, acquisition.GapInvalidMetadata, 1)
			continue
		}
		if nr.ID <= 0 {
			r.a.Outcomes.Add(acquisition.ScopeReviews, acquisition.GapInvalidMetadata, 1)
			continue
		}
		if seen[nr.ID] {
			continue
		}
		submitted, ok := reviewTime(nr)
		if !ok {
			r.a.Outcomes.Add(acquisition.ScopeReviews, acquisition.GapInvalidMetadata, 1)
			continue
		}
		seen[nr.ID] = true
		rv := acquisition.Review{
			ID:          strconv.FormatInt(nr.ID, 10),
			Author:      actorRef(nr.Reviewer),
			State:       state,
			SubmittedAt: submitted,
			Body:        nr.Body,
		}
		if u, ok := nativeTime(nr.UpdatedAt); ok {
			rv.UpdatedAt = u
		}
		if sha, ok := normOID(nr.CommitID); ok {
			rv.ReviewedSHA = sha
		}
		if state == "dismissed" {
			// Forgejo exposes the dismissal but neither who dismissed nor when.
			rv.DismissedBy = &acquisition.ActorRef{}
		}
		r.a.Reviews = append(r.a.Reviews, rv)
		kept = append(kept, nr.ID)
	}
	r.reviewConversations(kept, withComments)
}

// reviewConversations reads each kept review's comments and builds threads from them. The
// reviews' comment lists are read at once within the run's Fanout (in review id order at
// concurrency 1), each into its own slot; failures and rows are taken in review id order.
func (r *run) reviewConversations(kept []int64, withComments bool) {
	sort.Slice(kept, func(i, j int) bool { return kept[i] < kept[j] })
	type conversation struct {
		cs  []*gitea.PullReviewComment
		err error
	}
	got := make([]conversation, len(kept))
	b := r.fan.Batch()
	tasks := make([]func(), len(kept))
	for i, id := range kept {
		tasks[i] = func() {
			got[i].cs, got[i].err = r.repo.ReviewComments.ListOnce(r.ctx, r.number, id)
		}
	}
	b.GoAll(tasks)
	b.Wait()
	var rcs []*gitea.PullReviewComment
	for i, id := range kept {
		r.bound++
		cs, err := got[i].cs, got[i].err
		if err != nil {
			// The review's conversation is incomplete: both its comment records and its
			// threads (the reviews relation) are missing.
			r.shortfall(listReviewComments, err, 1, r.sel)
			continue
		}
		for _, c := range cs {
			if c != nil && c.ReviewID == 0 {
				c.ReviewID = id
			}
		}
		rcs = append(rcs, cs...)
	}
	threads, records, invalid := buildThreads(rcs)
	r.a.Threads = append(r.a.Threads, threads...)
	if withComments {
		r.a.Comments = append(r.a.Comments, records...)
		r.a.Outcomes.Add(acquisition.ScopeComments, acquisition.GapInvalidMetadata, invalid)
	}
	r.a.Outcomes.Add(acquisition.ScopeReviews, acquisition.GapInvalidMetadata, invalid)
}

// reviewTime is the spec's Forgejo review timestamp rule: native submitted_at when present,
// created_at only when the review exposes no submission time; neither is invalid_metadata.
func reviewTime(nr nativeReview) (string, bool) {
	s, ok := nativeTime(nr.SubmittedAt)
	if !ok {
		return "", false
	}
	if s != "" {
		return s, true
	}
	c, ok := nativeTime(nr.CreatedAt)
	if !ok || c == "" {
		return "", false
	}
	return c, true
}

// checks reads every page of the repository's Actions tasks and keeps those for the captured
// head SHA. The tasks endpoint has no head_sha filter, so selecting the head's tasks from the
// repository-wide list is the query itself: tasks for other revisions are not this entity's
// checks and are neither emitted nor counted. A task with a missing or malformed head_sha
// cannot be attributed and is invalid_metadata.
func (r *run) checks(ctx context.Context, p acquisition.Profile) {
	head := r.a.Entity.HeadSHA
	l := standing(r, "tasks", r.repo.Actions.ListTasksLenient(ctx, r.lenient("tasks")))
	if l.Err != nil {
		// The unread tasks are missing checks, and their logs missing check logs.
		r.shortfall(listTasks, l.Err, l.Lost, r.sel)
		if len(l.Rows) == 0 {
			return
		}
	}
	seen := map[int64]bool{}
	var headTasks []task // the head's attributable tasks, mapped or a gap: each is already counted
	for _, t := range l.Rows {
		sha, ok := normOID(t.HeadSHA)
		if !ok {
			r.a.Outcomes.Add(acquisition.ScopeChecks, acquisition.GapInvalidMetadata, 1)
			continue
		}
		if sha != head || seen[t.ID] {
			continue
		}
		seen[t.ID] = true
		headTasks = append(headTasks, t)
		c, gap := mapTask(t, head)
		if gap != "" {
			r.a.Outcomes.Add(acquisition.ScopeChecks, gap, 1)
			continue
		}
		if p.LogSelected(c.Conclusion) {
			// Forgejo's API offers no log download for an Actions task (logs are served only
			// by the web UI), so every selected log is unsupported; the assembler turns these
			// into the check_logs gap after check selection.
			c.Log = &acquisition.Log{Outcome: acquisition.LogUnsupported}
		}
		r.a.Checks = append(r.a.Checks, c)
	}
	if l.Err == nil {
		// A complete tasks list: the head's commit statuses show what it does not hold — a job
		// no runner has taken yet (or one blocked on needs:) has no task, and external CI has
		// none ever. (An incomplete tasks list is already the checks gap, and which statuses
		// its unread rows account for cannot be known.)
		r.commitStatuses(ctx, head, headTasks)
	}
}

// commitStatus is one row of GET /repos/{owner}/{repo}/commits/{ref}/status (the latest status
// per context, gitea.CombinedStatus.Statuses).
type commitStatus struct {
	ID        int64   `json:"id"`
	Context   string  `json:"context"`
	CreatedAt *string `json:"created_at"`
}

// combinedStatus is the body of GET /repos/{owner}/{repo}/commits/{ref}/status. Its
// total_count counts the statuses of this page only (Gitea's convert.ToCombinedStatus), so the
// listing's total is X-Total-Count alone.
type combinedStatus struct {
	Statuses []commitStatus `json:"statuses"`
}

// commitStatuses makes sure no job of the head vanishes and a head without Actions tasks does
// not look check-free. Gitea and Forgejo write a commit status per Actions job when they create
// the run, before any runner takes the job, so a job waiting for a runner or blocked on needs:
// has a status and no task; external CI (Woodpecker, Drone) reports only through statuses, and
// with Actions disabled the tasks endpoint answers 200 and an empty list. A commit status has no
// check-run lifecycle the spec's check rules require (no start, completion or never-started
// report, and it is overwritten per context), so statuses are never emitted as checks: every
// status no head task accounts for (unaccounted) is the checks scope's unsupported gap, one per
// status. The latest status per context is read, every page, as the commit_statuses listing.
func (r *run) commitStatuses(ctx context.Context, head string, tasks []task) {
	l := standing(r, listStatuses, r.repo.Commits.ListStatusesLenient(ctx, head, r.lenient(listStatuses)))
	if l.Err != nil {
		// Unread statuses may be jobs without a task: each is a missing check.
		r.shortfall(listStatuses, l.Err, l.Lost, r.sel)
	}
	if n := unaccounted(l.Rows, tasks); n > 0 {
		r.a.Outcomes.Add(acquisition.ScopeChecks, acquisition.GapUnsupported, n)
	}
}

// actors resolves every referenced actor's effective repository role through
// GET /repos/{owner}/{repo}/collaborators/{user}/permission. Every actor is kind human:
// Forgejo has no positive bot flag, so bot identity comes only from the operator's bot
// registry, applied by the assembler.
func (r *run) actors() {
	logins := map[string]*string{}
	var ids []string
	note := func(ref *acquisition.ActorRef) {
		if ref == nil || ref.ID == nil {
			return
		}
		if _, ok := logins[*ref.ID]; !ok {
			ids = append(ids, *ref.ID)
			logins[*ref.ID] = ref.Login
		} else if logins[*ref.ID] == nil {
			logins[*ref.ID] = ref.Login
		}
	}
	r.a.EachActorRef(note)
	sort.Strings(ids)
	// Every lookup not started yet starts now; the answers are taken in id order.
	var fs []*forge.Future[permAnswer]
	for _, id := range ids {
		fs = r.lookAheadFuture(fs, &acquisition.ActorRef{ID: &id, Login: logins[id]})
	}
	forge.StartAll(r.lookups, fs)
	for _, id := range ids {
		actor := acquisition.Actor{ID: id, Login: logins[id], Kind: acquisition.ActorHuman}
		if role, ok := r.permission(id, logins[id]); ok {
			actor.Role, actor.RoleVerified = role, true
		}
		r.a.Actors = append(r.a.Actors, actor)
	}
}

// permAnswer is one permission lookup's answer as the server gave it.
type permAnswer struct {
	res *gitea.CollaboratorPermissionResult
	err error
}

// permissions are a run's permission lookups, one per login, shared by its parts.
type permissions struct {
	mu      sync.Mutex
	byLogin map[string]*forge.Future[permAnswer]
}

// lookup returns login's lookup, creating it (not started) on first use.
func (r *run) lookup(login string) *forge.Future[permAnswer] {
	r.perms.mu.Lock()
	defer r.perms.mu.Unlock()
	f, ok := r.perms.byLogin[login]
	if !ok {
		f = forge.NewFuture(func() permAnswer {
			res, err := r.repo.Collaborators.Permission(r.ctx, login)
			return permAnswer{res, err}
		})
		r.perms.byLogin[login] = f
	}
	return f
}

// lookAhead starts ref's permission lookup now, while other sources are still being read,
// unless the run is sequential (its lookups are made in actor order after every source, as
// they always were). actors decides what the answer means; a lookup for an actor no record
// ends up referencing is made and ignored.
func (r *run) lookAhead(ref *acquisition.ActorRef) {
	forge.StartAll(r.lookups, r.lookAheadFuture(nil, ref))
}

// lookAheadFuture appends ref's permission lookup to fs when lookAhead would start it.
func (r *run) lookAheadFuture(fs []*forge.Future[permAnswer], ref *acquisition.ActorRef) []*forge.Future[permAnswer] {
	if r.fan.Sequential() || ref == nil || ref.ID == nil || ref.Login == nil || *ref.Login == "" {
		return fs
	}
	return append(fs, r.lookup(*ref.Login))
}

// lookAheadAll starts the lookups of every actor the part's records reference, as one work
// queue (forge.StartAll) so the run's slots stay busy.
func (r *run) lookAheadAll() {
	var fs []*forge.Future[permAnswer]
	r.a.EachActorRef(func(ref *acquisition.ActorRef) { fs = r.lookAheadFuture(fs, ref) })
	forge.StartAll(r.lookups, fs)
}

// permission looks one actor's role up. It returns ok=false (role null, unverified) on any
// failure; a 404 (no such user, or not visible) is that representation without a gap, every
// other failure also adds an actors gap.
func (r *run) permission(id string, login *string) (*string, bool) {
	if login == nil || *login == "" {
		r.a.Outcomes.Add(acquisition.ScopeActors, acquisition.GapInvalidMetadata, 1)
		return nil, false
	}
	r.bound++
	ans := forge.Await(r.fan, r.lookup(*login))
	res, err := ans.res, ans.err
	if err != nil {
		if statusOf(err) == http.StatusNotFound {
			r.c.log.Debug().Str("actor_id", id).Int("status", http.StatusNotFound).Msg("forgejo permission lookup: not found; role unverified")
			return nil, false
		}
		r.gap(acquisition.ScopeActors, gapFor(err), err)
		return nil, false
	}
	// The lookup is by login, which a rename can hand to another account between the record
	// fetch and this call: accept the answer only for the same immutable account ID.
	if res.User == nil || strconv.FormatInt(res.User.ID, 10) != id {
		r.a.Outcomes.Add(acquisition.ScopeActors, acquisition.GapInvalidMetadata, 1)
		return nil, false
	}
	role, ok := permissionRole(string(res.Permission))
	if !ok {
		r.a.Outcomes.Add(acquisition.ScopeActors, acquisition.GapInvalidMetadata, 1)
		return nil, false
	}
	return &role, true
}

// gap records an optional-scope failure and logs its code and status (never a body).
func (r *run) gap(scope, code string, err error) {
	r.a.Outcomes.Add(scope, code, 1)
	ev := r.c.log.Warn().Str("forge", Forge).Str("scope", scope).Str("code", code).Int("status", statusOf(err))
	var e *APIError
	if errors.As(err, &e) {
		ev = ev.Str("op", e.Op)
	}
	ev.Msg("forgejo source incomplete")
}

// sortAcquisition puts every array in the spec's canonical order, so the acquisition itself is
// deterministic (the assembler sorts again).
func sortAcquisition(a *acquisition.Acquisition) {
	sort.SliceStable(a.Comments, func(i, j int) bool {
		return earlierStr(a.Comments[i].CreatedAt, a.Comments[i].ID, a.Comments[j].CreatedAt, a.Comments[j].ID)
	})
	sort.SliceStable(a.Reviews, func(i, j int) bool {
		return earlierStr(a.Reviews[i].SubmittedAt, a.Reviews[i].ID, a.Reviews[j].SubmittedAt, a.Reviews[j].ID)
	})
	sort.SliceStable(a.Threads, func(i, j int) bool {
		return earlierStr(a.Threads[i].CreatedAt, a.Threads[i].ID, a.Threads[j].CreatedAt, a.Threads[j].ID)
	})
	sort.SliceStable(a.Checks, func(i, j int) bool {
		return earlierStr(a.Checks[i].CreatedAt, a.Checks[i].ID, a.Checks[j].CreatedAt, a.Checks[j].ID)
	})
	sort.SliceStable(a.AgentRuns, func(i, j int) bool {
		return earlierStr(a.AgentRuns[i].CompletedAt, a.AgentRuns[i].ID, a.AgentRuns[j].CompletedAt, a.AgentRuns[j].ID)
	})
	sort.SliceStable(a.Actors, func(i, j int) bool { return a.Actors[i].ID < a.Actors[j].ID })
	sort.Strings(a.Entity.Labels)
}

func earlierStr(ti, idi, tj, idj string) bool {
	a, _ := time.Parse(time.RFC3339Nano, ti)
	b, _ := time.Parse(time.RFC3339Nano, tj)
	x, _ := strconv.ParseInt(idi, 10, 64)
	y, _ := strconv.ParseInt(idj, 10, 64)
	return earlier(a, x, b, y)
}
