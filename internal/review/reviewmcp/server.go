// Package reviewmcp is forgectx's built-in MCP server for one review run (docs/review-context.md,
// "Built-in MCP server": in off and metadata mode it exposes only the fixed evidence tools).
//
// It serves MCP over stdio (github.com/modelcontextprotocol/go-sdk, every protocol version the
// SDK negotiates) from two read-only sources loaded once at start-up:
//
//   - the verified entity-context-snapshot tree of the reviewed merge request (internal/snapshot/verify),
//     through the three evidence tools ocr_toolkit_evidence (action summary / list / get),
//     ocr_toolkit_evidence_search and ocr_toolkit_evidence_coverage, in every mode;
//   - in ModeEnriched only, the committed private context store (internal/review/reviewctx), through
//     exactly two more tools, context_list and context_get.
//
// The server has no network, subprocess, search beyond those sources, arbitrary URL or ID,
// path traversal or write path; its only write is the usage file (Usage), replaced atomically
// after every tool call. Every request frame and every tool answer is bounded by maxMessage;
// tool arguments are decoded strictly (unknown, duplicate or mistyped fields are refused, and
// errors name the field and the rule, never echo the value).
package reviewmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgectx/forgectx/internal/platform/version"
	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/snapshot/verify"
)

// Mode selects the tool set.
type Mode string

// Modes.
const (
	// ModeConstrained serves the evidence tools only (review-context mode off or metadata,
	// and the constrained unprotected lifecycle).
	ModeConstrained Mode = "constrained"
	// ModeEnriched adds context_list and context_get over the committed store.
	ModeEnriched Mode = "enriched"
)

// Tool names (wire names: exact).
const (
	ToolEvidence         = "ocr_toolkit_evidence"
	toolEvidenceSearch   = "ocr_toolkit_evidence_search"
	toolEvidenceCoverage = "ocr_toolkit_evidence_coverage"
	ToolContextList      = "context_list"
	ToolContextGet       = "context_get"
)

// maxMessage bounds one inbound JSON-RPC frame and one tool answer (64 KiB). An oversized
// frame ends the session; an answer that cannot be made to fit is a refused call.
const maxMessage = 64 << 10

// ErrConfig wraps every start-up refusal (bad configuration, unverifiable snapshot, rejected
// store): nothing is served.
var ErrConfig = errors.New("reviewmcp: refused to serve")

// Config configures Serve.
type Config struct {
	Mode Mode
	// SnapshotDir is the entity-context-snapshot tree of the reviewed MR; it is verified
	// before anything is served.
	SnapshotDir string
	// IndexSHA256, optional, is the assembler's retained root index digest; when set the
	// on-disk index must match it.
	IndexSHA256 string
	// StoreDir, RunID and PolicyDigest (enriched only) name the committed context store and
	// the run and policy every handle must be bound to.
	StoreDir, RunID, PolicyDigest string
	// StoreSHA256, optional (enriched only), is the SHA-256 of the committed store file
	// (reviewctx.StoreIdentity.SHA256); when set the loaded store must have exactly it.
	StoreSHA256 string
	// View is the evidence view: ViewSnapshot (default) or ViewImmutable.
	View string
	// MetadataPath, optional (immutable view, constrained mode only), is the bounded
	// merge-request metadata projection file (MetadataDoc) served as docReviewMetadata;
	// MetadataSHA256, optional, pins its bytes.
	MetadataPath, MetadataSHA256 string
	// UsagePath is the usage file, replaced atomically (0600) after every tool call.
	UsagePath string
	// Now is the clock for handle expiry; nil means time.Now.
	Now func() time.Time
}

