package github

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v66/github"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// commentList is one read of the issue/PR conversation comments (readConsistent's result),
// shared by the comments source and the comment receipt reader (receipts.go).
type commentList = listRead[*gh.IssueComment]

// listComments reads every issue/PR conversation comment (REST, oldest first), checked
// against the comment count GitHub reported with the entity and for page drift
// (driftCheck). source names the --stats part (comments, or agent_runs when the listing
// serves receipts alone). An incomplete listing is recorded against the dependency map: it
// shortens the comments and the receipts read from them.
func (r *run) listComments(ctx context.Context, source string) commentList {
	read := func() ([]*gh.IssueComment, forge.Pagination, error) {
		items, pg, _, err := listREST(ctx, r, source, endpointComments, fixed(r.totals.Comments),
			restRows(func(ctx context.Context, opt gh.ListOptions) ([]*gh.IssueComment, *gh.Response, error) {
				return r.c.rest.Issues.ListComments(ctx, r.owner, r.name, r.number, &gh.IssueListCommentsOptions{ListOptions: opt})
			}))
		return items, pg, err
	}
	l := readConsistent(ctx, r, read, func(c *gh.IssueComment) string { return c.GetNodeID() }, fixed(r.totals.Comments))
	r.needListing(source, l.pg, r.totals.Comments)
	switch {
	case l.checkErr != nil:
		r.incomplete(listComments, loss{acquisition.ScopeComments: 1})
	case l.err != nil:
		r.incomplete(listComments, loss{acquisition.ScopeComments: max(1, r.totals.Comments-len(l.items))})
	case l.dups+l.short+l.shifted > 0:
		r.incomplete(listComments, loss{acquisition.ScopeComments: l.dups + l.short + l.shifted})
	}
	return l
}

// readComments maps one comments listing to comment records (its incompleteness was recorded
// by listComments).
func (r *run) readComments(l commentList) ([]acquisition.Comment, gapList) {
	var gaps gapList
	out := make([]acquisition.Comment, 0, len(l.items))
	for _, c := range l.items {
		author, ok := r.refREST(c.User)
		created := ts(c.GetCreatedAt().Time)
		if !ok || !validNodeID(c.GetNodeID()) || created == "" {
			gaps.add(acquisition.GapInvalidMetadata, 1)
			continue
		}
		out = append(out, acquisition.Comment{
			ID:        c.GetNodeID(),
			Author:    author,
			CreatedAt: created,
			UpdatedAt: ts(c.GetUpdatedAt().Time),
			Body:      c.GetBody(),
		})
	}
	return out, gaps
}

// dismissal is a review_dismissed timeline event.
type dismissal struct {
	at    *string
	actor acquisition.ActorRef
}

