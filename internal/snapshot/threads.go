package snapshot

import (
	"sort"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
)

func sideOK(s string) bool { return s == "" || s == "left" || s == "right" }

// lineOK: 0 means absent; present lines are positive and exactly representable in RFC 8785.
func lineOK(n int) bool { return n >= 0 && n <= maxSafeInteger }

// threads stages review-thread relationships and state. Threads belong to the reviews scope:
// they are emitted only when reviews are selected, and only with the retained comment records
// that have a content file (no dangling keys, edges or order lines).
func (a *asm) threads() error {
	if !a.prof.Includes(acquisition.SourceReviews) {
		return nil
	}
	const sc = acquisition.ScopeReviews
	list := a.acq.Threads
	dup := duplicateIDs(len(list), func(i int) string { return list[i].ID })
	for i := range list {
		th := &list[i]
		t, cts, ok := ts(th.CreatedAt)
		gap, err := a.threadGap(th, ok && !dup[th.ID])
		if err != nil {
			return err
		}
		if gap != "" {
			a.gap(sc, gap, 1)
			continue
		}
		a.stageThread(th, t, cts)
	}
	a.sortThreads()
	return nil
}

// threadGap is the gap that leaves one thread out ("" when it is valid): unsafe_content for a
// review path that does not pass the filter unchanged, invalid_metadata for any other broken
// rule (ok is false when its creation time or ID uniqueness already failed).
func (a *asm) threadGap(th *acquisition.Thread, ok bool) (string, error) {
	valid := ok && a.threadMetadataOK(th)
	if valid && th.Path != "" {
		unsafe, err := a.structural(th.Path)
		if err != nil {
			return "", err
		}
		if unsafe {
			return acquisition.GapUnsafeContent, nil
		}
		valid = repositoryPath(th.Path) && a.boundOK(th.Path)
	}
	if !valid {
		return acquisition.GapInvalidMetadata, nil
	}
	return "", nil
}

// threadMetadataOK: the thread's IDs, revision, lines and sides, resolver, comment IDs (each
// once) and reply edges (a forest) are valid; its path is threadGap's.
func (a *asm) threadMetadataOK(th *acquisition.Thread) bool {
	valid := forgeThreadID(a.forge, th.ID) && a.boundOK(th.ID) &&
		(th.ReviewID == "" || forgeRecordID(a.forge, th.ReviewID) && a.boundOK(th.ReviewID)) &&
		(th.ReviewedSHA == "" || a.oidOK(th.ReviewedSHA)) &&
		lineOK(th.Line) && lineOK(th.StartLine) && lineOK(th.OriginalLine) && lineOK(th.OriginalStartLine) &&
		sideOK(th.Side) && sideOK(th.OriginalSide)
	if valid && th.Resolved && th.ResolvedBy != nil && th.ResolvedBy.ID != nil {
		valid = forgeRecordID(a.forge, *th.ResolvedBy.ID) && a.boundOK(*th.ResolvedBy.ID)
	}
	if !valid {
		return false
	}
	inThread := map[string]bool{}
	for _, id := range th.CommentIDs {
		if inThread[id] {
			return false
		}
		inThread[id] = true
	}
	return replyForest(th.Replies)
}

