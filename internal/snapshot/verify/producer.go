package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// Producer rule codes: the producer MUSTs of entity-context-snapshot v1 that can be checked
// from a tree alone, beyond its byte and layout contract (docs/consumer.md, "Producer rules").
// Each names one rule, so a third-party producer's CI learns exactly which MUST it broke.
const (
	// RuleUnicodeFloor: a record file, check log or JSON document holds a rune of a portable
	// Unicode floor class (tag characters, zero-width characters and U+FEFF, bidirectional
	// controls, variation selectors, interlinear annotations), which every filter version
	// strips from bodies, logs and display strings (spec "Canonical bytes").
	RuleUnicodeFloor = "unicode_floor"
	// RuleUnicodeStripped: a tree of this build's filter_version holds, in a record file, a
	// check log or a JSON document's strings, a character that version's Unicode safety step
	// strips beyond the floor (NUL and other controls, terminal escapes, LRM/RLM/ALM, the word
	// joiner, other format characters): that filter did not emit it. Not checked for another
	// filter version (--producer-check), whose extras are its own.
	RuleUnicodeStripped = "unicode_stripped"
	// RuleRecordBytes: a record body (the bytes after the header's blank line) is longer than
	// collection.json's bounds.max_record_bytes.
	RuleRecordBytes = "record_bytes_bound"
	// RuleLogBytes: a check log is longer than bounds.max_log_bytes.
	RuleLogBytes = "log_bytes_bound"
	// RuleStringBytes: a source-derived display string or structural value is longer than
	// bounds.max_metadata_string_bytes (display strings are bounded to it; a structural value
	// beyond it is invalid and never emitted).
	RuleStringBytes = "metadata_string_bound"
	// RuleLabels: entity metadata holds more labels than bounds.max_labels.
	RuleLabels = "labels_bound"
	// RuleEmptyLabel: an entity label is empty (empty optional display values are dropped).
	RuleEmptyLabel = "empty_label"
	// RuleRecordCount: a source has more records than bounds.max_records_per_source.
	RuleRecordCount = "record_count_bound"
	// RuleHeadSHA: check metadata documents name more than one head_sha (the producer retains
	// only checks of the one head revision captured at collection start).
	RuleHeadSHA = "check_head_sha"
	// RuleReviewTime: a review relationship row's submitted_at differs from its review
	// record's created_at (both are the canonical submission time).
	RuleReviewTime = "review_submitted_at"
	// RuleRejectedGap: rejected records of a scope outnumber the counts of that scope's
	// unsafe_content, invalid_metadata and source_too_large gaps (a rejected source adds such
	// an unusable gap for its scope).
	RuleRejectedGap = "rejected_record_gap"
	// RuleLogGap: a retained check whose log collection.json selects has no log_path, and the
	// check_logs scope's unusable gaps do not account for it.
	RuleLogGap = "check_log_gap"
	// RuleFilterStatus: a filter summary says modified but reports no finding, or unchanged
	// but reports findings.
	RuleFilterStatus = "filter_status"
	// RuleForgeID: an ID in a child document (actor, review, dismisser, thread, resolver,
	// check, run) is outside its forge's mapping: GitHub node IDs ^[A-Za-z0-9][A-Za-z0-9_=-]*$,
	// GitLab and Forgejo numeric IDs ^[1-9][0-9]*$, GitLab discussion (thread) IDs
	// ^[A-Za-z0-9][A-Za-z0-9._:-]*$. The index schema checks its own IDs by forge; the child
	// schemas do not carry the forge, so the producer must.
	RuleForgeID = "forge_id_mapping"
	// RuleProfileBound: a profile_bound gap of a record source whose record count is not
	// max_records_per_source, or of the entity scope whose label count is not max_labels or
	// whose entity metadata filter status is not truncated (a bound that drops records keeps
	// exactly the bound; dropping labels truncates the entity metadata).
	RuleProfileBound = "profile_bound_gap"
	// RuleGitLabReview: a GitLab tree with formal review records or review rows; GitLab has no
	// formal v1 review records (approvals have no immutable record IDs).
	RuleGitLabReview = "gitlab_review"
	// RuleFilterSummary: a record's filter summary and its file's manifest entry summary
	// differ; both summarize the same emitted bytes (a comment, review or entity body, or a
	// check's metadata document).
	RuleFilterSummary = "filter_summary_mismatch"
	// RuleGeneratedFilter: a generated document (collection, thread state, order or view
	// file) carries filter findings; generated documents do not invent findings.
	RuleGeneratedFilter = "generated_filter"
)