// readReviews reads every formal review (REST), maps its state (PENDING omitted, unknown
// states invalid_metadata), uses submitted_at as its time, and — only when some review is
// DISMISSED — reads the review-dismissed timeline events for the dismissal actor and time.
func (r *run) readReviews(ctx context.Context) ([]acquisition.Review, gapList) {
	var gaps gapList
	read := func() ([]*gh.PullRequestReview, forge.Pagination, error) {
		items, pg, _, err := listREST(ctx, r, acquisition.SourceReviews, endpointReviews, fixed(r.totals.Reviews),
			restRows(func(ctx context.Context, opt gh.ListOptions) ([]*gh.PullRequestReview, *gh.Response, error) {
				return r.c.rest.PullRequests.ListReviews(ctx, r.owner, r.name, r.number, &opt)
			}))
		return items, pg, err
	}
	l := readConsistent(ctx, r, read, func(v *gh.PullRequestReview) string { return v.GetNodeID() }, fixed(r.totals.Reviews))
	items := l.items
	r.needListing("reviews", l.pg, r.totals.Reviews)
	switch {
	case l.checkErr != nil:
		r.incomplete(listReviews, loss{acquisition.ScopeReviews: 1})
	case l.err != nil:
		r.incomplete(listReviews, loss{acquisition.ScopeReviews: max(1, r.totals.Reviews-len(items))})
	case l.dups+l.short+l.shifted > 0:
		r.incomplete(listReviews, loss{acquisition.ScopeReviews: l.dups + l.short + l.shifted})
	}

	var dismissals map[string]dismissal
	for _, v := range items {
		if v.GetState() == "DISMISSED" {
			var ok bool
			dismissals, ok = r.readDismissals(ctx)
			if !ok {
				// The dispositions exist but their actors and times could not be read: that
				// is a failed fetch, not "the forge does not expose them".
				r.incomplete(listDismissals, loss{acquisition.ScopeReviews: 1})
			}
			break
		}
	}
	out := make([]acquisition.Review, 0, len(items))
	for _, v := range items {
		state, disp := mapReviewState(v.GetState())
		switch disp {
		case reviewOmit:
			continue
		case reviewInvalid:
			gaps.add(acquisition.GapInvalidMetadata, 1)
			continue
		}
		author, ok := r.refREST(v.User)
		submitted := ts(v.GetSubmittedAt().Time)
		if !ok || !validNodeID(v.GetNodeID()) || submitted == "" {
			gaps.add(acquisition.GapInvalidMetadata, 1)
			continue
		}
		rv := acquisition.Review{
			ID:          v.GetNodeID(),
			Author:      author,
			State:       state,
			SubmittedAt: submitted,
			Body:        v.GetBody(),
		}
		if sha := strings.ToLower(v.GetCommitID()); gitOID.MatchString(sha) {
			rv.ReviewedSHA = sha
		}
		if state == "dismissed" {
			// Exposed disposition: the actor and time are null unless the timeline says.
			rv.DismissedBy = &acquisition.ActorRef{}
			if d, ok := dismissals[rv.ID]; ok {
				by := d.actor
				rv.DismissedBy, rv.DismissedAt = &by, d.at
			}
		}
		out = append(out, rv)
	}
	return out, gaps
}

// gqlDismissalEvent is one review-dismissed timeline item.
type gqlDismissalEvent struct {
	Typename  string    `json:"__typename"`
	ID        string    `json:"id"`
	CreatedAt string    `json:"createdAt"`
	Actor     *gqlActor `json:"actor"`
	Review    *struct {
		ID string `json:"id"`
	} `json:"review"`
}

type dismissalsData struct {
	Repository *struct {
		PullRequest *struct {
			TimelineItems struct {
				PageInfo gqlPageInfo         `json:"pageInfo"`
				Nodes    []gqlDismissalEvent `json:"nodes"`
			} `json:"timelineItems"`
		} `json:"pullRequest"`
	} `json:"repository"`
}

// errVanished is a GraphQL answer without the object a listing belongs to.
var errVanished = errors.New("github: the listed object vanished")

// cursorPage is a GraphQL connection page for forge.Paginate: hasNextPage false is the end;
// a declared next page is followed from its endCursor (a repeated cursor ends the listing in
// an error).
func cursorPage(rows int, pi gqlPageInfo, total int) (forge.Page[any], error) {
	p := forge.Page[any]{Rows: rows, Total: total}
	if pi.HasNextPage {
		if pi.EndCursor == nil {
			return p, errNoCursor
		}
		p.HasNext, p.Next, p.NextKey = true, *pi.EndCursor, *pi.EndCursor
	}
	return p, nil
}

// cursorWalk bounds one forward GraphQL walk of a listing with a declared total: an empty page
// that still announces another once the pages read (asked 100 a page) cover the total and the
// rows read with a page to spare is a server that loops: the listing ends incomplete
// (errBeyondDeclared), never in an endless walk. An empty page before that is followed.
type cursorWalk struct{ pages, rows int }

func (w *cursorWalk) page(rows int, pi gqlPageInfo, total int) (forge.Page[any], error) {
	w.pages, w.rows = w.pages+1, w.rows+rows
	if rows == 0 && pi.HasNextPage && total >= 0 && w.pages*PerPage >= max(total, w.rows)+PerPage {
		return forge.Page[any]{}, fmt.Errorf("%w (%d pages for %d declared rows)", errBeyondDeclared, w.pages, total)
	}
	return cursorPage(rows, pi, total)
}

// errNoCursor is a GraphQL page that declares a next page but names no cursor to it.
var errNoCursor = errors.New("github: a next page is declared without a cursor")

