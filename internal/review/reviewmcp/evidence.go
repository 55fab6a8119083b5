package reviewmcp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

// Evidence item kinds (closed).
const (
	kindEntity   = "entity"
	kindComment  = "comment"
	kindReview   = "review"
	kindCheck    = "check"
	kindCheckLog = "check_log"
	kindThread   = "thread"
	kindDocument = "document"
)

// evidenceKinds is the closed kind set, in list order.
var evidenceKinds = []string{kindEntity, kindComment, kindReview, kindCheck, kindCheckLog, kindThread, kindDocument}

// kindScope maps a record kind to the snapshot gap scope that covers it.
var kindScope = map[string]string{
	kindEntity: "entity", kindComment: "comments", kindReview: "reviews", kindCheck: "checks", kindCheckLog: "check_logs",
}

// scopes is the closed gap scope set of entity-context-snapshot v1.
var scopes = []string{"actors", "agent_runs", "check_logs", "checks", "comments", "entity", "reviews"}

// item is one evidence item. Its ID is stable for the same tree: a kind prefix and the
// snapshot's record or thread key (a digest, never a forge identity), or a fixed document
// name.
type item struct {
	ID        string
	Kind      string
	CreatedAt string
	Filter    string // the record's filter status (unchanged, modified, truncated)
	// content is the verified text (record body, check log); metadata the verified JSON
	// (check metadata, review or thread relation and state, a whole document).
	content  string
	metadata json.RawMessage
	lower    string // searchText
}

// searchText is what a literal search reads, lower-cased once at index time: the content,
// else the metadata JSON.
func (it *item) searchText() string { return it.lower }

func (it *item) index() {
	if it.content != "" {
		it.lower = strings.ToLower(it.content)
	} else {
		it.lower = strings.ToLower(string(it.metadata))
	}
}

// evidence is the in-memory index of one verified snapshot.
type evidence struct {
	snap              *verify.Snapshot
	items             []*item // in list order: kind order, then created_at, then ID
	byID              map[string]*item
	included          map[string]bool
	checkLogSelection string
	gaps              []verify.Gap
	threads           int
	// immutable is set by the immutable view: record kinds are withheld, so no coverage
	// answer over them can be authoritative.
	immutable bool
}

type collectionDoc struct {
	IncludedSources   []string `json:"included_sources"`
	CheckLogSelection string   `json:"check_log_selection"`
}

type relationsDoc struct {
	Reviews []json.RawMessage `json:"reviews"`
	Threads []json.RawMessage `json:"threads"`
}

type keyed struct {
	RecordKey string `json:"record_key"`
	ThreadKey string `json:"thread_key"`
	CreatedAt string `json:"created_at"`
}

// newEvidence indexes a verified snapshot. The tree passed internal/snapshot/verify, so every document has
// its schema shape; a decode failure here is still refused rather than served partially.
func newEvidence(snap *verify.Snapshot) (*evidence, error) {
	e := &evidence{snap: snap, byID: map[string]*item{}, included: map[string]bool{}, gaps: snap.Manifest.Gaps}
	var col collectionDoc
	if err := e.decode("collection.json", &col); err != nil {
		return nil, err
	}
	for _, s := range col.IncludedSources {
		e.included[s] = true
	}
	e.checkLogSelection = col.CheckLogSelection
	reviewRows := map[string]json.RawMessage{}
	var rel relationsDoc
	if _, ok := snap.File("relations/reviews.json"); ok {
		if err := e.decode("relations/reviews.json", &rel); err != nil {
			return nil, err
		}
		for _, r := range rel.Reviews {
			var k keyed
			if err := json.Unmarshal(r, &k); err != nil {
				return nil, fmt.Errorf("relations/reviews.json: %v", err)
			}
			reviewRows[k.RecordKey] = r
		}
	}
	for _, r := range snap.Manifest.Records {
		if err := e.addRecord(r, reviewRows); err != nil {
			return nil, err
		}
	}
	if err := e.addThreads(rel.Threads); err != nil {
		return nil, err
	}
	for _, d := range []struct{ id, path string }{
		{"doc_actors", "state/actors.json"}, {"doc_agent_runs", "history/agent-runs.json"},
		{"doc_collection", "collection.json"}, {"doc_entity_metadata", "entity/metadata.json"},
	} {
		if b, ok := snap.File(d.path); ok {
			// served as content, so a large document (many actors, runs) pages like a record
			e.add(&item{ID: d.id, Kind: kindDocument, content: string(b)})
		}
	}
	rank := map[string]int{}
	for i, k := range evidenceKinds {
		rank[k] = i
	}
	sort.SliceStable(e.items, func(i, j int) bool {
		a, b := e.items[i], e.items[j]
		if a.Kind != b.Kind {
			return rank[a.Kind] < rank[b.Kind]
		}
		if a.CreatedAt != b.CreatedAt {
			return a.CreatedAt < b.CreatedAt
		}
		return a.ID < b.ID
	})
	return e, nil
}

