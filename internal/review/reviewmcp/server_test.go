package reviewmcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgectx/forgectx/test/verifytest"
)

var testNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const testRun = "0123456789abcdef0123456789abcdef"

var testPolicy = strings.Repeat("ab", 32)

// session is one running Serve with a go-sdk client connected over two pipes (the stdio
// framing Serve uses in production).
type session struct {
	cs    *mcp.ClientSession
	usage string
	done  chan error
	inW   *io.PipeWriter
}

func (s *session) close(t *testing.T) error {
	t.Helper()
	s.cs.Close()
	s.inW.Close()
	select {
	case err := <-s.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the client closed")
		return nil
	}
}

func startServe(t *testing.T, cfg Config, version string) (*session, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if cfg.UsagePath == "" {
		cfg.UsagePath = filepath.Join(t.TempDir(), "usage.json")
	}
	if _, err := newServer(ctx, cfg); err != nil {
		return nil, err
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{usage: cfg.UsagePath, done: make(chan error, 1), inW: inW}
	go func() {
		err := Serve(ctx, cfg, inR, outW)
		outW.Close()
		s.done <- err
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-engine", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	s.cs = cs
	t.Cleanup(func() { cs.Close(); inW.Close() })
	return s, nil
}

func constrainedConfig(t *testing.T, tree string) Config {
	return Config{Mode: ModeConstrained, SnapshotDir: verifytest.Write(t, tree), Now: func() time.Time { return testNow }}
}

func mustStart(t *testing.T, cfg Config) *session {
	t.Helper()
	s, err := startServe(t, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call invokes a tool with raw JSON arguments and returns the text and the error flag.
func (s *session) call(t *testing.T, name, args string) (string, bool) {
	t.Helper()
	var a any
	if args != "" {
		a = json.RawMessage(args)
	}
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: a})
	if err != nil {
		t.Fatalf("%s %s: protocol error %v", name, args, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items", name, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func (s *session) ok(t *testing.T, name, args string) map[string]any {
	t.Helper()
	text, isErr := s.call(t, name, args)
	if isErr {
		t.Fatalf("%s %s: refused: %s", name, args, text)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%s: answer is not JSON: %v", name, err)
	}
	return m
}

func toolNames(t *testing.T, s *session) []string {
	t.Helper()
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func TestToolListsAreExactPerMode(t *testing.T) {
	c := mustStart(t, constrainedConfig(t, verifytest.Demo))
	if got, want := toolNames(t, c), []string{"ocr_toolkit_evidence", "ocr_toolkit_evidence_coverage", "ocr_toolkit_evidence_search"}; !slices.Equal(got, want) {
		t.Errorf("constrained tools %v, want %v", got, want)
	}
	e := mustStart(t, enrichedConfig(t, testStore(t)))
	if got, want := toolNames(t, e), []string{"context_get", "context_list", "ocr_toolkit_evidence", "ocr_toolkit_evidence_coverage", "ocr_toolkit_evidence_search"}; !slices.Equal(got, want) {
		t.Errorf("enriched tools %v, want %v", got, want)
	}
	// a constrained server refuses the context tools as unknown (protocol error), counted
	if _, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolContextList}); err == nil {
		t.Error("constrained server answered context_list")
	}
	u, err := ReadUsage(c.usage)
	if err != nil || u.Rejected != 1 || u.ContextList != 0 {
		t.Errorf("usage after unknown tool: %+v %v", u, err)
	}
}

func TestProtocolVersionsNegotiated(t *testing.T) {
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		s, err := startServe(t, constrainedConfig(t, verifytest.Demo), v)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.cs.InitializeResult().ProtocolVersion; got != v {
			t.Errorf("requested %s, negotiated %s", v, got)
		}
		m := s.ok(t, ToolEvidence, `{"action":"summary"}`)
		if m["entity_kind"] != "change_proposal" {
			t.Errorf("%s: summary %v", v, m)
		}
		if err := s.close(t); err != nil {
			t.Errorf("%s: Serve: %v", v, err)
		}
	}
}

func TestEvidenceSummaryListGet(t *testing.T) {
	s := mustStart(t, constrainedConfig(t, verifytest.Demo))
	sum := s.ok(t, ToolEvidence, `{"action":"summary"}`)
	items := sum["items"].(map[string]any)
	if items["comment"].(float64) == 0 || items["thread"].(float64) == 0 || items["check"].(float64) != 4 {
		t.Errorf("summary items %v", items)
	}
	if gaps := sum["gaps"].([]any); len(gaps) != 1 {
		t.Errorf("summary gaps %v", gaps)
	}
	// page through every comment with cursors; IDs are stable and unique
	seen := map[string]bool{}
	args := `{"action":"list","kind":"comment","page_size":3}`
	for pages := 0; ; pages++ {
		m := s.ok(t, ToolEvidence, args)
		for _, it := range m["items"].([]any) {
			id := it.(map[string]any)["id"].(string)
			if seen[id] || !strings.HasPrefix(id, "rec_") {
				t.Fatalf("id %q repeated or malformed", id)
			}
			seen[id] = true
		}
		cur, ok := m["next_cursor"].(string)
		if !ok {
			break
		}
		args = `{"action":"list","kind":"comment","page_size":3,"cursor":"` + cur + `"}`
		if pages > 10 {
			t.Fatal("cursor does not advance")
		}
	}
	if float64(len(seen)) != items["comment"].(float64) {
		t.Errorf("listed %d comments, summary says %v", len(seen), items["comment"])
	}
	var id string
	for k := range seen {
		id = k
		break
	}
	doc := s.ok(t, ToolEvidence, `{"action":"get","id":"doc_collection"}`)
	if c, _ := doc["content"].(string); !strings.Contains(c, `"included_sources"`) {
		t.Errorf("document content %q", c)
	}
	g := s.ok(t, ToolEvidence, `{"action":"get","id":"`+id+`"}`)
	if c, _ := g["content"].(string); !strings.Contains(c, "Fullsend-Record:") {
		t.Errorf("get content %q", c)
	}
	u, err := ReadUsage(s.usage)
	if err != nil || u.EvidenceSummary != 1 || u.EvidenceGet != 2 || u.EvidenceList < 2 || u.Rejected != 0 || !u.SummaryCalled() {
		t.Errorf("usage %+v %v", u, err)
	}
	fi, err := os.Stat(s.usage)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("usage file mode %v %v", fi.Mode(), err)
	}
}

func TestEvidenceSearchNeverEchoes(t *testing.T) {
	s := mustStart(t, constrainedConfig(t, verifytest.Demo))
	text, isErr := s.call(t, toolEvidenceSearch, `{"query":"backoff CAP"}`)
	if isErr {
		t.Fatal(text)
	}
	var m struct {
		Matches []itemView `json:"matches"`
		Total   int        `json:"total_matches"`
	}
	if err := json.Unmarshal([]byte(text), &m); err != nil || m.Total == 0 || len(m.Matches) != m.Total {
		t.Fatalf("search %s %v", text, err)
	}
	if strings.Contains(strings.ToLower(text), "backoff") || strings.Contains(text, "cap") {
		t.Errorf("search answer echoes the query or a matched value: %s", text)
	}
	one := s.ok(t, toolEvidenceSearch, `{"query":"backoff","limit":1}`)
	if one["truncated"] != true || len(one["matches"].([]any)) != 1 {
		t.Errorf("bounded search %v", one)
	}
	none := s.ok(t, toolEvidenceSearch, `{"query":"zq-no-such-token-zq"}`)
	if none["total_matches"].(float64) != 0 {
		t.Errorf("no-match search %v", none)
	}
}

func TestEvidenceCoverageRules(t *testing.T) {
	demo := mustStart(t, constrainedConfig(t, verifytest.Demo))
	bounds := mustStart(t, Config{Mode: ModeConstrained, SnapshotDir: copyGolden(t, "bounds-hit")})
	work := mustStart(t, Config{Mode: ModeConstrained, SnapshotDir: copyGolden(t, "work-item")})
	for _, tc := range []struct {
		name    string
		s       *session
		args    string
		state   string
		reasons []any
	}{
		{"complete exact scope, zero matches", demo, `{"kind":"review","scope":"reviews","query":"zq-no-such-token-zq"}`, "absent", []any{}},
		{"a match is present", demo, `{"kind":"review","scope":"reviews"}`, "present", []any{}},
		{"broad scope", demo, `{"kind":"review","query":"zq-no-such-token-zq"}`, "unknown", []any{"broad_scope"}},
		{"all is broad", demo, `{"kind":"review","scope":"all","query":"zq-no-such-token-zq"}`, "unknown", []any{"broad_scope"}},
		{"mismatched scope", demo, `{"kind":"review","scope":"comments","query":"zq-no-such-token-zq"}`, "unknown", []any{"mismatched_scope"}},
		{"unusable scope", demo, `{"kind":"comment","scope":"comments","query":"zq-no-such-token-zq"}`, "unknown", []any{"admission_modified", "unusable_scope"}},
		{"selective check logs", demo, `{"kind":"check_log","scope":"check_logs","query":"zq-no-such-token-zq"}`, "unknown", []any{"admission_modified", "selective_logs"}},
		{"partial scope and truncation", bounds, `{"kind":"comment","scope":"comments","query":"zq-no-such-token-zq"}`, "unknown", []any{"admission_truncated", "partial_scope"}},
		{"scope not selected", work, `{"kind":"check","scope":"checks"}`, "unknown", []any{"scope_not_selected"}},
	} {
		m := tc.s.ok(t, toolEvidenceCoverage, tc.args)
		if m["state"] != tc.state || m["absence_authoritative"] != (tc.state == "absent") {
			t.Errorf("%s: %v", tc.name, m)
		}
		if tc.state != "present" && !slices.Equal(m["reasons"].([]any), tc.reasons) {
			t.Errorf("%s: reasons %v, want %v", tc.name, m["reasons"], tc.reasons)
		}
	}
}

func copyGolden(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "test", "golden", "snapshot", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestHostileEvidenceArguments: every malformed argument is a tool error naming the field or
// rule, never echoing the value, and counts as rejected.
func TestHostileEvidenceArguments(t *testing.T) {
	s := mustStart(t, constrainedConfig(t, verifytest.Demo))
	const secret = "SECRETVALUE"
	cases := []struct{ tool, args, want string }{
		{ToolEvidence, `{}`, "action"},
		{ToolEvidence, `{"action":"SECRETVALUE"}`, "action: must be one of"},
		{ToolEvidence, `{"action":"summary","action":"list"}`, "action: duplicate field"},
		{ToolEvidence, `{"action":"summary","SECRETVALUE":1}`, "arguments: unknown field"},
		{ToolEvidence, `{"action":"summary","id":"x"}`, "id: not an argument of action summary"},
		{ToolEvidence, `{"action":"get","id":"../../../etc/passwd SECRETVALUE"}`, "id: not an evidence item ID"},
		{ToolEvidence, `{"action":"get","id":"rec_SECRETVALUE"}`, "id: not an evidence item ID"},
		{ToolEvidence, `{"action":"get","id":"rec_secretvalue"}`, "id: not an item of this snapshot"},
		{ToolEvidence, `{"action":"get"}`, "id: required"},
		{ToolEvidence, `{"action":"list","page_size":0}`, "page_size: must be 1..50"},
		{ToolEvidence, `{"action":"list","page_size":1.5}`, "page_size: must be an integer"},
		{ToolEvidence, `{"action":"list","page_size":"2"}`, "page_size: must be an integer"},
		{ToolEvidence, `{"action":"list","cursor":"SECRETVALUE"}`, "cursor: not a cursor"},
		{ToolEvidence, `{"action":"list","kind":"SECRETVALUE"}`, "kind: must be one of"},
		{ToolEvidence, `["summary"]`, "arguments: must be a JSON object"},
		{ToolEvidence, `{"action":{"x":1}}`, "action: must be a string"},
		{toolEvidenceSearch, `{}`, "query: required"},
		{toolEvidenceSearch, `{"query":""}`, "query: must be 1..128"},
		{toolEvidenceSearch, `{"query":"` + strings.Repeat("SECRETVALUE", 12) + `"}`, "query: must be 1..128"},
		{toolEvidenceSearch, `{"query":"a b c d e f g h SECRETVALUE"}`, "query: must have 1..8"},
		{toolEvidenceSearch, `{"query":"SECRET\u202eVALUE"}`, "query: control or format"},
		{toolEvidenceSearch, `{"query":"SECRET\u0000VALUE"}`, "query: control or format"},
		{toolEvidenceSearch, `{"query":"x","limit":21}`, "limit: must be 1..20"},
		{toolEvidenceCoverage, `{}`, "kind: required"},
		{toolEvidenceCoverage, `{"kind":"thread"}`, "kind: must be one of"},
		{toolEvidenceCoverage, `{"kind":"comment","scope":"SECRETVALUE"}`, "scope: must be one of"},
	}
	for _, tc := range cases {
		text, isErr := s.call(t, tc.tool, tc.args)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s %s: got %v %q, want refusal %q", tc.tool, tc.args, isErr, text, tc.want)
		}
		if strings.Contains(strings.ToUpper(text), secret) || strings.Contains(text, "passwd") {
			t.Errorf("%s %s: refusal echoes the value: %q", tc.tool, tc.args, text)
		}
	}
	u, err := ReadUsage(s.usage)
	if err != nil || u.Rejected != len(cases) || u.EvidenceSummary+u.EvidenceList+u.EvidenceGet+u.EvidenceSearch+u.EvidenceCoverage != 0 {
		t.Errorf("usage %+v %v", u, err)
	}
}

func TestOversizedFrameEndsSession(t *testing.T) {
	cfg := constrainedConfig(t, verifytest.Demo)
	cfg.UsagePath = filepath.Join(t.TempDir(), "usage.json")
	inR, inW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), cfg, inR, io.Discard) }()
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", maxMessage) + `"}}` + "\n"
	go func() { inW.Write([]byte(big)); inW.Close() }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Serve accepted an oversized frame")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end on an oversized frame")
	}
}

func TestStartupRefusals(t *testing.T) {
	demo := verifytest.Write(t, verifytest.Demo)
	tampered := verifytest.Write(t, verifytest.Demo)
	p := filepath.Join(tampered, "collection.json")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, append(b, ' '), 0o644)
	st := testStore(t)
	storeDir := commitTestStore(t, st)
	usage := filepath.Join(t.TempDir(), "u.json")
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"bad mode", Config{Mode: "open", SnapshotDir: demo, UsagePath: usage}, "mode"},
		{"no snapshot", Config{Mode: ModeConstrained, UsagePath: usage}, "snapshot"},
		{"no usage", Config{Mode: ModeConstrained, SnapshotDir: demo}, "usage"},
		{"tampered snapshot", Config{Mode: ModeConstrained, SnapshotDir: tampered, UsagePath: usage}, "snapshot verification failed"},
		{"wrong index digest", Config{Mode: ModeConstrained, SnapshotDir: demo, IndexSHA256: strings.Repeat("0", 64), UsagePath: usage}, "index_digest_mismatch"},
		{"constrained with store", Config{Mode: ModeConstrained, SnapshotDir: demo, StoreDir: storeDir, UsagePath: usage}, "takes no store"},
		{"enriched without run", Config{Mode: ModeEnriched, SnapshotDir: demo, StoreDir: storeDir, PolicyDigest: testPolicy, UsagePath: usage}, "needs"},
		{"wrong run", Config{Mode: ModeEnriched, SnapshotDir: demo, StoreDir: storeDir, RunID: "other", PolicyDigest: testPolicy, UsagePath: usage}, "run_id"},
		{"wrong policy", Config{Mode: ModeEnriched, SnapshotDir: demo, StoreDir: storeDir, RunID: testRun, PolicyDigest: strings.Repeat("cd", 32), UsagePath: usage}, "policy_digest"},
		{"wrong store digest", Config{Mode: ModeEnriched, SnapshotDir: demo, StoreDir: storeDir, RunID: testRun, PolicyDigest: testPolicy, StoreSHA256: strings.Repeat("0", 64), UsagePath: usage}, "SHA-256"},
		{"missing store", Config{Mode: ModeEnriched, SnapshotDir: demo, StoreDir: filepath.Join(t.TempDir(), "none"), RunID: testRun, PolicyDigest: testPolicy, UsagePath: usage}, "store"},
	} {
		err := Serve(context.Background(), tc.cfg, strings.NewReader(""), io.Discard)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrConfig naming %q", tc.name, err, tc.want)
		}
	}
	if _, err := os.Stat(usage); err == nil {
		t.Error("a refused start wrote the usage file")
	}
}

func TestReadUsageStrict(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "u.json")
	if err := writeUsage(good, Usage{SchemaVersion: usageSchema, Mode: ModeEnriched, EvidenceSummary: 2, ContextGet: 1}); err != nil {
		t.Fatal(err)
	}
	if u, err := ReadUsage(good); err != nil || u.EvidenceSummary != 2 || u.ContextGet != 1 {
		t.Fatalf("%+v %v", u, err)
	}
	for name, body := range map[string]string{
		"unknown field":          `{"schema_version":"forgectx.mcp-usage/v1","mode":"enriched","extra":1}`,
		"wrong schema":           `{"schema_version":"forgectx.mcp-usage/v0","mode":"enriched"}`,
		"negative":               `{"schema_version":"forgectx.mcp-usage/v1","mode":"enriched","rejected":-1}`,
		"context in constrained": `{"schema_version":"forgectx.mcp-usage/v1","mode":"constrained","context_get":1}`,
		"trailing":               `{"schema_version":"forgectx.mcp-usage/v1","mode":"enriched"} {}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := ReadUsage(p); !errors.Is(err, errUsage) {
			t.Errorf("%s: accepted", name)
		}
	}
	loose := filepath.Join(dir, "loose")
	os.WriteFile(loose, []byte(`{"schema_version":"forgectx.mcp-usage/v1","mode":"enriched"}`), 0o644)
	if _, err := ReadUsage(loose); err == nil {
		t.Error("accepted a 0644 usage file")
	}
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	if _, err := ReadUsage(link); err == nil {
		t.Error("followed a symlink")
	}
}