// readDismissals reads every REVIEW_DISMISSED_EVENT of the pull request, keyed by review ID
// (the latest event wins). After a forward page failed for good the rest is read from the
// other end (fromEnd). ok is false when the listing ended incomplete.
func (r *run) readDismissals(ctx context.Context) (map[string]dismissal, bool) {
	var events []gqlDismissalEvent
	page := func(op string, cursorVar string, cursor any) ([]gqlDismissalEvent, gqlPageInfo, error) {
		vars := map[string]any{"owner": r.owner, "name": r.name, "number": r.number, cursorVar: cursor}
		var d dismissalsData
		if err := readPage(ctx, func() error { return r.c.graphql(ctx, op, vars, &d) }); err != nil {
			return nil, gqlPageInfo{}, err
		}
		r.countPage(listDismissals)
		if d.Repository == nil || d.Repository.PullRequest == nil {
			return nil, gqlPageInfo{}, errVanished
		}
		ti := d.Repository.PullRequest.TimelineItems
		return ti.Nodes, ti.PageInfo, nil
	}
	pg, err := forge.Paginate[any](nil, forge.PageRules{}, func(after any) (forge.Page[any], error) {
		nodes, pi, err := page("Dismissals", "after", after)
		if err != nil {
			return forge.Page[any]{}, err
		}
		events = append(events, nodes...)
		return cursorPage(len(nodes), pi, -1)
	})
	ok := err == nil
	if !ok && ctx.Err() == nil {
		held := map[string]bool{}
		for _, ev := range events {
			held[ev.ID] = true
		}
		tail, met := fromEnd(held, func(ev gqlDismissalEvent) string { return ev.ID }, func(before any) ([]gqlDismissalEvent, gqlPageInfo, error) {
			return page("DismissalsFromEnd", "before", before)
		})
		events, ok = append(events, tail...), met
	}
	out := map[string]dismissal{}
	for _, ev := range events {
		if ev.Typename != "ReviewDismissedEvent" || ev.Review == nil {
			continue
		}
		actor, known := r.refGQL(ev.Actor)
		if !known {
			actor = acquisition.ActorRef{}
		}
		var at *string
		if ev.CreatedAt != "" {
			t := ev.CreatedAt
			at = &t
		}
		out[ev.Review.ID] = dismissal{at: at, actor: actor}
	}
	if ok && err == nil {
		r.needListing(listDismissals, pg, -1)
	}
	return out, ok
}

// fromEnd reads a GraphQL connection backwards from its last row (last: 100, before: the
// previous answer's startCursor; fetch reads one such page) until a page holds a row of held
// or the list's first row. It returns the rows not in held, in forge order, and whether the
// read met held (or the start): only then is everything between the two reads held. A page
// that fails ends the read from the end too.
func fromEnd[T any](held map[string]bool, id func(T) string, fetch func(before any) ([]T, gqlPageInfo, error)) ([]T, bool) {
	var pages [][]T
	met := false
	_, err := forge.Paginate[any](nil, forge.PageRules{}, func(before any) (forge.Page[any], error) {
		rows, pi, err := fetch(before)
		if err != nil {
			return forge.Page[any]{}, err
		}
		pages = append(pages, rows)
		for _, row := range rows {
			if held[id(row)] {
				met = true
				return forge.Page[any]{Rows: len(rows), Total: -1}, nil
			}
		}
		if !pi.HasPreviousPage {
			met = true // the start of the list
		}
		// Backwards, the previous page is the "next" one to read.
		return cursorPage(len(rows), gqlPageInfo{HasNextPage: pi.HasPreviousPage, EndCursor: pi.StartCursor}, -1)
	})
	seen := make(map[string]bool, len(held))
	for k := range held {
		seen[k] = true
	}
	var out []T
	for i := len(pages) - 1; i >= 0; i-- {
		for _, row := range pages[i] {
			if !seen[id(row)] {
				seen[id(row)] = true
				out = append(out, row)
			}
		}
	}
	return out, met && err == nil
}

