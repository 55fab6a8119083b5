package github

import (
	"context"
	"strings"

	gh "github.com/google/go-github/v66/github"

	"github.com/forgectx/forgectx/pkg/acquisition"
)

// commentList is one read of the issue/PR conversation comments (readConsistent's result),
// shared by the comments source and the comment receipt reader (receipts.go).
type commentList struct {
	items       []*gh.IssueComment
	dups, short int
	err         error
}

// listComments reads every issue/PR conversation comment (REST, oldest first), checked
// against the comment count GitHub reported with the entity.
func (r *run) listComments(ctx context.Context) commentList {
	read := func() ([]*gh.IssueComment, error) {
		return listREST(ctx, r, acquisition.SourceComments, "GET /repos/{owner}/{repo}/issues/{number}/comments",
			func(ctx context.Context, opt gh.ListOptions) ([]*gh.IssueComment, *gh.Response, error) {
				return r.c.rest.Issues.ListComments(ctx, r.owner, r.name, r.number, &gh.IssueListCommentsOptions{ListOptions: opt})
			})
	}
	items, dups, short, err := readConsistent(read, func(c *gh.IssueComment) string { return c.GetNodeID() }, r.totals.Comments)
	r.needPages("comments", max(len(items), r.totals.Comments))
	return commentList{items: items, dups: dups, short: short, err: err}
}

