package snapshot

import (
	"sort"
	"strings"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/canon"
	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/pkg/snapshot/schema"
)

func sideOK(s string) bool { return s == "" || s == "left" || s == "right" }

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
		valid := ok && !dup[th.ID] && forgeThreadID(a.forge, th.ID) && a.boundOK(th.ID) &&
			(th.ReviewID == "" || forgeRecordID(a.forge, th.ReviewID) && a.boundOK(th.ReviewID)) &&
			(th.ReviewedSHA == "" || gitOID(th.ReviewedSHA)) &&
			th.Line >= 0 && th.StartLine >= 0 && th.OriginalLine >= 0 && th.OriginalStartLine >= 0 &&
			sideOK(th.Side) && sideOK(th.OriginalSide)
		if valid && th.Resolved && th.ResolvedBy != nil && th.ResolvedBy.ID != nil {
			valid = forgeRecordID(a.forge, *th.ResolvedBy.ID) && a.boundOK(*th.ResolvedBy.ID)
		}
		if valid {
			inThread := map[string]bool{}
			for _, id := range th.CommentIDs {
				if inThread[id] {
					valid = false
				}
				inThread[id] = true
			}
		}
		if valid && th.Path != "" {
			unsafe, err := a.structural(th.Path)
			if err != nil {
				return err
			}
			if unsafe {
				a.gap(sc, acquisition.GapUnsafeContent, 1)
				continue
			}
			valid = repositoryPath(th.Path) && a.boundOK(th.Path)
		}
		if !valid {
			a.gap(sc, acquisition.GapInvalidMetadata, 1)
			continue
		}
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
			continue
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
	// Relationship threads sort by created_at, then thread ID; state rows by thread key.
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
	// Views order threads by creation time, then thread key.
	sort.Slice(a.threadMeta, func(i, j int) bool {
		if !a.threadMeta[i].created.Equal(a.threadMeta[j].created) {
			return a.threadMeta[i].created.Before(a.threadMeta[j].created)
		}
		return a.threadMeta[i].key < a.threadMeta[j].key
	})
	return nil
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

var conclusions = map[string]bool{"success": true, "failure": true, "neutral": true, "cancelled": true, "skipped": true, "timed_out": true, "action_required": true, "stale": true}

// checkMeta maps an acquisition check to its metadata document, applying the status-specific
// timestamp rules; ok is false when the forge data cannot satisfy them (invalid_metadata).
func checkMeta(c *acquisition.Check, createdTS, head string) (checkJSON, bool) {
	m := checkJSON{ID: c.ID, Status: c.Status, CreatedAt: createdTS, HeadSHA: head}
	switch c.Status {
	case "queued":
		// Native fields forbidden for the mapped status are omitted, not copied.
		for _, s := range []string{c.StartedAt, c.CompletedAt} {
			if _, ok := optTS(s); !ok {
				return m, false
			}
		}
	case "in_progress":
		st, ok := optTS(c.StartedAt)
		if !ok || st == "" {
			return m, false
		}
		if _, ok := optTS(c.CompletedAt); !ok {
			return m, false
		}
		m.StartedAt = st
	case "completed":
		if !conclusions[c.Conclusion] || c.NeverStarted == nil {
			return m, false
		}
		st, ok1 := optTS(c.StartedAt)
		ct, ok2 := optTS(c.CompletedAt)
		if !ok1 || !ok2 {
			return m, false
		}
		m.Conclusion = c.Conclusion
		ns := *c.NeverStarted
		m.NeverStarted = &ns
		if ns {
			switch c.Conclusion {
			case "failure", "skipped", "cancelled":
			default:
				return m, false
			}
			if ct == "" {
				ct = createdTS // the canonical fallback: the immutable source created_at
			}
			m.CompletedAt = ct
		} else {
			if st == "" || ct == "" {
				return m, false
			}
			m.StartedAt, m.CompletedAt = st, ct
		}
	default:
		return m, false
	}
	return m, true
}

