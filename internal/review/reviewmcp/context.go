package reviewmcp

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// contextClasses are the resource classes context_list filters on (the spec's four).
var contextClasses = []string{"issue", "document", "remediation_thread", "ci_outcome"}

const maxContextPage = 20

// contextState remembers the handles context_list returned in this session: context_get
// accepts only a listed handle.
type contextState struct {
	mu     sync.Mutex
	listed map[string]bool
}

var (
	contextListTool = &mcp.Tool{
		Name:        ToolContextList,
		Description: "List committed review-context records: safe descriptors, ctx1_ handles, expiry, mutability, per-source completeness. Optional resource_class and source filters; page_size 1-20; cursor from next_cursor.",
		InputSchema: schema(map[string]any{
			"resource_class": enumProp("issue, document, remediation_thread or ci_outcome", contextClasses...),
			"source":         map[string]any{"type": "string", "description": "an admitted source name from the sources list"},
			"page_size":      map[string]any{"type": "integer", "minimum": 1, "maximum": maxContextPage},
			"cursor":         map[string]any{"type": "string"},
		}),
	}
	contextGetTool = &mcp.Tool{
		Name:        ToolContextGet,
		Description: "Read one listed ctx1_ handle: only the record's protected model projection.",
		InputSchema: schema(map[string]any{
			"handle": map[string]any{"type": "string", "description": "a ctx1_ handle returned by context_list"},
		}, "handle"),
	}
)

type contextItem struct {
	Handle        string `json:"handle"`
	ResourceClass string `json:"resource_class"`
	Source        string `json:"source"`
	Descriptor    string `json:"descriptor"`
	ExpiresAt     string `json:"expires_at"`
	Mutable       bool   `json:"mutable"`
}

type sourceView struct {
	Source       string   `json:"source"`
	Required     bool     `json:"required"`
	Completeness string   `json:"completeness"`
	Records      int      `json:"records"`
	Omitted      int      `json:"omitted"`
	Reasons      []string `json:"reasons"`
}

var contextListArgs = []argSpec{{"resource_class", argString}, {"source", argString}, {"page_size", argInt}, {"cursor", argString}}

// descriptor is the safe descriptor of a record: the committed descriptor only when the
// policy's model projection includes it, otherwise a fixed text by class.
func descriptor(r *reviewctx.Record) string {
	switch {
	case r.Content.Thread != nil:
		return "remediation thread"
	case r.Content.CI != nil:
		return "CI outcome: " + r.Content.CI.Check
	}
	for _, f := range r.Binding.Projections.Model {
		if f == "descriptor" && r.Content.Descriptor != "" {
			return r.Content.Descriptor
		}
	}
	return strings.ReplaceAll(r.Binding.ResourceClass, "_", " ") + " record"
}

func (s *server) storeLive(now time.Time) error {
	exp, err := time.Parse(time.RFC3339, s.store.ExpiresAt)
	if err != nil || !now.Before(exp) {
		return refusef("store", "the context store has expired")
	}
	return nil
}

func (s *server) contextListCall(raw json.RawMessage) (func(*Usage), any, error) {
	a, err := parseArgs(raw, contextListArgs...)
	if err != nil {
		return nil, nil, err
	}
	class, err := oneOf(a, "resource_class", contextClasses)
	if err != nil {
		return nil, nil, err
	}
	src, hasSrc := a.str("source")
	if hasSrc {
		if _, ok := s.store.Source(src); !ok {
			return nil, nil, refusef("source", "not an admitted source of this store")
		}
	}
	size, err := intIn(a, "page_size", 1, maxContextPage, maxContextPage)
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	if err := s.storeLive(now); err != nil {
		return nil, nil, err
	}
	var sel []*reviewctx.Record
	for i := range s.store.Records {
		r := &s.store.Records[i]
		exp, err := time.Parse(time.RFC3339, r.Binding.ExpiresAt)
		if err != nil || !now.Before(exp) {
			continue // an expired record is not listed
		}
		if (class == "" || r.Binding.ResourceClass == class) && (!hasSrc || r.Source == src) {
			sel = append(sel, r)
		}
	}
	query := "context|" + class + "|" + src
	off := 0
	if cur, ok := a.str("cursor"); ok {
		if off, err = s.cur.open(cur, query, len(sel)); err != nil {
			return nil, nil, err
		}
	}
	end := min(off+size, len(sel))
	items := []contextItem{}
	s.ctx.mu.Lock()
	for _, r := range sel[off:end] {
		s.ctx.listed[r.Handle] = true
		items = append(items, contextItem{Handle: r.Handle, ResourceClass: r.Binding.ResourceClass, Source: r.Source,
			Descriptor: descriptor(r), ExpiresAt: r.Binding.ExpiresAt, Mutable: r.Mutable})
	}
	s.ctx.mu.Unlock()
	sources := []sourceView{}
	for _, ss := range s.store.Sources {
		sources = append(sources, sourceView{Source: ss.Source, Required: ss.Required, Completeness: string(ss.Completeness),
			Records: ss.Records, Omitted: ss.Omitted, Reasons: append([]string{}, ss.Reasons...)})
	}
	ans := map[string]any{"items": items, "sources": sources, "total": len(sel)}
	if end < len(sel) {
		ans["next_cursor"] = s.cur.mint(end, query)
	}
	return func(u *Usage) { u.ContextList++ }, ans, nil
}

// contextGetCall returns the protected model projection of one listed handle. The handle's
// form, that it was listed in this session, and (reviewctx.Lookup) its run, policy and expiry
// are all checked before the record is touched.
func (s *server) contextGetCall(raw json.RawMessage) (func(*Usage), any, error) {
	a, err := parseArgs(raw, argSpec{"handle", argString})
	if err != nil {
		return nil, nil, err
	}
	h, ok := a.str("handle")
	if !ok {
		return nil, nil, refusef("handle", "required")
	}
	if !reviewctx.ValidHandle(h) {
		return nil, nil, refusef("handle", "not a ctx1_ handle")
	}
	s.ctx.mu.Lock()
	listed := s.ctx.listed[h]
	s.ctx.mu.Unlock()
	if !listed {
		return nil, nil, refusef("handle", "not listed by context_list in this session")
	}
	r, err := s.store.Lookup(h, s.cfg.RunID, s.cfg.PolicyDigest, s.now())
	if err != nil {
		if errors.Is(err, reviewctx.ErrHandle) {
			// ErrHandle messages are fixed phrases (wrong run, expired, …), never a value.
			return nil, nil, refusef("handle", "%s", strings.TrimPrefix(err.Error(), reviewctx.ErrHandle.Error()+": "))
		}
		return nil, nil, refusef("handle", "rejected")
	}
	return func(u *Usage) { u.ContextGet++ }, r.ModelView(), nil
}

// storeDigest is the SHA-256 of the store's canonical bytes, which LoadStore has proven equal
// to the file's bytes.
func storeDigest(st *reviewctx.Store) (string, error) {
	b, err := canon.JSON(st)
	if err != nil {
		return "", err
	}
	return canon.SHA256Hex(b), nil
}
