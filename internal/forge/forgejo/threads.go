package forgejo

import (
	"sort"
	"strconv"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

// Thread rule (docs/forgejo.md, "Review threads"). Forgejo exposes no thread object: its web
// UI shows a "conversation" as the code comments of a pull request bucketed by file path and
// signed line (negative for the old side), across all reviews, ordered by creation, and reads
// the conversation's resolution from its first comment. The adapter reconstructs exactly those
// conversations from the review comments of every submitted review:
//
//   - Identity: a thread is the set of review comments sharing path, diff side and line. The
//     side is right when `position` (the new-file line) is set and left when only
//     `original_position` (the old-file line) is set. commit_id is deliberately NOT part of
//     the identity: Forgejo stores the blamed commit of the line for a new-side comment and the
//     head at comment time for an old-side one, so a reply written after a push can carry
//     another commit while Forgejo still shows (and resolves) it as the same conversation.
//   - Thread ID: the numeric id of the thread's first comment (base 10).
//   - Order: comments by created_at, then by numeric id; threads by their first comment's
//     created_at, then by thread ID.
//   - Replies: Forgejo has no reply-to field; every later comment is a reply to the first one
//     (the thread root), like GitHub's in_reply_to_id.
//   - Resolution: Forgejo stores the resolver on the conversation's first comment (its UI reads
//     it there), so the thread is resolved iff the first comment has a `resolver`, and that
//     user is resolved_by. A resolver without an account id (a deleted user) still resolves
//     the thread, with a null resolved_by reference.
//   - review_id and reviewed_sha are those of the first comment; outdated is always false:
//     Forgejo's review-comment API exposes no outdated observation, and the spec forbids
//     inferring it from the diff.
type threadKey struct {
	path string
	side string
	line uint64
}

// threadComment is a review comment with its parsed creation time.
type threadComment struct {
	c       *gitea.PullReviewComment
	created time.Time
}

// buildThreads groups review comments into threads by the rule above. It returns the threads
// in canonical order, the comment records (one per valid review comment) and the number of
// review comments that were invalid_metadata (no positive id or no creation time).
func buildThreads(comments []*gitea.PullReviewComment) ([]acquisition.Thread, []acquisition.Comment, int) {
	groups := map[threadKey][]threadComment{}
	var keys []threadKey
	invalid := 0
	seen := map[int64]bool{}
	for _, c := range comments {
		if c == nil || c.ID <= 0 || c.Created.IsZero() {
			invalid++
			continue
		}
		if seen[c.ID] {
			continue // the same comment listed twice (a page boundary moved): one record
		}
		seen[c.ID] = true
		k := threadKey{path: c.Path}
		switch {
		case c.LineNum > 0:
			k.side, k.line = "right", c.LineNum
		case c.OldLineNum > 0:
			k.side, k.line = "left", c.OldLineNum
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], threadComment{c: c, created: c.Created})
	}
	type built struct {
		t       acquisition.Thread
		created time.Time
		id      int64
	}
	var bs []built
	var records []acquisition.Comment
	for _, k := range keys {
		g := groups[k]
		sort.Slice(g, func(i, j int) bool { return earlier(g[i].created, g[i].c.ID, g[j].created, g[j].c.ID) })
		first := g[0].c
		t := acquisition.Thread{
			ID:        strconv.FormatInt(first.ID, 10),
			CreatedAt: timeString(first.Created),
			Replies:   []acquisition.Reply{},
			Path:      k.path,
			Side:      k.side,
			Line:      int(k.line),
			Outdated:  false,
		}
		if first.ReviewID > 0 {
			t.ReviewID = strconv.FormatInt(first.ReviewID, 10)
		}
		if sha, ok := normOID(first.CommitID); ok {
			t.ReviewedSHA = sha
		}
		if first.Resolver != nil {
			t.Resolved = true
			r := actorRef(first.Resolver)
			t.ResolvedBy = &r
		}
		for i, tc := range g {
			id := strconv.FormatInt(tc.c.ID, 10)
			t.CommentIDs = append(t.CommentIDs, id)
			if i > 0 {
				t.Replies = append(t.Replies, acquisition.Reply{ID: id, ParentID: t.ID})
			}
			records = append(records, acquisition.Comment{
				ID:        id,
				Author:    actorRef(tc.c.Reviewer),
				CreatedAt: timeString(tc.c.Created),
				UpdatedAt: timeString(tc.c.Updated),
				Body:      tc.c.Body,
			})
		}
		bs = append(bs, built{t: t, created: first.Created, id: first.ID})
	}
	sort.Slice(bs, func(i, j int) bool { return earlier(bs[i].created, bs[i].id, bs[j].created, bs[j].id) })
	threads := make([]acquisition.Thread, len(bs))
	for i := range bs {
		threads[i] = bs[i].t
	}
	return threads, records, invalid
}

// earlier orders by time, then by numeric id: the tie-break every Forgejo list here uses.
func earlier(ti time.Time, idi int64, tj time.Time, idj int64) bool {
	if !ti.Equal(tj) {
		return ti.Before(tj)
	}
	return idi < idj
}