type gqlReviewComment struct {
	ID          string    `json:"id"`
	Body        string    `json:"body"`
	CreatedAt   string    `json:"createdAt"`
	UpdatedAt   string    `json:"updatedAt"`
	IsMinimized bool      `json:"isMinimized"`
	Author      *gqlActor `json:"author"`
	ReplyTo     *struct {
		ID string `json:"id"`
	} `json:"replyTo"`
	PullRequestReview *struct {
		ID string `json:"id"`
	} `json:"pullRequestReview"`
	Commit *struct {
		Oid string `json:"oid"`
	} `json:"commit"`
	OriginalCommit *struct {
		Oid string `json:"oid"`
	} `json:"originalCommit"`
}

type gqlCommentConn struct {
	TotalCount int                `json:"totalCount"`
	PageInfo   gqlPageInfo        `json:"pageInfo"`
	Nodes      []gqlReviewComment `json:"nodes"`
}

type gqlThread struct {
	ID                string    `json:"id"`
	IsResolved        bool      `json:"isResolved"`
	IsOutdated        bool      `json:"isOutdated"`
	Path              string    `json:"path"`
	Line              *int      `json:"line"`
	StartLine         *int      `json:"startLine"`
	OriginalLine      *int      `json:"originalLine"`
	OriginalStartLine *int      `json:"originalStartLine"`
	DiffSide          string    `json:"diffSide"`
	StartDiffSide     *string   `json:"startDiffSide"`
	ResolvedBy        *gqlActor `json:"resolvedBy"`
	Comments          gqlCommentConn
}

type threadsData struct {
	Repository *struct {
		PullRequest *struct {
			ReviewThreads struct {
				TotalCount int         `json:"totalCount"`
				PageInfo   gqlPageInfo `json:"pageInfo"`
				Nodes      []gqlThread `json:"nodes"`
			} `json:"reviewThreads"`
		} `json:"pullRequest"`
	} `json:"repository"`
}

type threadCommentsData struct {
	Node *struct {
		Comments *gqlCommentConn `json:"comments"`
	} `json:"node"`
}

// readThreads reads every review thread in forge order with all its comments (GraphQL: the
// only API exposing thread IDs, resolution, resolver and outdated state). Thread comments
// become comment records; each thread lists them in forge order with reply edges. Threads the
// listing could not serve are recorded against the dependency map (review relationships and
// review-thread comments), counted as the threads actually lost.
func (r *run) readThreads(ctx context.Context) ([]acquisition.Thread, []acquisition.Comment, gapList) {
	var gaps gapList
	// Thread cursors are opaque and stable, so a page rarely shifts; a list with repeated or
	// missing threads is read once more from the start, like the REST lists.
	raw, total, failed := r.readThreadPages(ctx)
	if !failed && (len(raw) < total || hasDuplicateThreads(raw)) {
		raw, total, failed = r.readThreadPages(ctx)
	}
	r.needPages("review_threads", max(total, len(raw)))
	held := map[string]bool{}
	for _, t := range raw {
		held[t.ID] = true
	}
	lost := max(0, total-len(held))
	if failed {
		lost = max(1, lost)
	}
	if lost > 0 {
		r.incomplete(listThreads, loss{acquisition.ScopeReviews: lost, acquisition.ScopeComments: lost})
	}
	seen := map[string]bool{}
	var threads []acquisition.Thread
	var comments []acquisition.Comment
	for _, t := range raw {
		if seen[t.ID] {
			// A page shifted between reads; the thread is already held.
			r.incomplete(listThreads, loss{acquisition.ScopeReviews: 1, acquisition.ScopeComments: 1})
			continue
		}
		seen[t.ID] = true
		nodes := r.readThreadComments(ctx, t)
		th, cs, ok := r.mapThread(t, nodes)
		if !ok {
			gaps.add(acquisition.GapInvalidMetadata, 1)
			continue
		}
		if th.ID == "" {
			continue // a thread whose comments were all deleted: nothing to relate
		}
		threads = append(threads, th)
		comments = append(comments, cs...)
	}
	return threads, comments, gaps
}