// checks stages check metadata and selected logs (change proposals only).
func (a *asm) checks() error {
	if !a.prof.Includes(acquisition.SourceChecks) {
		return nil
	}
	const sc = acquisition.ScopeChecks
	list := a.acq.Checks
	s := a.src(acquisition.SourceChecks)
	s.Acquired = len(list)
	head := a.acq.Entity.HeadSHA
	headOK := gitOID(head)
	dup := duplicateIDs(len(list), func(i int) string { return list[i].ID })
	var cands []candidate
	metas := map[int]checkJSON{}
	for i := range list {
		c := &list[i]
		t, cts, ok := ts(c.CreatedAt)
		if !ok || dup[c.ID] || !forgeRecordID(a.forge, c.ID) || !a.boundOK(c.ID) || !headOK || c.HeadSHA != head || c.Name == "" {
			a.gap(sc, acquisition.GapInvalidMetadata, 1)
			continue
		}
		m, ok := checkMeta(c, cts, head)
		if !ok {
			a.gap(sc, acquisition.GapInvalidMetadata, 1)
			continue
		}
		metas[i] = m
		cands = append(cands, candidate{idx: i, t: t, ts: cts, key: a.key(canon.KindCheck, c.ID)})
	}
	sortCandidates(cands)
	sel := a.selectBound(sc, cands)
	logs := a.src(acquisition.SourceCheckLogs)
	for _, cd := range sel {
		c := &list[cd.idx]
		m := metas[cd.idx]
		rec := checkRecordJSON{Kind: canon.KindCheck, ID: c.ID, RecordKey: cd.key, CreatedAt: cd.ts}
		name, r, ok, err := a.display(c.Name)
		if err != nil {
			return err
		}
		rec.Filter = filterOf(r)
		s.Records++
		if !ok {
			// An unsafe or empty check name rejects only this record.
			rec.Filter.Status = filter.StatusRejected
			code := acquisition.GapInvalidMetadata
			if r.Status == filter.StatusRejected {
				code = r.Gap
			}
			a.gap(sc, code, 1)
			s.Rejected++
			a.records = append(a.records, record{created: cd.t, key: cd.key, entry: rec})
			continue
		}
		m.Name = name
		doc, err := canon.JSON(m)
		if err != nil {
			return err
		}
		rec.MetadataPath = "checks/" + cd.key + "/metadata.json"
		mf := rec.Filter
		a.addFile(rec.MetadataPath, "check_metadata", mediaJSON, doc, &mf)
		s.WithContent++
		if a.prof.LogSelected(m.Conclusion) {
			logs.Acquired++
			p, err := a.checkLog(c, cd.key)
			if err != nil {
				return err
			}
			if p != "" {
				rec.LogPath = p
				logs.Records++
				logs.WithContent++
			} else {
				logs.Omitted++
			}
		}
		a.records = append(a.records, record{created: cd.t, key: cd.key, entry: rec})
	}
	s.Omitted = s.Acquired - s.Records
	return nil
}

// checkLog stages the log of a retained check whose log the profile selects; it returns the
// log path, or "" with a check_logs gap when no log file can be produced.
func (a *asm) checkLog(c *acquisition.Check, key string) (string, error) {
	const sc = acquisition.ScopeCheckLogs
	if c.Log == nil {
		// The adapter did not deliver a selected log: never an empty history.
		a.gap(sc, acquisition.GapFetchFailed, 1)
		return "", nil
	}
	switch c.Log.Outcome {
	case acquisition.LogFetched:
	case acquisition.LogSourceTooLarge:
		a.gap(sc, acquisition.GapSourceTooLarge, 1)
		return "", nil
	case acquisition.LogFetchFailed:
		a.gap(sc, acquisition.GapFetchFailed, 1)
		return "", nil
	case acquisition.LogUnsupported:
		a.gap(sc, acquisition.GapUnsupported, 1)
		return "", nil
	default:
		a.gap(sc, acquisition.GapInvalidMetadata, 1)
		return "", nil
	}
	r, err := a.apply(c.Log.Content, filter.RoleLog, a.prof.Bounds.MaxLogBytes)
	if err != nil {
		return "", err
	}
	if r.Status == filter.StatusRejected {
		a.gap(sc, r.Gap, 1)
		return "", nil
	}
	p := "checks/" + key + "/log.txt"
	f := filterOf(r)
	a.addFile(p, "check_log", mediaText, r.Output, &f)
	return p, nil
}

var runStatuses = map[string]bool{"success": true, "failure": true, "cancelled": true, "skipped": true, "timed_out": true}

