package reviewmcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPHostileCursors: a huge, tampered, truncated, cross-tool or past-the-end cursor is
// refused by name, never echoed, and counted as rejected.
func TestMCPHostileCursors(t *testing.T) {
	s := mustStart(t, enrichedConfig(t, testStore(t)))
	ev := s.ok(t, ToolEvidence, `{"action":"list","page_size":1}`)
	evCur := ev["next_cursor"].(string)
	ctxCur := s.list(t, `{"page_size":1}`).Next
	raw, _ := base64.RawURLEncoding.DecodeString(evCur)
	tampered := append([]byte{}, raw...)
	tampered[3] ^= 0x7f // the offset, under an unchanged MAC
	cases := []struct{ tool, args string }{
		{ToolEvidence, `{"action":"list","cursor":"` + strings.Repeat("A", 60000) + `"}`},
		{ToolEvidence, `{"action":"list","cursor":"` + base64.RawURLEncoding.EncodeToString(tampered) + `"}`},
		{ToolEvidence, `{"action":"list","cursor":"` + evCur[:len(evCur)-2] + `"}`},
		{ToolEvidence, `{"action":"list","cursor":"` + evCur + `="}`},
		{ToolEvidence, `{"action":"list","cursor":"` + ctxCur + `"}`},
		{ToolEvidence, `{"action":"list","kind":"check","cursor":"` + evCur + `"}`},
		{ToolContextList, `{"cursor":"` + evCur + `"}`},
		{ToolContextList, `{"cursor":"` + strings.Repeat("ctx1_", 10000) + `"}`},
	}
	for _, tc := range cases {
		text, isErr := s.call(t, tc.tool, tc.args)
		if !isErr || !strings.HasPrefix(text, "refused: cursor:") || len(text) > 200 {
			t.Errorf("%s %.80s: %v %q", tc.tool, tc.args, isErr, text)
		}
	}
	u, err := ReadUsage(s.usage)
	if err != nil || u.Rejected != len(cases) {
		t.Errorf("usage %+v %v", u, err)
	}
}

// TestMCPProtocolLevelHostility: an unknown tool, arguments of the wrong JSON type, and a
// context tool on a constrained server are refused and counted; context calls never satisfy
// the summary-call requirement.
func TestMCPProtocolLevelHostility(t *testing.T) {
	s := mustStart(t, enrichedConfig(t, testStore(t)))
	for _, name := range []string{"shell", "fetch_url", "ocr_toolkit_evidence ", "OCR_TOOLKIT_EVIDENCE", "context_write"} {
		if _, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}); err == nil {
			t.Errorf("unknown tool %q answered", name)
		}
	}
	for _, a := range []any{"summary", 7, []any{"action", "summary"}, true} {
		res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolEvidence, Arguments: a})
		if err == nil && !res.IsError {
			t.Errorf("arguments %v accepted", a)
		}
	}
	s.ok(t, ToolContextList, `{}`)
	h := s.list(t, `{"page_size":1}`).Items[0].Handle
	s.ok(t, ToolContextGet, `{"handle":"`+h+`"}`)
	u, err := ReadUsage(s.usage)
	if err != nil || u.Rejected != 9 || u.ContextList != 2 || u.ContextGet != 1 || u.SummaryCalled() {
		t.Errorf("usage %+v %v", u, err)
	}
}

// TestMCPHandleFromAnotherSession: a handle listed by one server process (or minted for
// another run's store) is refused by a second server of the same store before any record
// access; context_get only accepts handles its own context_list returned.
func TestMCPHandleFromAnotherSession(t *testing.T) {
	st := testStore(t)
	cfg := enrichedConfig(t, st)
	a := mustStart(t, cfg)
	b := mustStart(t, cfg)
	h := a.list(t, `{"page_size":1}`).Items[0].Handle
	a.ok(t, ToolContextGet, `{"handle":"`+h+`"}`)
	if text, isErr := b.call(t, ToolContextGet, `{"handle":"`+h+`"}`); !isErr || !strings.Contains(text, "not listed") {
		t.Errorf("second session accepted a handle it never listed: %v %s", isErr, text)
	}
	other := testStore(t) // another store: fresh handles
	c := mustStart(t, enrichedConfig(t, other))
	c.list(t, `{}`)
	if text, isErr := c.call(t, ToolContextGet, `{"handle":"`+h+`"}`); !isErr || !strings.Contains(text, "not listed") {
		t.Errorf("a handle of another store accepted: %v %s", isErr, text)
	}
}

// TestMCPNoNetworkSubprocessOrWritePath: the package's own code imports no network,
// subprocess or unsafe package (the SDK's transports are not used beyond stdio), so the tools
// cannot reach one.
func TestMCPNoNetworkSubprocessOrWritePath(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	banned := []string{"net", "net/http", "net/url", "os/exec", "unsafe", "syscall/js", "plugin"}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, im := range pf.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			for _, b := range banned {
				if p == b {
					t.Errorf("%s imports %s", f, p)
				}
			}
		}
	}
	if n < 5 {
		t.Fatalf("parsed %d files", n)
	}
	// the tool set is closed: no definition takes a URL, path or command argument
	for _, mode := range []Mode{ModeConstrained, ModeEnriched} {
		s := &server{cfg: Config{Mode: mode}}
		for _, td := range s.tools() {
			b, _ := json.Marshal(td.tool.InputSchema)
			for _, w := range []string{`"url"`, `"path"`, `"command"`, `"file"`, `"write"`} {
				if strings.Contains(string(b), w) {
					t.Errorf("%s takes %s", td.tool.Name, w)
				}
			}
		}
	}
}

// TestMCPCoverageAdmissionStates: a rejected record (no content) makes absence unknown even
// where the snapshot carries no gap for its scope, and a redacted (modified) record does so
// for a literal query, whose match the redaction could have removed; an unchanged scope
// stays authoritative.
func TestMCPCoverageAdmissionStates(t *testing.T) {
	mk := func(filter string) *server {
		it := &item{ID: "rec_a", Kind: kindComment, Filter: filter, content: "some text"}
		it.index()
		return &server{ev: &evidence{items: []*item{it}, byID: map[string]*item{it.ID: it}, included: map[string]bool{"comments": true}, checkLogSelection: "all"}}
	}
	for _, tc := range []struct {
		filter, args, state, reasons string
	}{
		{"unchanged", `{"kind":"comment","scope":"comments","query":"absent-token"}`, "absent", "[]"},
		{"rejected", `{"kind":"comment","scope":"comments","query":"absent-token"}`, "unknown", "[admission_rejected]"},
		{"modified", `{"kind":"comment","scope":"comments","query":"absent-token"}`, "unknown", "[admission_modified]"},
		{"modified", `{"kind":"review","scope":"reviews"}`, "unknown", "[scope_not_selected]"},
		{"truncated", `{"kind":"comment","scope":"comments","query":"absent-token"}`, "unknown", "[admission_truncated]"},
	} {
		_, ans, err := mk(tc.filter).coverageCall(json.RawMessage(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		m := ans.(map[string]any)
		if m["state"] != tc.state || m["absence_authoritative"] != (tc.state == "absent") || fmt.Sprint(m["reasons"]) != tc.reasons {
			t.Errorf("%s %s: %v", tc.filter, tc.args, m)
		}
	}
}