// floorViolation reports the first floor rune of a file found at offset at (≥ 0).
func (c *checker) floorViolation(p string, at int64, code string) {
	c.add(p, RuleUnicodeFloor, fmt.Sprintf("a %s character at byte offset %d; every v1 filter strips the Unicode floor classes from bodies, logs and display strings", code, at))
}

// strippedViolation reports the first rune this build's filter strips beyond the floor.
func (c *checker) strippedViolation(p string, at int64, code string) {
	c.add(p, RuleUnicodeStripped, fmt.Sprintf("a %s character at byte offset %d; filter_version %s strips it", code, at, filter.Version))
}

// textUnicode applies the floor rule and, for a tree of this build's filter version, the
// stripped-character rule to a record file or log.
func (c *checker) textUnicode(p string, t *textFacts) {
	if t.floorAt >= 0 {
		c.floorViolation(p, t.floorAt, t.floorCode)
	} else if c.shipped && t.strippedAt >= 0 {
		c.strippedViolation(p, t.strippedAt, t.strippedCode)
	}
}

// floorJSON scans a JSON document's bytes for floor runes and, for a tree of this build's
// filter version, for the other characters it strips. RFC 8785 writes every non-ASCII rune
// and DEL as itself and escapes only controls (\b, \t, \n, \f, \r, else \u00XX), quotation
// mark and backslash, so in a canonical document — anything else is already
// not_canonical_json — such a rune in any string is in the bytes, and a stripped control is
// a \b, \f or \u escape.
func (c *checker) floorJSON(p string, b []byte) {
	if !c.shipped {
		if at, code := filter.IndexFloor(b); at >= 0 {
			c.floorViolation(p, int64(at), code)
		}
		return
	}
	at, code := filter.IndexStripped(b)
	if at >= 0 && !floorCodes[code] {
		if f, fc := filter.IndexFloor(b[at:]); f >= 0 {
			c.floorViolation(p, int64(at+f), fc)
			return
		}
	}
	if e := escapedControl(b); e >= 0 && (at < 0 || e < at) {
		at, code = e, "unicode.control"
	}
	switch {
	case at < 0:
	case floorCodes[code]:
		c.floorViolation(p, int64(at), code)
	default:
		c.strippedViolation(p, int64(at), code)
	}
}

// escapedControl returns the offset of the first JSON escape of a control character the
// filter strips (\b, \f, or a \u escape, which canonical JSON uses only for controls without
// a short form), or -1. TAB, LF and CR (\t, \n, \r) are not reported.
func escapedControl(b []byte) int {
	for i := 0; i+1 < len(b); {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 || i+j+1 >= len(b) {
			return -1
		}
		i += j
		switch b[i+1] {
		case 'b', 'f', 'u':
			return i
		}
		i += 2 // \\, \", \/, \t, \n, \r
	}
	return -1
}

// bodyBound checks a record body's size against max_record_bytes.
func (c *checker) bodyBound(p string, body int64) {
	if c.coll != nil && body > c.coll.Bounds.MaxRecordBytes {
		c.add(p, RuleRecordBytes, fmt.Sprintf("body is %d bytes, over collection.json bounds.max_record_bytes %d", body, c.coll.Bounds.MaxRecordBytes))
	}
}

// logRules checks a check log's characters and size.
func (c *checker) logRules(p string, t *textFacts) {
	c.textUnicode(p, t)
	if c.coll != nil && t.size > c.coll.Bounds.MaxLogBytes {
		c.add(p, RuleLogBytes, fmt.Sprintf("log is %d bytes, over collection.json bounds.max_log_bytes %d", t.size, c.coll.Bounds.MaxLogBytes))
	}
}

// producer checks the cross-document producer rules that need collection.json's bounds or
// several documents at once. Each rule is a single pass over arrays already decoded.
func (c *checker) producer(d *docs) {
	if d.collection != nil {
		c.stringBounds(d)
		c.labels(d.entity, d.collection.Bounds.MaxLabels)
		c.recordCounts(d)
		c.logGaps(d)
		c.profileBounds(d)
	}
	c.forgeIDs(d)
	c.headSHA(d)
	c.reviewTimes(d)
	c.rejectedGaps()
	c.filterSummaries()
	c.threadReviews(d)
}