func (c *Config) check() error {
	switch c.Mode {
	case ModeConstrained:
		if c.StoreDir != "" || c.RunID != "" || c.PolicyDigest != "" || c.StoreSHA256 != "" {
			return fmt.Errorf("%w: mode constrained takes no store, run id or policy digest", ErrConfig)
		}
	case ModeEnriched:
		if c.StoreDir == "" || c.RunID == "" || c.PolicyDigest == "" {
			return fmt.Errorf("%w: mode enriched needs the store directory, the run id and the policy digest", ErrConfig)
		}
	default:
		return fmt.Errorf("%w: mode: must be constrained or enriched", ErrConfig)
	}
	switch c.View {
	case "", ViewSnapshot, ViewImmutable:
	default:
		return fmt.Errorf("%w: view: must be snapshot or immutable", ErrConfig)
	}
	if (c.MetadataPath != "" || c.MetadataSHA256 != "") && (c.View != ViewImmutable || c.Mode != ModeConstrained || c.MetadataPath == "") {
		return fmt.Errorf("%w: metadata: only a metadata file, in mode constrained with view immutable (enriched serves metadata through the store)", ErrConfig)
	}
	if c.SnapshotDir == "" {
		return fmt.Errorf("%w: snapshot: a verified snapshot directory is required", ErrConfig)
	}
	if c.UsagePath == "" {
		return fmt.Errorf("%w: usage: a usage file path is required", ErrConfig)
	}
	return nil
}

// server is one serving process: the loaded sources and the usage counters.
type server struct {
	cfg   Config
	now   func() time.Time
	ev    *evidence
	store *reviewctx.Store
	ctx   *contextState
	cur   *cursors

	mu    sync.Mutex
	usage Usage
}

// Serve verifies the snapshot (and, in enriched mode, hostile-reads the store and checks its
// run, policy and digest), writes an all-zero usage file, and then serves MCP on in/out until
// the client closes the stream (nil) or ctx ends (ctx.Err()); a broken session (a frame that
// is not JSON-RPC) is an error, and a refused frame (a JSON-RPC batch, a request or response
// frame over maxMessage: frameGuard, frameWriter) ends the session with an error wrapping
// errFrame. Start-up
// refusals wrap ErrConfig.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	s, err := newServer(ctx, cfg)
	if err != nil {
		return err
	}
	guard := &frameGuard{r: in}
	// the guard enforces maxMessage exactly; the SDK's per-decode limit is only a backstop
	wguard := &frameWriter{w: out}
	t := &mcp.IOTransport{Reader: io.NopCloser(guard), Writer: nopWriteCloser{wguard}, MaxLineLength: 2 * maxMessage}
	err = s.mcpServer().Run(ctx, t)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if ferr := guard.refused(); ferr != nil {
		return ferr
	}
	if ferr := wguard.refused(); ferr != nil {
		return ferr
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func newServer(ctx context.Context, cfg Config) (*server, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	snap, rep, err := verify.Load(ctx, cfg.SnapshotDir, verify.Options{IndexSHA256: cfg.IndexSHA256})
	if err != nil {
		return nil, fmt.Errorf("%w: snapshot: %v", ErrConfig, err)
	}
	if snap == nil {
		return nil, fmt.Errorf("%w: snapshot: %v", ErrConfig, &verify.Error{Report: rep})
	}
	ev, err := newEvidence(snap)
	if err != nil {
		return nil, fmt.Errorf("%w: snapshot: %v", ErrConfig, err)
	}
	var meta []byte
	if cfg.MetadataPath != "" {
		if meta, err = readMetadata(cfg.MetadataPath, cfg.MetadataSHA256); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
	}
	if err := ev.applyView(cfg.View, meta); err != nil {
		return nil, fmt.Errorf("%w: snapshot: %v", ErrConfig, err)
	}
	s := &server{cfg: cfg, now: cfg.Now, ev: ev, usage: Usage{SchemaVersion: usageSchema, Mode: cfg.Mode}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.cur, err = newCursors(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if cfg.Mode == ModeEnriched {
		st, err := loadStore(cfg)
		if err != nil {
			return nil, err
		}
		s.store = st
		s.ctx = &contextState{listed: map[string]bool{}}
	}
	if err := writeUsage(cfg.UsagePath, s.usage); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return s, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpServer builds the SDK server with exactly the mode's tools.
func (s *server) mcpServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "forgectx-review", Version: version.String()}, &mcp.ServerOptions{
		Instructions: "Review evidence for one merge request. Call ocr_toolkit_evidence with action summary first.",
	})
	for _, t := range s.tools() {
		srv.AddTool(t.tool, s.handler(t))
	}
	// A call the SDK refuses before any handler runs (an unknown tool name) still counts.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/call" && err != nil {
				s.count(func(u *Usage) { u.Rejected++ })
			}
			return res, err
		}
	})
	return srv
}

// toolDef is one tool: its advertised definition and its implementation, which returns the
// counter to bump and the answer, or a refusal.
type toolDef struct {
	tool *mcp.Tool
	run  func(args json.RawMessage) (counter func(*Usage), answer any, err error)
}