// readThreadComments returns one thread's comments: the first page came with the thread, the
// rest follow its comments cursor; after a page failed for good the rest is read from the
// other end (fromEnd). Comments the listing could not serve are recorded against the
// dependency map.
func (r *run) readThreadComments(ctx context.Context, t gqlThread) []gqlReviewComment {
	nodes := t.Comments.Nodes
	var err error
	if pi := t.Comments.PageInfo; pi.HasNextPage {
		var first forge.Page[any]
		walk := cursorWalk{pages: 1, rows: len(nodes)}
		if first, err = cursorPage(len(nodes), pi, t.Comments.TotalCount); err == nil {
			_, err = forge.Paginate[any](first.Next, forge.PageRules{}, func(after any) (forge.Page[any], error) {
				more, pi, err := r.threadCommentsPage(ctx, "ThreadComments", t.ID, "after", after)
				if err != nil {
					return forge.Page[any]{}, err
				}
				nodes = append(nodes, more...)
				return walk.page(len(more), pi, t.Comments.TotalCount)
			})
		}
		if err != nil && ctx.Err() == nil {
			held := map[string]bool{}
			for _, c := range nodes {
				held[c.ID] = true
			}
			tail, met := fromEnd(held, func(c gqlReviewComment) string { return c.ID }, func(before any) ([]gqlReviewComment, gqlPageInfo, error) {
				return r.threadCommentsPage(ctx, "ThreadCommentsFromEnd", t.ID, "before", before)
			})
			if nodes = append(nodes, tail...); met {
				err = nil
			}
		}
	}
	// Pages beyond the first that this thread strictly needs.
	r.needRequests("review_thread_comments", max(0, (max(t.Comments.TotalCount, len(nodes))+PerPage-1)/PerPage-1))
	if err != nil || len(nodes) < t.Comments.TotalCount {
		n := max(1, t.Comments.TotalCount-len(nodes))
		r.incomplete(listThreadComments, loss{acquisition.ScopeReviews: n, acquisition.ScopeComments: n})
	}
	return nodes
}

// threadCommentsPage reads one page of a thread's comments (op ThreadComments with after,
// ThreadCommentsFromEnd with before).
func (r *run) threadCommentsPage(ctx context.Context, op, id, cursorVar string, cursor any) ([]gqlReviewComment, gqlPageInfo, error) {
	vars := map[string]any{"id": id, cursorVar: cursor}
	var d threadCommentsData
	if err := readPage(ctx, func() error { return r.c.graphql(ctx, op, vars, &d) }); err != nil {
		return nil, gqlPageInfo{}, err
	}
	if d.Node == nil || d.Node.Comments == nil {
		return nil, gqlPageInfo{}, errVanished
	}
	r.countPage(listThreadComments)
	return d.Node.Comments.Nodes, d.Node.Comments.PageInfo, nil
}

// readThreadPages reads every page of review threads once. When a page fails for good, the
// threads after it are read from the other end (readThreadsFromEnd) until the two reads meet,
// so the failure loses only what neither direction could serve. failed reports that the
// threads are not proven complete (a page failed and the read from the end did not meet the
// forward read).
func (r *run) readThreadPages(ctx context.Context) (raw []gqlThread, total int, failed bool) {
	total = r.totals.Threads
	var walk cursorWalk
	_, err := forge.Paginate[any](nil, forge.PageRules{}, func(after any) (forge.Page[any], error) {
		vars := map[string]any{"owner": r.owner, "name": r.name, "number": r.number, "after": after}
		var d threadsData
		if err := readPage(ctx, func() error { return r.c.graphql(ctx, "Threads", vars, &d) }); err != nil {
			return forge.Page[any]{}, err
		}
		r.countPage(listThreads)
		if d.Repository == nil || d.Repository.PullRequest == nil {
			return forge.Page[any]{}, errVanished
		}
		rt := d.Repository.PullRequest.ReviewThreads
		total = rt.TotalCount
		raw = append(raw, rt.Nodes...)
		return walk.page(len(rt.Nodes), rt.PageInfo, rt.TotalCount)
	})
	if err == nil {
		return raw, total, false
	}
	if ctx.Err() != nil {
		return raw, total, true
	}
	tail, endTotal, met := r.readThreadsFromEnd(ctx, raw)
	if endTotal >= 0 {
		total = endTotal
	}
	return append(raw, tail...), total, !met
}