// threadReviews: a relationship thread's review_record_key names a review record of the
// manifest (dangling record keys are forbidden).
func (c *checker) threadReviews(d *docs) {
	if d.reviews == nil {
		return
	}
	reviews := map[string]bool{}
	for _, r := range c.man.Records {
		if r.Kind == "review" {
			reviews[r.RecordKey] = true
		}
	}
	for i, t := range d.reviews.Threads {
		if t.ReviewRecordKey != "" && !reviews[t.ReviewRecordKey] {
			c.add("relations/reviews.json", RuleRelations, fmt.Sprintf("threads[%d].review_record_key names no review record", i))
		}
	}
}

// stringBounds: every display string (record and entity author logins, entity title and
// labels, actor logins, check names, agent names) and every source-derived structural value
// (source host, repository and repository ID, entity, record, actor, review, thread, check
// and run IDs, review thread paths) fits max_metadata_string_bytes.
func (c *checker) stringBounds(d *docs) {
	lim := d.collection.Bounds.MaxMetadataStringBytes
	check := func(p string, field fieldRef, v string) {
		if int64(len(v)) > lim {
			c.add(p, RuleStringBytes, fmt.Sprintf("%s is %d bytes, over collection.json bounds.max_metadata_string_bytes %d", field, len(v), lim))
		}
	}
	opt := func(p string, field fieldRef, v *string) {
		if v != nil {
			check(p, field, *v)
		}
	}
	m := c.man
	check("index.json", name("source.host"), m.Source.Host)
	check("index.json", name("source.repository"), m.Source.Repository)
	check("index.json", name("source.repository_id"), m.Source.RepositoryID)
	check("index.json", name("entity.id"), m.Entity.ID)
	for i := range m.Records {
		r := &m.Records[i]
		check("index.json", at("records", i, "id"), r.ID)
		opt("index.json", at("records", i, "author_id"), r.AuthorID)
		opt("index.json", at("records", i, "author"), r.Author)
	}
	if e := d.entity; e != nil {
		const p = "entity/metadata.json"
		check(p, name("id"), e.ID)
		opt(p, name("author_id"), e.AuthorID)
		opt(p, name("author"), e.Author)
		check(p, name("title"), e.Title)
		for i, l := range e.Labels {
			check(p, at("labels", i, ""), l)
		}
	}
	if d.actors != nil {
		for i, a := range d.actors.Actors {
			check("state/actors.json", at("actors", i, "id"), a.ID)
			opt("state/actors.json", at("actors", i, "login"), a.Login)
		}
	}
	for _, p := range checkPaths(d.checks) {
		check(p, name("id"), d.checks[p].ID)
		check(p, name("name"), d.checks[p].Name)
	}
	if d.runs != nil {
		for i, r := range d.runs.Runs {
			check("history/agent-runs.json", at("runs", i, "id"), r.ID)
			check("history/agent-runs.json", at("runs", i, "agent"), r.Agent)
		}
	}
	if d.reviews != nil {
		for i, rv := range d.reviews.Reviews {
			check("relations/reviews.json", at("reviews", i, "id"), rv.ID)
		}
		for i, t := range d.reviews.Threads {
			check("relations/reviews.json", at("threads", i, "id"), t.ID)
			check("relations/reviews.json", at("threads", i, "review_id"), t.ReviewID)
			check("relations/reviews.json", at("threads", i, "path"), t.Path)
		}
	}
	if d.threads != nil {
		for i, t := range d.threads.Threads {
			check("state/threads.json", at("threads", i, "id"), t.ID)
		}
	}
}

// labels: at most max_labels labels, none empty.
func (c *checker) labels(e *entityDoc, maxLabels int64) {
	if e == nil {
		return
	}
	if int64(len(e.Labels)) > maxLabels {
		c.add("entity/metadata.json", RuleLabels, fmt.Sprintf("%d labels, over collection.json bounds.max_labels %d", len(e.Labels), maxLabels))
	}
	for i, l := range e.Labels {
		if l == "" {
			c.add("entity/metadata.json", RuleEmptyLabel, fmt.Sprintf("labels[%d] is empty; empty labels are dropped", i))
		}
	}
}

