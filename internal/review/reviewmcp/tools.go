package reviewmcp

import (
	"encoding/json"
	"sort"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Evidence tool bounds.
const (
	maxListPage    = 50
	maxSearchLimit = 20
	maxChunkBytes  = 24 << 10
	minChunkBytes  = 256
	maxIDBytes     = 80
)

func schema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func enumProp(desc string, vals ...string) map[string]any {
	return map[string]any{"type": "string", "enum": vals, "description": desc}
}

var (
	evidenceTool = &mcp.Tool{
		Name:        ToolEvidence,
		Description: "Verified review evidence of this merge request (records, threads, reviews, checks, actor state, gaps). action=summary first; action=list pages item IDs; action=get returns one item.",
		InputSchema: schema(map[string]any{
			"action":    enumProp("summary, list or get", "summary", "list", "get"),
			"kind":      enumProp("list only: restrict to one item kind", evidenceKinds...),
			"page_size": map[string]any{"type": "integer", "minimum": 1, "maximum": maxListPage},
			"cursor":    map[string]any{"type": "string", "description": "list only: next_cursor of the previous page"},
			"id":        map[string]any{"type": "string", "description": "get only: an item ID from list or search"},
			"offset":    map[string]any{"type": "integer", "minimum": 0, "description": "get only: content byte offset (next_offset)"},
		}, "action"),
	}
	searchTool = &mcp.Tool{
		Name:        toolEvidenceSearch,
		Description: "Literal, case-insensitive search of the evidence: 1-128 characters, at most 8 whitespace-separated tokens, all of which must occur. Returns item IDs and metadata only.",
		InputSchema: schema(map[string]any{
			"query": map[string]any{"type": "string", "minLength": 1, "maxLength": maxQueryChars},
			"kind":  enumProp("restrict to one item kind", evidenceKinds...),
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": maxSearchLimit},
		}, "query"),
	}
	coverageTool = &mcp.Tool{
		Name:        toolEvidenceCoverage,
		Description: "Whether the evidence can prove absence for one record kind in its exact scope (optionally of a literal query). absence_authoritative is true only for complete applicable coverage with zero matches and no truncation; otherwise the state is unknown or present.",
		InputSchema: schema(map[string]any{
			"kind":  enumProp("record kind", coverageKinds...),
			"scope": enumProp("snapshot gap scope; all is broad and never authoritative", append(append([]string{}, scopes...), "all")...),
			"query": map[string]any{"type": "string", "minLength": 1, "maxLength": maxQueryChars},
		}, "kind"),
	}
)

// coverageKinds are the record kinds a coverage question may name.
var coverageKinds = []string{kindEntity, kindComment, kindReview, kindCheck, kindCheckLog}

var evidenceArgs = []argSpec{{"action", argString}, {"kind", argString}, {"page_size", argInt}, {"cursor", argString}, {"id", argString}, {"offset", argInt}}

func (s *server) evidenceCall(raw json.RawMessage) (func(*Usage), any, error) {
	a, err := parseArgs(raw, evidenceArgs...)
	if err != nil {
		return nil, nil, err
	}
	action, err := oneOf(a, "action", []string{"summary", "list", "get"})
	if err != nil {
		return nil, nil, err
	}
	allowed := map[string][]string{"summary": {"action"}, "list": {"action", "kind", "page_size", "cursor"}, "get": {"action", "id", "offset"}}
	for k := range a {
		if !contains(allowed[action], k) {
			return nil, nil, refusef(k, "not an argument of action %s", action)
		}
	}
	switch action {
	case "summary":
		return func(u *Usage) { u.EvidenceSummary++ }, s.summary(), nil
	case "list":
		ans, err := s.list(a)
		return func(u *Usage) { u.EvidenceList++ }, ans, err
	case "get":
		ans, err := s.get(a)
		return func(u *Usage) { u.EvidenceGet++ }, ans, err
	}
	return nil, nil, refusef("action", "required (summary, list or get)")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type gapView struct {
	Scope     string `json:"scope"`
	Code      string `json:"code"`
	Usability string `json:"usability"`
	Count     int    `json:"count"`
}

func (s *server) summary() any {
	m := s.ev.snap.Manifest
	gaps := []gapView{}
	for _, g := range s.ev.gaps {
		gaps = append(gaps, gapView(g))
	}
	inc := []string{}
	for k := range s.ev.included {
		inc = append(inc, k)
	}
	sort.Strings(inc)
	tools := []string{ToolEvidence, toolEvidenceSearch, toolEvidenceCoverage}
	if s.cfg.Mode == ModeEnriched {
		tools = append(tools, ToolContextList, ToolContextGet)
	}
	return map[string]any{
		"entity_kind":         m.Entity.Kind,
		"forge":               m.Source.Forge,
		"index_sha256":        s.ev.snap.IndexSHA256,
		"filter_version":      m.FilterVersion,
		"items":               s.ev.counts(),
		"included_sources":    inc,
		"check_log_selection": s.ev.checkLogSelection,
		"gaps":                gaps,
		"tools":               tools,
	}
}

type itemView struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`
	CreatedAt    string `json:"created_at,omitempty"`
	FilterStatus string `json:"filter_status,omitempty"`
	ContentBytes int    `json:"content_bytes"`
}

func view(it *item) itemView {
	return itemView{ID: it.ID, Kind: it.Kind, CreatedAt: it.CreatedAt, FilterStatus: it.Filter, ContentBytes: len(it.content)}
}

func (s *server) list(a args) (any, error) {
	kind, err := oneOf(a, "kind", evidenceKinds)
	if err != nil {
		return nil, err
	}
	size, err := intIn(a, "page_size", 1, maxListPage, 20)
	if err != nil {
		return nil, err
	}
	var sel []*item
	for _, it := range s.ev.items {
		if kind == "" || it.Kind == kind {
			sel = append(sel, it)
		}
	}
	query := "evidence|" + kind
	off := 0
	if cur, ok := a.str("cursor"); ok {
		if off, err = s.cur.open(cur, query, len(sel)); err != nil {
			return nil, err
		}
	}
	end := min(off+size, len(sel))
	out := map[string]any{"total": len(sel)}
	items := []itemView{}
	for _, it := range sel[off:end] {
		items = append(items, view(it))
	}
	out["items"] = items
	if end < len(sel) {
		out["next_cursor"] = s.cur.mint(end, query)
	}
	return out, nil
}

// lookupItem validates an item ID's form before looking it up, and never echoes it.
func (s *server) lookupItem(a args) (*item, error) {
	id, ok := a.str("id")
	if !ok {
		return nil, refusef("id", "required with action get")
	}
	if len(id) == 0 || len(id) > maxIDBytes {
		return nil, refusef("id", "must be 1..%d bytes", maxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return nil, refusef("id", "not an evidence item ID")
		}
	}
	it, ok := s.ev.byID[id]
	if !ok {
		return nil, refusef("id", "not an item of this snapshot")
	}
	return it, nil
}

func (s *server) get(a args) (any, error) {
	it, err := s.lookupItem(a)
	if err != nil {
		return nil, err
	}
	off, err := intIn(a, "offset", 0, int64(len(it.content)), 0)
	if err != nil {
		return nil, err
	}
	if off < len(it.content) && !utf8.RuneStart(it.content[off]) {
		return nil, refusef("offset", "not at a character boundary (use next_offset)")
	}
	for chunk := maxChunkBytes; chunk >= minChunkBytes; chunk /= 2 {
		end := min(off+chunk, len(it.content))
		for end < len(it.content) && end > off && !utf8.RuneStart(it.content[end]) {
			end--
		}
		ans := map[string]any{"item": view(it), "offset": off, "content": it.content[off:end]}
		if it.metadata != nil && off == 0 {
			ans["metadata"] = it.metadata
		}
		if end < len(it.content) {
			ans["next_offset"] = end
		}
		b, err := json.Marshal(ans)
		if err == nil && fits(b) {
			return json.RawMessage(b), nil
		}
	}
	return nil, refusef("answer", "over the %d-byte response bound", maxMessage)
}

var searchArgs = []argSpec{{"query", argString}, {"kind", argString}, {"limit", argInt}}

// searchCall answers a literal search with IDs and closed metadata only: neither the query
// nor any matched text is part of the answer.
func (s *server) searchCall(raw json.RawMessage) (func(*Usage), any, error) {
	a, err := parseArgs(raw, searchArgs...)
	if err != nil {
		return nil, nil, err
	}
	qs, ok := a.str("query")
	if !ok {
		return nil, nil, refusef("query", "required")
	}
	q, err := parseQuery(qs)
	if err != nil {
		return nil, nil, err
	}
	kind, err := oneOf(a, "kind", evidenceKinds)
	if err != nil {
		return nil, nil, err
	}
	limit, err := intIn(a, "limit", 1, maxSearchLimit, maxSearchLimit)
	if err != nil {
		return nil, nil, err
	}
	matches := []itemView{}
	total := 0
	for _, it := range s.ev.items {
		if (kind == "" || it.Kind == kind) && q.matches(it.searchText()) {
			total++
			if len(matches) < limit {
				matches = append(matches, view(it))
			}
		}
	}
	return func(u *Usage) { u.EvidenceSearch++ }, map[string]any{"matches": matches, "total_matches": total, "truncated": total > len(matches)}, nil
}

var coverageArgs = []argSpec{{"kind", argString}, {"scope", argString}, {"query", argString}}

// coverageCall answers whether the evidence can prove absence. absence_authoritative is true
// only when the scope is named exactly (not broad), is the kind's own scope, was selected by
// the collection profile, has no gap, no record of the kind was truncated or rejected at
// admission (nor, for a literal query, modified by redaction), the check-log selection is
// all (for check_log), and nothing matched. A match is present
// whatever the coverage; anything else is unknown. The answer carries closed reason codes.
func (s *server) coverageCall(raw json.RawMessage) (func(*Usage), any, error) {
	a, err := parseArgs(raw, coverageArgs...)
	if err != nil {
		return nil, nil, err
	}
	kind, err := oneOf(a, "kind", coverageKinds)
	if err != nil {
		return nil, nil, err
	}
	if kind == "" {
		return nil, nil, refusef("kind", "required")
	}
	scope, err := oneOf(a, "scope", append(append([]string{}, scopes...), "all"))
	if err != nil {
		return nil, nil, err
	}
	var q literal
	if qs, ok := a.str("query"); ok {
		if q, err = parseQuery(qs); err != nil {
			return nil, nil, err
		}
	}
	reasons := s.coverageReasons(kind, scope)
	matches := 0
	for _, it := range s.ev.items {
		if it.Kind != kind {
			continue
		}
		// admission that cut or withheld text: a truncated or rejected record (a rejected
		// one has no content at all), and for a literal query a modified (redacted) one,
		// whose replaced text can hide a match — absence is then not provable
		var r string
		switch it.Filter {
		case "truncated":
			r = "admission_truncated"
		case "rejected":
			r = "admission_rejected"
		case "modified":
			if q != nil {
				r = "admission_modified"
			}
		}
		if r != "" && !contains(reasons, r) {
			reasons = append(reasons, r)
		}
		if q == nil || q.matches(it.searchText()) {
			matches++
		}
	}
	sort.Strings(reasons)
	state := "unknown"
	switch {
	case matches > 0:
		state = "present"
	case len(reasons) == 0:
		state = "absent"
	}
	if scope == "" {
		scope = "all"
	}
	return func(u *Usage) { u.EvidenceCoverage++ }, map[string]any{
		"kind": kind, "scope": scope, "matches": matches, "state": state,
		"absence_authoritative": state == "absent", "reasons": reasons,
	}, nil
}

// coverageReasons returns the closed reasons the scope cannot prove absence.
func (s *server) coverageReasons(kind, scope string) []string {
	reasons := []string{}
	if s.ev.immutable {
		// the view withholds every record kind: zero matches proves nothing
		return append(reasons, "view_withheld")
	}
	switch {
	case scope == "" || scope == "all":
		return append(reasons, "broad_scope")
	case scope != kindScope[kind]:
		return append(reasons, "mismatched_scope")
	case !s.ev.included[scope]:
		return append(reasons, "scope_not_selected")
	}
	gaps := s.ev.scopeGaps(scope)
	if kind == kindCheckLog {
		// a log exists only for a retained check: a checks gap also hides logs
		gaps = append(gaps, s.ev.scopeGaps(kindScope[kindCheck])...)
	}
	for _, g := range gaps {
		r := "partial_scope"
		if g.Usability == "unusable" {
			r = "unusable_scope"
		}
		if !contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	if kind == kindCheckLog && s.ev.checkLogSelection != "all" {
		reasons = append(reasons, "selective_logs")
	}
	return reasons
}