func (e *evidence) decode(path string, v any) error {
	b, ok := e.snap.File(path)
	if !ok {
		return fmt.Errorf("%s: missing", path)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

func (e *evidence) add(it *item) {
	it.index()
	e.items = append(e.items, it)
	e.byID[it.ID] = it
}

func (e *evidence) file(p string) (string, error) {
	b, ok := e.snap.File(p)
	if !ok {
		return "", fmt.Errorf("%s: listed in the manifest but not in the tree", p)
	}
	return string(b), nil
}

func (e *evidence) addRecord(r verify.ManifestRecord, reviewRows map[string]json.RawMessage) error {
	it := &item{ID: "rec_" + r.RecordKey, Kind: r.Kind, CreatedAt: r.CreatedAt, Filter: r.Filter.Status}
	var err error
	if r.ContentPath != "" {
		if it.content, err = e.file(r.ContentPath); err != nil {
			return err
		}
	}
	if r.MetadataPath != "" {
		b, ok := e.snap.File(r.MetadataPath)
		if !ok {
			return fmt.Errorf("%s: missing", r.MetadataPath)
		}
		it.metadata = json.RawMessage(b)
	}
	if row, ok := reviewRows[r.RecordKey]; ok && r.Kind == kindReview {
		it.metadata = row
	}
	e.add(it)
	if r.LogPath != "" {
		lg := &item{ID: "log_" + r.RecordKey, Kind: kindCheckLog, CreatedAt: r.CreatedAt, Filter: r.Filter.Status}
		if lg.content, err = e.file(r.LogPath); err != nil {
			return err
		}
		for _, f := range e.snap.Manifest.Files {
			if f.Path == r.LogPath && f.Filter != nil {
				lg.Filter = f.Filter.Status
			}
		}
		e.add(lg)
	}
	return nil
}

// addThreads merges each relationship row with its state row into one thread item.
func (e *evidence) addThreads(rows []json.RawMessage) error {
	state := map[string]json.RawMessage{}
	if _, ok := e.snap.File("state/threads.json"); ok {
		var doc struct {
			Threads []json.RawMessage `json:"threads"`
		}
		if err := e.decode("state/threads.json", &doc); err != nil {
			return err
		}
		for _, t := range doc.Threads {
			var k keyed
			if err := json.Unmarshal(t, &k); err != nil {
				return fmt.Errorf("state/threads.json: %v", err)
			}
			state[k.ThreadKey] = t
		}
	}
	for _, r := range rows {
		var k keyed
		if err := json.Unmarshal(r, &k); err != nil {
			return fmt.Errorf("relations/reviews.json: %v", err)
		}
		merged, err := json.Marshal(map[string]json.RawMessage{"relation": r, "state": state[k.ThreadKey]})
		if err != nil {
			return err
		}
		e.add(&item{ID: "thr_" + k.ThreadKey, Kind: kindThread, CreatedAt: k.CreatedAt, metadata: merged})
		e.threads++
	}
	return nil
}

// counts returns the number of items per kind, every kind present.
func (e *evidence) counts() map[string]int {
	m := map[string]int{}
	for _, k := range evidenceKinds {
		m[k] = 0
	}
	for _, it := range e.items {
		m[it.Kind]++
	}
	return m
}

// scopeGaps returns the gaps of one scope.
func (e *evidence) scopeGaps(scope string) []verify.Gap {
	var out []verify.Gap
	for _, g := range e.gaps {
		if g.Scope == scope {
			out = append(out, g)
		}
	}
	return out
}

// literal is a validated literal query: 1–8 tokens, each matched case-insensitively.
type literal []string

// matches reports whether every token occurs in lower (already lower-cased).
func (q literal) matches(lower string) bool {
	for _, t := range q {
		if !strings.Contains(lower, t) {
			return false
		}
	}
	return true
}