// recordCounts: no source has more records than max_records_per_source. Rejected records
// count: selection keeps at most that many before filtering rejects any.
func (c *checker) recordCounts(d *docs) {
	lim := d.collection.Bounds.MaxRecordsPerSource
	n := map[string]int64{}
	for _, r := range c.man.Records {
		if src := sourceOfKind[r.Kind]; src != "entity" {
			n[src]++
		}
	}
	if d.runs != nil {
		n["agent_runs"] = int64(len(d.runs.Runs))
	}
	for _, src := range []string{"agent_runs", "checks", "comments", "reviews"} {
		if n[src] > lim {
			p := "index.json"
			if src == "agent_runs" {
				p = "history/agent-runs.json"
			}
			c.add(p, RuleRecordCount, fmt.Sprintf("%d %s records, over collection.json bounds.max_records_per_source %d", n[src], src, lim))
		}
	}
}

// headSHA: every check metadata document names the same head_sha. The checks that differ
// from the most common head (on a tie, the head of the first check by path) are reported, so
// one stray check is named rather than all the others.
func (c *checker) headSHA(d *docs) {
	paths := checkPaths(d.checks)
	if len(paths) < 2 {
		return
	}
	n := map[string]int{}
	head := d.checks[paths[0]].HeadSHA
	for _, p := range paths {
		h := d.checks[p].HeadSHA
		if n[h]++; n[h] > n[head] {
			head = h
		}
	}
	for _, p := range paths {
		if d.checks[p].HeadSHA != head {
			c.add(p, RuleHeadSHA, fmt.Sprintf("head_sha differs from the %d other check(s)' %s; only checks of the one head revision captured at collection start are retained", n[head], head))
		}
	}
}

// reviewTimes: each review row's submitted_at is its review record's created_at.
func (c *checker) reviewTimes(d *docs) {
	if d.reviews == nil {
		return
	}
	created := map[string]string{}
	for _, r := range c.man.Records {
		if r.Kind == "review" {
			created[r.RecordKey] = r.CreatedAt
		}
	}
	for i, rv := range d.reviews.Reviews {
		if t, ok := created[rv.RecordKey]; ok && t != rv.SubmittedAt {
			c.add("relations/reviews.json", RuleReviewTime, fmt.Sprintf("reviews[%d].submitted_at differs from its review record's created_at (both are the submission time)", i))
		}
	}
}

// unusableGaps sums the counts of a scope's unusable gaps, of the given codes only when codes
// is not nil.
func (c *checker) unusableGaps(scope string, codes map[string]bool) int {
	n := 0
	for _, g := range c.man.Gaps {
		if g.Scope == scope && g.Usability == "unusable" && (codes == nil || codes[g.Code]) {
			n += g.Count
		}
	}
	return n
}

// rejectionGap lists the gap codes a rejected record goes with: unsafe content (the filter
// rejected it), invalid metadata (an unsafe or empty check name) or a source over
// max_source_bytes. Other unusable gaps (authorization_failed, fetch_failed) count sources
// that have no record at all, so they cannot account for a rejected one.
var rejectionGap = map[string]bool{"unsafe_content": true, "invalid_metadata": true, "source_too_large": true}

// scopeOfKind maps a non-entity record kind to its gap scope.
var scopeOfKind = map[string]string{"comment": "comments", "review": "reviews", "check": "checks"}

// rejectedGaps: each rejected record is counted in an unusable gap of its scope.
func (c *checker) rejectedGaps() {
	rejected := map[string]int{}
	for _, r := range c.man.Records {
		if sc := scopeOfKind[r.Kind]; sc != "" && r.Filter.Status == "rejected" {
			rejected[sc]++
		}
	}
	for _, sc := range []string{"checks", "comments", "reviews"} {
		if n, have := rejected[sc], c.unusableGaps(sc, rejectionGap); n > have {
			c.add("index.json", RuleRejectedGap, fmt.Sprintf("%d rejected %s records but the scope's unsafe_content, invalid_metadata and source_too_large gaps count %d; a rejected source adds such a gap for its scope", n, sc, have))
		}
	}
}