func (s *server) tools() []toolDef {
	ts := []toolDef{
		{evidenceTool, s.evidenceCall},
		{searchTool, s.searchCall},
		{coverageTool, s.coverageCall},
	}
	if s.cfg.Mode == ModeEnriched {
		ts = append(ts, toolDef{contextListTool, s.contextListCall}, toolDef{contextGetTool, s.contextGetCall})
	}
	return ts
}

// handler wraps one tool: refusals become tool errors (IsError) naming the rule; an answer
// over maxMessage is refused; the usage file is replaced after every call.
func (s *server) handler(t toolDef) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		counter, answer, err := t.run(raw)
		var text []byte
		if err == nil {
			text, err = json.Marshal(answer)
			if err == nil && !fits(text) {
				err = refusef("answer", "over the %d-byte response bound", maxMessage)
			}
		}
		if err != nil {
			s.count(func(u *Usage) { u.Rejected++ })
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: refusalText(err)}}}, nil
		}
		s.count(counter)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
	}
}

// envelope is the room kept for the JSON-RPC response around a tool answer's text.
const envelope = 512

// fits reports whether an answer, once embedded as the text of a tool result (a JSON string,
// so every quote, backslash and control character is escaped again), keeps the whole
// response within maxMessage. encoding/json's escaping (HTML characters as \u003c) is the
// most expansive an encoder uses, so the measure is an upper bound.
func fits(answer []byte) bool {
	if len(answer) > maxMessage {
		return false
	}
	wire, err := json.Marshal(string(answer))
	return err == nil && len(wire) <= maxMessage-envelope
}

// count applies one counter change and replaces the usage file. A usage write failure is
// logged nowhere (the server has no log of its own): the run reads the file and a stale or
// missing one fails its summary-call requirement closed.
func (s *server) count(f func(*Usage)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.usage)
	_ = writeUsage(s.cfg.UsagePath, s.usage)
}

// refusal is a tool-call refusal: the argument or rule, never the value.
type refusal struct{ field, rule string }

func (r *refusal) Error() string { return r.field + ": " + r.rule }

func refusef(field, format string, a ...any) error {
	return &refusal{field: field, rule: fmt.Sprintf(format, a...)}
}

func refusalText(err error) string {
	var r *refusal
	if errors.As(err, &r) {
		return "refused: " + r.Error()
	}
	return "refused: internal error"
}

func loadStore(cfg Config) (*reviewctx.Store, error) {
	st, err := reviewctx.LoadStore(cfg.StoreDir, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: store: %v", ErrConfig, err)
	}
	switch {
	case st.Mode != reviewctx.ModeEnriched:
		return nil, fmt.Errorf("%w: store: mode %s, enriched serving needs an enriched store", ErrConfig, st.Mode)
	case st.RunID != cfg.RunID:
		return nil, fmt.Errorf("%w: store: run_id does not match the run id", ErrConfig)
	case st.PolicyDigest != cfg.PolicyDigest:
		return nil, fmt.Errorf("%w: store: policy_digest does not match the policy digest", ErrConfig)
	}
	if cfg.StoreSHA256 != "" {
		sum, err := storeDigest(st)
		if err != nil || sum != cfg.StoreSHA256 {
			return nil, fmt.Errorf("%w: store: content does not match the committed SHA-256", ErrConfig)
		}
	}
	return st, nil
}

// CommandArgs returns the `forgectx mcp` arguments (after the program name) that serve c, for
// the MCP server entry of a generated engine configuration. Empty optional values are left
// out; Now is not representable (the command uses the wall clock).
func (c Config) CommandArgs() []string {
	a := []string{"mcp", "--mode", string(c.Mode), "--snapshot", c.SnapshotDir}
	for _, f := range []struct{ flag, v string }{
		{"--index-sha256", c.IndexSHA256}, {"--store", c.StoreDir}, {"--run-id", c.RunID},
		{"--policy-digest", c.PolicyDigest}, {"--store-sha256", c.StoreSHA256}, {"--view", c.View},
		{"--metadata", c.MetadataPath}, {"--metadata-sha256", c.MetadataSHA256},
	} {
		if f.v != "" {
			a = append(a, f.flag, f.v)
		}
	}
	return append(a, "--usage", c.UsagePath)
}