// agentRuns stages forge-observable run receipts posted by registered bots.
func (a *asm) agentRuns() error {
	if !a.prof.Includes(acquisition.SourceAgentRuns) {
		return nil
	}
	const sc = acquisition.ScopeAgentRuns
	list := a.acq.AgentRuns
	s := a.src(acquisition.SourceAgentRuns)
	s.Acquired = len(list)
	dup := duplicateIDs(len(list), func(i int) string { return list[i].ID })
	var cands []candidate
	runs := map[int]runJSON{}
	for i := range list {
		r := &list[i]
		t, cts, ok := ts(r.CompletedAt)
		st, sok := optTS(r.StartedAt)
		valid := ok && sok && !dup[r.ID] && forgeRecordID(a.forge, r.ID) && a.boundOK(r.ID) && runStatuses[r.Status] &&
			recordKeyOK(r.InputRevision) && (r.InputHeadSHA == "" || gitOID(r.InputHeadSHA)) &&
			(r.ResultingCommitSHA == "" || gitOID(r.ResultingCommitSHA)) && r.Agent != ""
		keys := append([]string{}, r.ResultRecordKeys...)
		for _, k := range keys {
			if !recordKeyOK(k) {
				valid = false
			}
		}
		if !valid {
			a.gap(sc, acquisition.GapInvalidMetadata, 1)
			continue
		}
		// Receipts are admitted only when posted by a registered bot identity.
		if r.Author.ID == nil {
			a.gap(sc, acquisition.GapAuthorizationFailed, 1)
			continue
		}
		info, ok := a.actors[*r.Author.ID]
		if !ok || !a.botRegistered(*r.Author.ID, info) {
			a.gap(sc, acquisition.GapAuthorizationFailed, 1)
			continue
		}
		sort.Strings(keys)
		keys = uniqSorted(keys)
		runs[i] = runJSON{ID: r.ID, Status: r.Status, InputRevision: r.InputRevision, InputHeadSHA: r.InputHeadSHA,
			ResultRecordKeys: keys, ResultingCommitSHA: r.ResultingCommitSHA, StartedAt: st, CompletedAt: cts}
		cands = append(cands, candidate{idx: i, t: t, ts: cts, key: r.ID})
	}
	// Receipts sort by completion time, then ID.
	sortCandidates(cands)
	sel := a.selectBound(sc, cands)
	for _, cd := range sel {
		run := runs[cd.idx]
		name, r, ok, err := a.display(list[cd.idx].Agent)
		if err != nil {
			return err
		}
		a.runsFind.add(r.Findings)
		if !ok {
			code := acquisition.GapInvalidMetadata
			if r.Status == filter.StatusRejected {
				code = r.Gap
			}
			a.gap(sc, code, 1)
			a.runsStatus.add(filter.StatusRejected)
			continue
		}
		a.runsStatus.add(r.Status)
		run.Agent = name
		a.runs = append(a.runs, run)
		s.Records++
		s.WithContent++
	}
	s.Omitted = s.Acquired - s.Records
	return nil
}