// logGaps: a retained check whose log is selected has a log_path, or an unusable check_logs
// gap counts it.
func (c *checker) logGaps(d *docs) {
	coll := d.collection
	if coll.CheckLogSelection == "none" || !contains(coll.IncludedSources, "check_logs") {
		return
	}
	missing := 0
	for _, r := range c.man.Records {
		cd := d.checks[r.MetadataPath]
		if r.Kind != "check" || cd == nil || r.LogPath != "" {
			continue
		}
		if coll.CheckLogSelection == "all" || failedConclusion[cd.Conclusion] {
			missing++
		}
	}
	if have := c.unusableGaps("check_logs", nil); missing > have {
		c.add("index.json", RuleLogGap, fmt.Sprintf("%d retained checks whose log is selected have no log_path but the check_logs scope's unusable gaps count %d", missing, have))
	}
}

// generatedRole: roles of documents the producer generates rather than filters.
func generatedRole(role string) bool {
	return role == "collection" || role == "thread_state" || isOrderRole(role)
}

// filterSummaries: a modified summary reports at least one finding and an unchanged one
// none; generated documents carry no findings.
func (c *checker) filterSummaries() {
	c.filterStatus("index.json", name("filter"), c.man.Filter)
	for i, f := range c.man.Files {
		if f.Filter == nil {
			continue
		}
		c.filterStatus("index.json", at("files", i, "filter"), *f.Filter)
		if generatedRole(f.Role) && len(f.Filter.Findings) > 0 {
			c.add(f.Path, RuleGeneratedFilter, "a generated "+f.Role+" file carries filter findings; generated documents do not invent findings")
		}
	}
	for i, r := range c.man.Records {
		c.filterStatus("index.json", at("records", i, "filter"), r.Filter)
		for _, p := range [2]string{r.ContentPath, r.MetadataPath} {
			if f := c.byPath[p]; p != "" && f != nil && f.Filter != nil && !sameFilter(*f.Filter, r.Filter) {
				c.add(p, RuleFilterSummary, fmt.Sprintf("the files[] filter differs from records[%d].filter; both summarize these bytes", i))
			}
		}
	}
}

func sameFilter(a, b Filter) bool {
	if a.Status != b.Status || len(a.Findings) != len(b.Findings) {
		return false
	}
	for i := range a.Findings {
		if a.Findings[i] != b.Findings[i] {
			return false
		}
	}
	return true
}

func (c *checker) filterStatus(p string, field fieldRef, f Filter) {
	switch {
	case f.Status == "modified" && len(f.Findings) == 0:
		c.add(p, RuleFilterStatus, field.String()+" is modified but reports no finding; every replacement and redaction is a finding")
	case f.Status == "unchanged" && len(f.Findings) > 0:
		c.add(p, RuleFilterStatus, field.String()+" is unchanged but reports findings; a finding is a replacement or redaction")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func checkPaths(m map[string]*checkDoc) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// idOK reports whether s is of the form [A-Za-z0-9][A-Za-z0-9<extra>]*.
func idOK(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' {
			continue
		}
		if i == 0 || !containsByte(extra, b) {
			return false
		}
	}
	return s != ""
}

func containsByte(s string, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return true
		}
	}
	return false
}