// TestGetPagesWithinResponseBound: a large item full of characters that expand under JSON
// escaping (twice: the answer, then the tool result text) is paged so that every answer fits
// maxMessage, and the pages concatenate to the verified content.
func TestGetPagesWithinResponseBound(t *testing.T) {
	content := strings.Repeat("\"<&>\\\n\u00e9\u4e16 plain text ", 20000)
	it := &item{ID: "rec_big", Kind: kindComment, content: content, metadata: json.RawMessage(`{"a":"` + strings.Repeat("\\\"", 100) + `"}`)}
	s := &server{ev: &evidence{byID: map[string]*item{it.ID: it}}}
	var got strings.Builder
	off := 0
	for pages := 0; ; pages++ {
		ans, err := s.get(args{"id": it.ID, "offset": int64(off)})
		if err != nil {
			t.Fatal(err)
		}
		b := ans.(json.RawMessage)
		wrapped, _ := json.Marshal(string(b))
		if len(wrapped)+envelope > maxMessage {
			t.Fatalf("page %d: %d bytes on the wire", pages, len(wrapped))
		}
		var page struct {
			Content string `json:"content"`
			Next    *int   `json:"next_offset"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		got.WriteString(page.Content)
		if page.Next == nil {
			break
		}
		if *page.Next <= off || pages > 1000 {
			t.Fatal("no progress")
		}
		off = *page.Next
	}
	if got.String() != content {
		t.Fatal("pages do not reassemble the content")
	}
	if _, err := s.get(args{"id": it.ID, "offset": int64(1)}); err != nil {
		t.Fatal(err) // offset 1 is a boundary ('"' is one byte)
	}
	i := strings.Index(content, "\u00e9") + 1
	if _, err := s.get(args{"id": it.ID, "offset": int64(i)}); err == nil || !strings.Contains(err.Error(), "offset: not at a character boundary") {
		t.Errorf("mid-character offset: %v", err)
	}
	if _, err := s.get(args{"id": it.ID, "offset": int64(len(content) + 1)}); err == nil {
		t.Error("offset past the end accepted")
	}
}

// TestConcurrentCallsCountExactly: calls the SDK may run concurrently are all counted, and
// the usage file is never torn.
func TestConcurrentCallsCountExactly(t *testing.T) {
	s := mustStart(t, enrichedConfig(t, testStore(t)))
	const n = 8
	errs := make(chan error, 3*n)
	for range n {
		go func() {
			for _, c := range []struct{ name, args string }{{ToolEvidence, `{"action":"summary"}`}, {toolEvidenceSearch, `{"query":"backoff"}`}, {ToolContextList, `{}`}} {
				res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.name, Arguments: json.RawMessage(c.args)})
				if err == nil && res.IsError {
					err = errors.New(c.name + " refused")
				}
				errs <- err
			}
		}()
	}
	for range 3 * n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	u, err := ReadUsage(s.usage)
	if err != nil || u.EvidenceSummary != n || u.EvidenceSearch != n || u.ContextList != n || u.Rejected != 0 {
		t.Errorf("usage %+v %v", u, err)
	}
}