// stageThread stages one valid thread created at t (canonical cts) with its retained comment
// records: its relationship row, state row, view entry and order file. A thread none of whose
// comments was retained is left out.
func (a *asm) stageThread(th *acquisition.Thread, t time.Time, cts string) {
	var keys, paths []string
	keyOf := map[string]string{}
	for _, id := range th.CommentIDs {
		if r, ok := a.commentContent[id]; ok {
			keys = append(keys, r.key)
			paths = append(paths, r.path)
			keyOf[id] = r.key
		}
	}
	if len(keys) == 0 {
		return
	}
	key := a.key(canon.KindThread, th.ID)
	rel := threadRelJSON{
		ID: th.ID, ThreadKey: key, CreatedAt: cts, OrderPath: "threads/" + key + ".order",
		RecordKeys: keys, Replies: []replyJSON{}, ReviewID: th.ReviewID, ReviewedSHA: th.ReviewedSHA,
		Path: th.Path, Line: th.Line, Side: th.Side, StartLine: th.StartLine, OriginalLine: th.OriginalLine,
		OriginalStartLine: th.OriginalStartLine, OriginalSide: th.OriginalSide,
	}
	if rk, ok := a.reviewKept[th.ReviewID]; ok && th.ReviewID != "" {
		rel.ReviewRecordKey = rk
	}
	seenEdge := map[replyJSON]bool{}
	for _, r := range th.Replies {
		child, ok1 := keyOf[r.ID]
		parent, ok2 := keyOf[r.ParentID]
		e := replyJSON{RecordKey: child, ParentRecordKey: parent}
		if ok1 && ok2 && child != parent && !seenEdge[e] {
			seenEdge[e] = true
			rel.Replies = append(rel.Replies, e)
		}
	}
	st := threadStateJSON{ID: th.ID, ThreadKey: key, Resolved: th.Resolved, Outdated: th.Outdated, Minimized: th.Minimized}
	if th.Resolved {
		var by *string
		if th.ResolvedBy != nil && th.ResolvedBy.ID != nil {
			by = th.ResolvedBy.ID
			a.referenced[*by] = true
		}
		st.ResolvedByActorID = nullable(by)
	}
	a.threadRels = append(a.threadRels, rel)
	a.threadStates = append(a.threadStates, st)
	a.threadMeta = append(a.threadMeta, threadView{created: t, key: key, reviewID: th.ReviewID, unresolved: !th.Resolved && !th.Outdated, paths: paths})
	a.addFile(rel.OrderPath, "thread_order", mediaText, orderBytes(paths), nil)
}

// sortThreads puts the staged threads in their canonical orders: relationship threads by
// created_at, then thread ID; state rows by thread key; views by creation time, then thread
// key.
func (a *asm) sortThreads() {
	idx := make([]int, len(a.threadRels))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool {
		ti, tj := a.threadMeta[idx[i]].created, a.threadMeta[idx[j]].created
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return a.threadRels[idx[i]].ID < a.threadRels[idx[j]].ID
	})
	rels := make([]threadRelJSON, len(idx))
	for i, k := range idx {
		rels[i] = a.threadRels[k]
	}
	a.threadRels = rels
	sort.Slice(a.threadStates, func(i, j int) bool { return a.threadStates[i].ThreadKey < a.threadStates[j].ThreadKey })
	sort.Slice(a.threadMeta, func(i, j int) bool {
		if !a.threadMeta[i].created.Equal(a.threadMeta[j].created) {
			return a.threadMeta[i].created.Before(a.threadMeta[j].created)
		}
		return a.threadMeta[i].key < a.threadMeta[j].key
	})
}