func numericID(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// recordIDOK is the forge's record, actor, review, check and run ID mapping.
func recordIDOK(forge, id string) bool {
	if forge == "github" {
		return idOK(id, "_=-")
	}
	return numericID(id)
}

// threadIDOK is the forge's thread ID mapping.
func threadIDOK(forge, id string) bool {
	switch forge {
	case "github":
		return idOK(id, "_=-")
	case "gitlab":
		return idOK(id, "._:-")
	}
	return numericID(id)
}

// forgeIDs checks the IDs of the child documents against the forge's mapping, that a
// thread's review_record_key derives from its review_id, and (gitlabReviews) that a GitLab
// tree has no formal reviews.
func (c *checker) forgeIDs(d *docs) {
	forge := c.man.Source.Forge
	bad := func(p string, field fieldRef) {
		c.add(p, RuleForgeID, field.String()+" is outside the "+forge+" ID mapping")
	}
	rec := func(p string, field fieldRef, id string) {
		if !recordIDOK(forge, id) {
			bad(p, field)
		}
	}
	raw := func(p string, field fieldRef, v json.RawMessage) {
		var s *string
		if len(v) > 0 && json.Unmarshal(v, &s) == nil && s != nil {
			rec(p, field, *s)
		}
	}
	if d.actors != nil {
		for i, a := range d.actors.Actors {
			rec("state/actors.json", at("actors", i, "id"), a.ID)
		}
	}
	for _, p := range checkPaths(d.checks) {
		rec(p, name("id"), d.checks[p].ID)
	}
	if d.runs != nil {
		for i, r := range d.runs.Runs {
			rec("history/agent-runs.json", at("runs", i, "id"), r.ID)
		}
	}
	if d.reviews != nil {
		const p = "relations/reviews.json"
		for i, rv := range d.reviews.Reviews {
			rec(p, at("reviews", i, "id"), rv.ID)
			raw(p, at("reviews", i, "dismissed_by_actor_id"), rv.DismissedByActorID)
		}
		for i, t := range d.reviews.Threads {
			if !threadIDOK(forge, t.ID) {
				bad(p, at("threads", i, "id"))
			}
			if t.ReviewID != "" {
				rec(p, at("threads", i, "review_id"), t.ReviewID)
			}
			if t.ReviewID != "" && t.ReviewRecordKey != "" && canon.RecordKey(forge, c.man.Source.Host, c.man.Source.RepositoryID, canon.KindReview, t.ReviewID) != t.ReviewRecordKey {
				c.add(p, RuleRecordKey, fmt.Sprintf("threads[%d].review_record_key does not derive from its review_id", i))
			}
		}
	}
	if d.threads != nil {
		for i, t := range d.threads.Threads {
			if !threadIDOK(forge, t.ID) {
				bad("state/threads.json", at("threads", i, "id"))
			}
			raw("state/threads.json", at("threads", i, "resolved_by_actor_id"), t.ResolvedByActorID)
		}
	}
	c.gitlabReviews(d)
}

// gitlabReviews: a GitLab tree has no formal review records or rows.
func (c *checker) gitlabReviews(d *docs) {
	if c.man.Source.Forge == "gitlab" {
		for _, r := range c.man.Records {
			if r.Kind == "review" {
				c.add("index.json", RuleGitLabReview, "a review record in a GitLab tree; GitLab discussion notes are comments")
				break
			}
		}
		if d.reviews != nil && len(d.reviews.Reviews) > 0 {
			c.add("relations/reviews.json", RuleGitLabReview, "review rows in a GitLab tree; GitLab has no formal v1 review records")
		}
	}
}

// profileBounds: a profile_bound gap is what a bound leaves. max_records_per_source keeps
// exactly the bound when it drops records; max_labels keeps exactly max_labels labels and
// sets the entity metadata filter status to truncated.
func (c *checker) profileBounds(d *docs) {
	b := d.collection.Bounds
	n := map[string]int64{}
	for _, r := range c.man.Records {
		if sc := scopeOfKind[r.Kind]; sc != "" {
			n[sc]++
		}
	}
	if d.runs != nil {
		n["agent_runs"] = int64(len(d.runs.Runs))
	}
	for _, g := range c.man.Gaps {
		if g.Code != "profile_bound" {
			continue
		}
		switch g.Scope {
		case "comments", "reviews", "checks", "agent_runs":
			if n[g.Scope] != b.MaxRecordsPerSource {
				c.add("index.json", RuleProfileBound, fmt.Sprintf("a %s profile_bound gap but %d records, not max_records_per_source %d", g.Scope, n[g.Scope], b.MaxRecordsPerSource))
			}
		case "entity":
			f := c.byPath["entity/metadata.json"]
			if d.entity != nil && int64(len(d.entity.Labels)) != b.MaxLabels {
				c.add("index.json", RuleProfileBound, fmt.Sprintf("an entity profile_bound gap but %d labels, not max_labels %d", len(d.entity.Labels), b.MaxLabels))
			}
			if f != nil && (f.Filter == nil || f.Filter.Status != "truncated") {
				c.add("index.json", RuleProfileBound, "an entity profile_bound gap (labels dropped) but the entity metadata filter status is not truncated")
			}
		}
	}
}

// fieldRef names a JSON member in a violation, formatted only when a violation is reported
// (the rules visit every record of a 100k-record index).
type fieldRef struct {
	arr    string // array member name, "" for a plain member
	i      int
	member string
}

// at is member of item i of array arr ("" member: the item itself).
func at(arr string, i int, member string) fieldRef { return fieldRef{arr: arr, i: i, member: member} }

// name is a plain member path.
func name(member string) fieldRef { return fieldRef{member: member} }

func (f fieldRef) String() string {
	if f.arr == "" {
		return f.member
	}
	s := f.arr + "[" + strconv.Itoa(f.i) + "]"
	if f.member != "" {
		s += "." + f.member
	}
	return s
}