func uniqSorted(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// actorState stages state/actors.json: every referenced actor exactly once, sorted by ID.
// A referenced actor the acquisition has no valid observation for is emitted fail-closed
// (human, role null, role_verified false) and counted as an actors invalid_metadata gap.
func (a *asm) actorState() error {
	ids := make([]string, 0, len(a.referenced))
	for id := range a.referenced {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	find := findings{}
	var status docStatus
	rows := make([]actorJSON, 0, len(ids))
	for _, id := range ids {
		info, ok := a.actors[id]
		if !ok {
			a.gap(acquisition.ScopeActors, acquisition.GapInvalidMetadata, 1)
			rows = append(rows, actorJSON{ID: id, Kind: acquisition.ActorHuman})
			continue
		}
		login, r, err := a.login(id)
		if err != nil {
			return err
		}
		find.add(r.Findings)
		if login == nil && r.Status != filter.StatusUnchanged {
			status.add(filter.StatusRejected)
		} else {
			status.add(r.Status)
		}
		row := actorJSON{ID: id, Kind: info.kind, Login: login}
		if info.kind == acquisition.ActorBot {
			bot := "bot"
			row.Role = &bot
		} else if info.verified {
			row.Role, row.RoleVerified = info.role, true
		}
		rows = append(rows, row)
	}
	doc, err := canon.JSON(actorsJSON{Actors: rows})
	if err != nil {
		return err
	}
	f := filterJSON{Status: status.get(), Findings: find.list()}
	a.addFile("state/actors.json", "actor_state", mediaJSON, doc, &f)
	return nil
}

// orderViews stages the timeline, unresolved-review and per-review views, relations, thread
// state and the agent-run history.
func (a *asm) orderViews() error {
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

	reviews := reviewsJSON{Reviews: a.reviewOrder, Threads: a.threadRels}
	if reviews.Reviews == nil {
		reviews.Reviews = []reviewRelJSON{}
	}
	if reviews.Threads == nil {
		reviews.Threads = []threadRelJSON{}
	}
	doc, err := canon.JSON(reviews)
	if err != nil {
		return err
	}
	// Review paths are structural (checked, never rewritten): the document has no display text.
	a.addFile("relations/reviews.json", "reviews", mediaJSON, doc, &filterJSON{Status: filter.StatusUnchanged, Findings: []filter.Finding{}})

	states := threadsJSON{Threads: a.threadStates}
	if states.Threads == nil {
		states.Threads = []threadStateJSON{}
	}
	if doc, err = canon.JSON(states); err != nil {
		return err
	}
	a.addFile("state/threads.json", "thread_state", mediaJSON, doc, nil)

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

// schemaFor maps a JSON file path to its schema.
func schemaFor(path string) string {
	switch {
	case path == "collection.json":
		return schema.Collection
	case path == "entity/metadata.json":
		return schema.Entity
	case path == "relations/reviews.json":
		return schema.Reviews
	case path == "history/agent-runs.json":
		return schema.AgentRuns
	case path == "state/actors.json":
		return schema.Actors
	case path == "state/threads.json":
		return schema.Threads
	case strings.HasPrefix(path, "checks/") && strings.HasSuffix(path, "/metadata.json"):
		return schema.Check
	}
	return ""
}

// finish adds collection.json, builds index.json, validates every JSON document against the
// project bundle and returns the tree.
func (a *asm) finish() (*Tree, error) {
	a.addFile("collection.json", "collection", mediaJSON, a.collection, nil)

	// Gaps: one row per (scope, code), sorted by scope then code. Any unusable entity-scope gap
	// aborts (entity failures abort directly; this guards the rule itself).
	gaps := make([]Gap, 0, len(a.gaps))
	for k, n := range a.gaps {
		gaps = append(gaps, Gap{Scope: k.scope, Code: k.code, Usability: Usability(k.code), Count: n})
	}
	sort.Slice(gaps, func(i, j int) bool {
		if gaps[i].Scope != gaps[j].Scope {
			return gaps[i].Scope < gaps[j].Scope
		}
		return gaps[i].Code < gaps[j].Code
	})
	for _, g := range gaps {
		if g.Scope == acquisition.ScopeEntity && g.Usability == "unusable" {
			return nil, abortf(acquisition.ScopeEntity, g.Code, "an unusable entity-scope gap aborts assembly")
		}
	}

	// Files sort by path; records by real created_at, then record key.
	order := make([]int, len(a.files))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return a.files[order[i]].Path < a.files[order[j]].Path })
	files := make([]File, len(order))
	entries := make([]fileJSON, len(order))
	for i, k := range order {
		files[i], entries[i] = a.files[k], a.entries[k]
		if i > 0 && files[i].Path == files[i-1].Path {
			return nil, abortf("schema", AbortSchemaInvalid, "two files share one path")
		}
	}
	sort.Slice(a.records, func(i, j int) bool {
		if !a.records[i].created.Equal(a.records[j].created) {
			return a.records[i].created.Before(a.records[j].created)
		}
		return a.records[i].key < a.records[j].key
	})
	recs := make([]any, len(a.records))
	for i, r := range a.records {
		recs[i] = r.entry
	}
	e := a.acq.Entity
	_, upd, _ := ts(e.UpdatedAt)
	idx := indexJSON{
		SchemaVersion: SchemaVersion, FilterVersion: filter.Version, CollectionProfile: a.profileSum,
		Filter: filterJSON{Status: a.idxStatus.get(), Findings: a.idxFind.list()},
		Source: sourceJSON{Forge: a.forge, Host: a.host, RepositoryID: a.repoID, Repository: a.acq.Source.Repository},
		Entity: indexEntityJSON{Kind: e.Kind, ID: e.ID, UpdatedAt: upd},
		Files:  entries, Records: recs, Gaps: gaps,
	}
	b, err := schema.Project()
	if err != nil {
		return nil, &AbortError{Scope: "schema", Code: AbortSchemaInvalid, Reason: "the v1 schema bundle did not load", Err: err}
	}
	for _, f := range files {
		if name := schemaFor(f.Path); name != "" {
			if err := b.Validate(name, f.Data); err != nil {
				return nil, &AbortError{Scope: "schema", Code: AbortSchemaInvalid, Reason: f.Path + " does not validate against " + name, Err: err}
			}
		}
	}
	index, err := buildIndex(idx, b)
	if err != nil {
		return nil, err
	}

	t := &Tree{Files: files, Index: index, IndexSHA256: canon.SHA256Hex(index)}
	sum := Summary{EntityKind: e.Kind, EntityID: e.ID, EntityNumber: e.Number, Gaps: gaps, Findings: a.all.list(),
		Files: len(files) + 1, Bytes: int64(len(index)), IndexSHA256: t.IndexSHA256}
	for _, f := range files {
		sum.Bytes += int64(len(f.Data))
	}
	// Sources in reading order (entity first), not byte order: the summary is for people.
	for _, name := range []string{acquisition.SourceEntity, acquisition.SourceComments, acquisition.SourceReviews,
		acquisition.SourceChecks, acquisition.SourceCheckLogs, acquisition.SourceAgentRuns} {
		if a.prof.Includes(name) {
			sum.Sources = append(sum.Sources, *a.src(name))
		}
	}
	t.Summary = sum
	return t, nil
}

// indexChunk is how many files[] and records[] items one validation document carries.
const indexChunk = 1000

// buildIndex serialises index.json as RFC 8785 bytes and validates it against the index schema.
//
// A 100k-record index would be one huge JCS parse tree and one huge validator instance tree at
// the same time, so both are done in pieces with identical results. Bytes: each array element
// and each top-level member value is canonicalised by JCS on its own, and the members are
// joined in RFC 8785 order (the top-level keys are ASCII, so byte order is UTF-16 order) — the
// concatenation is exactly the canonical form of the whole object (a test re-canonicalises
// every emitted index and compares). Validation: every constraint of index.schema.json on
// files[], records[] and gaps[] applies to each item on its own (no uniqueItems, contains or
// size keywords), so validating the document with the arrays cut into chunks — every chunk
// carrying all other members unchanged — accepts exactly what validating the whole accepts.
func buildIndex(idx indexJSON, b *schema.Bundle) ([]byte, error) {
	enc := func(v any) ([]byte, error) { return canon.JSON(v) }
	files := make([][]byte, len(idx.Files))
	records := make([][]byte, len(idx.Records))
	var err error
	for i := range idx.Files {
		if files[i], err = enc(idx.Files[i]); err != nil {
			return nil, err
		}
	}
	for i := range idx.Records {
		if records[i], err = enc(idx.Records[i]); err != nil {
			return nil, err
		}
	}
	scalars := map[string][]byte{}
	for k, v := range map[string]any{
		"collection_profile": idx.CollectionProfile, "entity": idx.Entity, "filter": idx.Filter,
		"filter_version": idx.FilterVersion, "gaps": idx.Gaps, "schema_version": idx.SchemaVersion, "source": idx.Source,
	} {
		if scalars[k], err = enc(v); err != nil {
			return nil, err
		}
	}
	render := func(files, records [][]byte) []byte {
		n := 256
		for _, x := range files {
			n += len(x) + 1
		}
		for _, x := range records {
			n += len(x) + 1
		}
		out := make([]byte, 0, n)
		array := func(items [][]byte) {
			out = append(out, '[')
			for i, x := range items {
				if i > 0 {
					out = append(out, ',')
				}
				out = append(out, x...)
			}
			out = append(out, ']')
		}
		// Members in RFC 8785 order.
		for i, k := range []string{"collection_profile", "entity", "files", "filter", "filter_version", "gaps", "records", "schema_version", "source"} {
			if i == 0 {
				out = append(out, '{')
			} else {
				out = append(out, ',')
			}
			out = append(out, '"')
			out = append(out, k...)
			out = append(out, '"', ':')
			switch k {
			case "files":
				array(files)
			case "records":
				array(records)
			default:
				out = append(out, scalars[k]...)
			}
		}
		return append(out, '}')
	}
	for start := 0; start == 0 || start < len(files) || start < len(records); start += indexChunk {
		chunk := func(items [][]byte) [][]byte {
			if start >= len(items) {
				return nil
			}
			return items[start:min(start+indexChunk, len(items))]
		}
		if err := b.Validate(schema.Index, render(chunk(files), chunk(records))); err != nil {
			return nil, &AbortError{Scope: "schema", Code: AbortSchemaInvalid, Reason: "index.json does not validate against " + schema.Index, Err: err}
		}
	}
	return render(files, records), nil
}