// orderBytes renders an order file: one LF-terminated path per line; empty is zero bytes.
func orderBytes(paths []string) []byte {
	n := 0
	for _, p := range paths {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for _, p := range paths {
		b = append(b, p...)
		b = append(b, '\n')
	}
	return b
}

// orderViews stages the timeline, unresolved-review and per-review views, relations, thread
// state and the agent-run history.
func (a *asm) orderViews() error {
	a.orderFiles()
	return a.relationDocs()
}

// orderFiles adds the timeline, unresolved-review and per-review order views.
func (a *asm) orderFiles() {
	// Timeline: the entity record first, then retained comment/review records in canonical
	// chronology — exactly filename order, since order keys encode created_at and the entity
	// key is reserved to sort first.
	var timeline []string
	timeline = append(timeline, a.entityPath)
	for _, r := range a.commentContent {
		timeline = append(timeline, r.path)
	}
	for _, r := range a.reviewContent {
		timeline = append(timeline, r.path)
	}
	sort.Strings(timeline)
	a.addFile("views/timeline.order", "timeline_view", mediaText, orderBytes(timeline), nil)

	var unresolved []string
	seen := map[string]bool{}
	for _, tv := range a.threadMeta {
		if !tv.unresolved {
			continue
		}
		for _, p := range tv.paths {
			if !seen[p] {
				seen[p] = true
				unresolved = append(unresolved, p)
			}
		}
	}
	a.addFile("views/unresolved-review.order", "unresolved_review_view", mediaText, orderBytes(unresolved), nil)

	byReview := map[string][]threadView{}
	for _, tv := range a.threadMeta {
		if tv.reviewID != "" {
			byReview[tv.reviewID] = append(byReview[tv.reviewID], tv)
		}
	}
	reviewIDs := make([]string, 0, len(a.reviewContent))
	for id := range a.reviewContent {
		reviewIDs = append(reviewIDs, id)
	}
	sort.Strings(reviewIDs)
	for _, id := range reviewIDs {
		rc := a.reviewContent[id]
		lines := []string{rc.path}
		seen := map[string]bool{rc.path: true}
		for _, tv := range byReview[id] {
			for _, p := range tv.paths {
				if !seen[p] {
					seen[p] = true
					lines = append(lines, p)
				}
			}
		}
		a.addFile("views/reviews/"+rc.key+".order", "review_view", mediaText, orderBytes(lines), nil)
	}
}

// relationDocs adds relations/reviews.json, state/threads.json and history/agent-runs.json.
func (a *asm) relationDocs() error {
	// relations/reviews.json and state/threads.json grow with the conversation (one row per
	// review and thread): they are serialised item by item and validated in chunks here, and
	// finish() does not validate them again.
	bundle, err := schema.Project()
	if err != nil {
		return &AbortError{Scope: "schema", Code: abortSchemaInvalid, Reason: "the v1 schema bundle did not load", Err: err}
	}
	revItems := encodeItems(a.reviewOrder, reviewRelJSON.appendCanonical)
	thrItems := encodeItems(a.threadRels, threadRelJSON.appendCanonical)
	doc, err := arrayDocument(bundle, schema.Reviews, []arrayMember{{"reviews", revItems}, {"threads", thrItems}})
	if err != nil {
		return &AbortError{Scope: "schema", Code: abortSchemaInvalid, Reason: "relations/reviews.json does not validate against " + schema.Reviews, Err: err}
	}
	// Review paths are structural (checked, never rewritten): the document has no display text.
	a.addFile("relations/reviews.json", "reviews", mediaJSON, doc, &filterJSON{Status: filter.StatusUnchanged, Findings: []filter.Finding{}})
	a.validated["relations/reviews.json"] = true

	stItems := encodeItems(a.threadStates, threadStateJSON.appendCanonical)
	if doc, err = arrayDocument(bundle, schema.Threads, []arrayMember{{"threads", stItems}}); err != nil {
		return &AbortError{Scope: "schema", Code: abortSchemaInvalid, Reason: "state/threads.json does not validate against " + schema.Threads, Err: err}
	}
	a.addFile("state/threads.json", "thread_state", mediaJSON, doc, nil)
	a.validated["state/threads.json"] = true

	runs := runsJSON{Runs: a.runs}
	if runs.Runs == nil {
		runs.Runs = []runJSON{}
	}
	if doc, err = canon.JSON(runs); err != nil {
		return err
	}
	a.addFile("history/agent-runs.json", "agent_runs", mediaJSON, doc, &filterJSON{Status: a.runsStatus.get(), Findings: a.runsFind.list()})
	return nil
}

// replyForest reports whether a thread's reply edges form a forest, as forge reply data
// always does: no self-reply, no record with two different parents, no cycle. Anything else
// is not forge data and makes the thread invalid_metadata rather than being repaired (an
// exact duplicate edge is the same edge and is emitted once). Linear in the number of edges.
func replyForest(replies []acquisition.Reply) bool {
	parent := make(map[string]string, len(replies))
	for _, r := range replies {
		if r.ID == r.ParentID {
			return false
		}
		if p, ok := parent[r.ID]; ok && p != r.ParentID {
			return false
		}
		parent[r.ID] = r.ParentID
	}
	const (
		walking = 1
		done    = 2
	)
	state := make(map[string]int, len(parent))
	var path []string
	for start := range parent {
		path = path[:0]
		n := start
		for {
			if st := state[n]; st == done {
				break
			} else if st == walking {
				return false // back on this walk's own path: a cycle
			}
			p, ok := parent[n]
			if !ok {
				break // a root
			}
			state[n] = walking
			path = append(path, n)
			n = p
		}
		for _, x := range path {
			state[x] = done
		}
	}
	return true
}