// readComments maps one comments listing to comment records.
func (r *run) readComments(l commentList) ([]acquisition.Comment, gapList) {
	var gaps gapList
	items, dups, short, err := l.items, l.dups, l.short, l.err
	if err != nil {
		gaps.add(acquisition.GapFetchFailed, max(1, r.totals.Comments-len(items)))
	}
	gaps.add(acquisition.GapFetchFailed, dups+short)
	out := make([]acquisition.Comment, 0, len(items))
	for _, c := range items {
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
	read := func() ([]*gh.PullRequestReview, error) {
		return listREST(ctx, r, acquisition.SourceReviews, "GET /repos/{owner}/{repo}/pulls/{number}/reviews",
			func(ctx context.Context, opt gh.ListOptions) ([]*gh.PullRequestReview, *gh.Response, error) {
				return r.c.rest.PullRequests.ListReviews(ctx, r.owner, r.name, r.number, &opt)
			})
	}
	items, dups, short, err := readConsistent(read, func(v *gh.PullRequestReview) string { return v.GetNodeID() }, r.totals.Reviews)
	r.needPages("reviews", max(len(items), r.totals.Reviews))
	if err != nil {
		gaps.add(acquisition.GapFetchFailed, max(1, r.totals.Reviews-len(items)))
	}
	gaps.add(acquisition.GapFetchFailed, dups+short)

	var dismissals map[string]dismissal
	for _, v := range items {
		if v.GetState() == "DISMISSED" {
			var ok bool
			dismissals, ok = r.readDismissals(ctx)
			if !ok {
				// The dispositions exist but their actors and times could not be read: that
				// is a failed fetch, not "the forge does not expose them".
				gaps.add(acquisition.GapFetchFailed, 1)
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

type dismissalsData struct {
	Repository *struct {
		PullRequest *struct {
			TimelineItems struct {
				PageInfo gqlPageInfo `json:"pageInfo"`
				Nodes    []struct {
					Typename  string    `json:"__typename"`
					ID        string    `json:"id"`
					CreatedAt string    `json:"createdAt"`
					Actor     *gqlActor `json:"actor"`
					Review    *struct {
						ID string `json:"id"`
					} `json:"review"`
				} `json:"nodes"`
			} `json:"timelineItems"`
		} `json:"pullRequest"`
	} `json:"repository"`
}

// readDismissals reads every REVIEW_DISMISSED_EVENT of the pull request, keyed by review ID
// (the latest event wins). ok is false when a page failed.
func (r *run) readDismissals(ctx context.Context) (map[string]dismissal, bool) {
	out := map[string]dismissal{}
	var after any
	events := 0
	for n := 0; n < maxPages; n++ {
		vars := map[string]any{"owner": r.owner, "name": r.name, "number": r.number, "after": after}
		var d dismissalsData
		if err := readPage(ctx, func() error { return r.c.graphql(ctx, "Dismissals", vars, &d) }); err != nil {
			return out, false
		}
		r.countPage("review_dismissals")
		if d.Repository == nil || d.Repository.PullRequest == nil {
			return out, false
		}
		ti := d.Repository.PullRequest.TimelineItems
		for _, ev := range ti.Nodes {
			events++
			if ev.Typename != "ReviewDismissedEvent" || ev.Review == nil {
				continue
			}
			actor, ok := r.refGQL(ev.Actor)
			if !ok {
				actor = acquisition.ActorRef{}
			}
			var at *string
			if ev.CreatedAt != "" {
				t := ev.CreatedAt
				at = &t
			}
			out[ev.Review.ID] = dismissal{at: at, actor: actor}
		}
		if !ti.PageInfo.HasNextPage || ti.PageInfo.EndCursor == nil {
			r.needPages("review_dismissals", events)
			return out, true
		}
		if after == *ti.PageInfo.EndCursor {
			return out, false // the cursor did not advance
		}
		after = *ti.PageInfo.EndCursor
	}
	return out, false
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
// become comment records; each thread lists them in forge order with reply edges.
func (r *run) readThreads(ctx context.Context) ([]acquisition.Thread, []acquisition.Comment, gapList) {
	var gaps gapList
	// Thread cursors are opaque and stable, so a page rarely shifts; a list with repeated or
	// missing threads is read once more from the start, like the REST lists.
	raw, total, failed := r.readThreadPages(ctx)
	if !failed && (len(raw) < total || hasDuplicateThreads(raw)) {
		raw, total, failed = r.readThreadPages(ctx)
	}
	r.needPages("review_threads", max(total, len(raw)))
	if failed {
		gaps.add(acquisition.GapFetchFailed, max(1, total-len(raw)))
	} else if len(raw) < total {
		gaps.add(acquisition.GapFetchFailed, total-len(raw))
	}
	seen := map[string]bool{}
	var threads []acquisition.Thread
	var comments []acquisition.Comment
	for _, t := range raw {
		if seen[t.ID] {
			// A page shifted between reads; the thread is already held.
			gaps.add(acquisition.GapFetchFailed, 1)
			continue
		}
		seen[t.ID] = true
		nodes := t.Comments.Nodes
		pi := t.Comments.PageInfo
		commentsFailed := false
		var prev string
		for n := 0; pi.HasNextPage && pi.EndCursor != nil; n++ {
			if *pi.EndCursor == prev || n >= maxPages {
				commentsFailed = true // the cursor did not advance, or never ends
				break
			}
			prev = *pi.EndCursor
			vars := map[string]any{"id": t.ID, "after": *pi.EndCursor}
			var d threadCommentsData
			if err := readPage(ctx, func() error { return r.c.graphql(ctx, "ThreadComments", vars, &d) }); err != nil || d.Node == nil || d.Node.Comments == nil {
				commentsFailed = true
				break
			}
			r.countPage("review_thread_comments")
			nodes = append(nodes, d.Node.Comments.Nodes...)
			pi = d.Node.Comments.PageInfo
		}
		// Pages beyond the first that this thread strictly needs.
		r.needRequests("review_thread_comments", max(0, (max(t.Comments.TotalCount, len(nodes))+PerPage-1)/PerPage-1))
		if commentsFailed || len(nodes) < t.Comments.TotalCount {
			gaps.add(acquisition.GapFetchFailed, max(1, t.Comments.TotalCount-len(nodes)))
		}
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

// readThreadPages reads every page of review threads once. failed reports a page that could
// not be read.
func (r *run) readThreadPages(ctx context.Context) (raw []gqlThread, total int, failed bool) {
	var after any
	total = r.totals.Threads
	for n := 0; ; n++ {
		if n >= maxPages {
			return raw, total, true
		}
		vars := map[string]any{"owner": r.owner, "name": r.name, "number": r.number, "after": after}
		var d threadsData
		if err := readPage(ctx, func() error { return r.c.graphql(ctx, "Threads", vars, &d) }); err != nil {
			return raw, total, true
		}
		r.countPage("review_threads")
		if d.Repository == nil || d.Repository.PullRequest == nil {
			return raw, total, true
		}
		rt := d.Repository.PullRequest.ReviewThreads
		total = rt.TotalCount
		raw = append(raw, rt.Nodes...)
		if !rt.PageInfo.HasNextPage || rt.PageInfo.EndCursor == nil {
			return raw, total, false
		}
		if after == *rt.PageInfo.EndCursor {
			return raw, total, true // the cursor did not advance
		}
		after = *rt.PageInfo.EndCursor
	}
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