// readThreadsFromEnd reads review threads backwards from the last one (fromEnd). It returns
// the threads not in have, in forge order, the total the answers declared (-1 if none
// answered) and whether the read met have (or the start of the list).
func (r *run) readThreadsFromEnd(ctx context.Context, have []gqlThread) ([]gqlThread, int, bool) {
	held := make(map[string]bool, len(have))
	for _, t := range have {
		held[t.ID] = true
	}
	total := -1
	tail, met := fromEnd(held, func(t gqlThread) string { return t.ID }, func(before any) ([]gqlThread, gqlPageInfo, error) {
		vars := map[string]any{"owner": r.owner, "name": r.name, "number": r.number, "before": before}
		var d threadsData // the same shape, its pageInfo read backwards
		if err := readPage(ctx, func() error { return r.c.graphql(ctx, "ThreadsFromEnd", vars, &d) }); err != nil {
			return nil, gqlPageInfo{}, err
		}
		r.countPage(listThreads)
		if d.Repository == nil || d.Repository.PullRequest == nil {
			return nil, gqlPageInfo{}, errVanished
		}
		rt := d.Repository.PullRequest.ReviewThreads
		total = rt.TotalCount
		return rt.Nodes, rt.PageInfo, nil
	})
	return tail, total, met
}

// mapThread maps one thread and its comments. ok is false when a structural value is
// outside its mapping (the thread and its comments are omitted as invalid_metadata).
func (r *run) mapThread(t gqlThread, nodes []gqlReviewComment) (acquisition.Thread, []acquisition.Comment, bool) {
	if !validNodeID(t.ID) {
		return acquisition.Thread{}, nil, false
	}
	if len(nodes) == 0 {
		return acquisition.Thread{}, nil, true
	}
	th := acquisition.Thread{
		ID:         t.ID,
		CreatedAt:  nodes[0].CreatedAt, // GitHub threads have no creation time: their first comment's
		CommentIDs: []string{},
		Replies:    []acquisition.Reply{},
		Path:       t.Path,
		Side:       strings.ToLower(t.DiffSide),
		Resolved:   t.IsResolved,
		Outdated:   t.IsOutdated,
	}
	// Location fields are optional: null (a file-level comment, an outdated line) is absent.
	// Any value GitHub sends is passed on unchanged: a line below 1 is not rewritten to
	// "absent" here, the assembler rejects it as invalid_metadata.
	line := func(p *int) int {
		if p != nil {
			if *p == 0 {
				return -1 // 0 would read as "absent" in the acquisition model
			}
			return *p
		}
		return 0
	}
	th.Line, th.StartLine = line(t.Line), line(t.StartLine)
	th.OriginalLine, th.OriginalStartLine = line(t.OriginalLine), line(t.OriginalStartLine)
	if th.Side != "" && th.Side != "left" && th.Side != "right" {
		return th, nil, false
	}
	first := nodes[0]
	if first.PullRequestReview != nil {
		if !validNodeID(first.PullRequestReview.ID) {
			return th, nil, false
		}
		th.ReviewID = first.PullRequestReview.ID
	}
	if first.OriginalCommit != nil {
		if sha := strings.ToLower(first.OriginalCommit.Oid); gitOID.MatchString(sha) {
			th.ReviewedSHA = sha
		}
	}
	if t.IsResolved {
		by, ok := r.refGQL(t.ResolvedBy)
		if !ok {
			return th, nil, false
		}
		th.ResolvedBy = &by
	}
	var comments []acquisition.Comment
	for _, c := range nodes {
		author, ok := r.refGQL(c.Author)
		if !ok || !validNodeID(c.ID) || c.CreatedAt == "" {
			return th, nil, false
		}
		th.CommentIDs = append(th.CommentIDs, c.ID)
		if c.ReplyTo != nil && c.ReplyTo.ID != "" {
			if !validNodeID(c.ReplyTo.ID) {
				return th, nil, false
			}
			th.Replies = append(th.Replies, acquisition.Reply{ID: c.ID, ParentID: c.ReplyTo.ID})
		}
		comments = append(comments, acquisition.Comment{
			ID:        c.ID,
			Author:    author,
			CreatedAt: c.CreatedAt,
			UpdatedAt: c.UpdatedAt,
			Body:      c.Body,
		})
	}
	return th, comments, true
}

func hasDuplicateThreads(ts []gqlThread) bool {
	seen := make(map[string]bool, len(ts))
	for _, t := range ts {
		if seen[t.ID] {
			return true
		}
		seen[t.ID] = true
	}
	return false
}
