package reviewmcp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/test/verifytest"
)

// Context texts the tests look for in answers.
const (
	issueText  = "DEMO-42: the rollout must keep the retry budget below five attempts"
	hiddenText = "internal-only state that the model projection excludes"
	rootText   = "Earlier finding: the retry loop never stops"
)

func record(t *testing.T, source, class string, model []string, c reviewctx.Content, exp time.Time) reviewctx.Record {
	t.Helper()
	h, err := reviewctx.NewHandle()
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Digest()
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"descriptor", "state", "text"}
	return reviewctx.Record{Handle: h, Source: source, Binding: reviewctx.Binding{
		RunID: testRun, PolicyDigest: testPolicy, Adapter: "tracker", Tenant: "engineering",
		CanonicalObject: "tracker/" + class + "/" + h[5:12], ResourceClass: class,
		Projections: reviewctx.Projections{Retrieve: all, Model: model, Publish: []string{}, Retain: []string{}},
		Version:     "1", Digest: d, ExpiresAt: exp.Format(time.RFC3339),
	}, Content: c}
}

// testStore has 23 issue records (two pages of 20), one whose record expired, one
// remediation thread and one CI outcome.
func testStore(t *testing.T) *reviewctx.Store {
	t.Helper()
	exp := testNow.Add(2 * time.Hour)
	st := &reviewctx.Store{
		SchemaVersion: reviewctx.StoreSchema, RunID: testRun, Mode: reviewctx.ModeEnriched, PolicyDigest: testPolicy,
		PolicySHA: strings.Repeat("1", 40), ReviewedHead: strings.Repeat("2", 40),
		CreatedAt: testNow.Add(-time.Hour).Format(time.RFC3339), ExpiresAt: exp.Format(time.RFC3339),
		Sources: []reviewctx.SourceState{
			{Source: reviewctx.SourceReferences, Completeness: reviewctx.Complete, Records: 23, Reasons: []string{}},
			{Source: reviewctx.SourceRemediation, Completeness: reviewctx.Partial, Records: 1, Omitted: 1, Reasons: []string{"reply_bound"}},
			{Source: reviewctx.SourceCI, Required: true, Completeness: reviewctx.Complete, Records: 1, Reasons: []string{}},
		},
	}
	model := []string{"descriptor", "text"}
	for i := range 22 {
		c := reviewctx.Content{Descriptor: fmt.Sprintf("issue DEMO-%d", 40+i), State: hiddenText, Text: fmt.Sprintf("%s (%d)", issueText, i)}
		st.Records = append(st.Records, record(t, reviewctx.SourceReferences, reviewctx.ResourceIssue, model, c, exp))
	}
	expired := record(t, reviewctx.SourceReferences, reviewctx.ResourceIssue, model, reviewctx.Content{Descriptor: "expired", Text: "old"}, testNow.Add(-time.Minute))
	st.Records = append(st.Records, expired)
	th := &reviewctx.Thread{Fingerprint: strings.Repeat("f", 64), Root: rootText, AnchorState: "current",
		Replies: []reviewctx.Reply{{Author: "participant-1", Class: "user", Text: "fixed in the next commit"}}, Completeness: reviewctx.Partial, ReplyCount: 2, OmittedReplies: 1}
	st.Records = append(st.Records, record(t, reviewctx.SourceRemediation, reviewctx.ResourceRemediation, nil, reviewctx.Content{Thread: th}, exp))
	ci := &reviewctx.CIRecord{Check: "unit", PathPrefixes: []string{"pkg/"}, ReviewedHead: strings.Repeat("2", 40), Status: "passed",
		Classification: "required", Provenance: "current_pipeline", CompletedAt: testNow.Add(-30 * time.Minute).Format(time.RFC3339)}
	st.Records = append(st.Records, record(t, reviewctx.SourceCI, "ci_outcome", nil, reviewctx.Content{CI: ci}, exp))
	return st
}

func commitTestStore(t *testing.T, st *reviewctx.Store) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ctx")
	if _, err := reviewctx.CommitStore(dir, st); err != nil {
		t.Fatal(err)
	}
	return dir
}

func enrichedConfig(t *testing.T, st *reviewctx.Store) Config {
	dir := commitTestStore(t, st)
	sum, err := storeDigest(st)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Mode: ModeEnriched, SnapshotDir: verifytest.Write(t, verifytest.Demo), StoreDir: dir, RunID: testRun,
		PolicyDigest: testPolicy, StoreSHA256: sum, Now: func() time.Time { return testNow }}
}

type listAnswer struct {
	Items   []contextItem `json:"items"`
	Sources []sourceView  `json:"sources"`
	Next    string        `json:"next_cursor"`
	Total   int           `json:"total"`
}

func (s *session) list(t *testing.T, args string) listAnswer {
	t.Helper()
	text, isErr := s.call(t, ToolContextList, args)
	if isErr {
		t.Fatalf("context_list %s: %s", args, text)
	}
	var a listAnswer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestContextListAndGet(t *testing.T) {
	st := testStore(t)
	s := mustStart(t, enrichedConfig(t, st))
	all := s.list(t, `{}`)
	if all.Total != 24 || len(all.Items) != 20 || all.Next == "" {
		t.Fatalf("first page total=%d items=%d next=%q", all.Total, len(all.Items), all.Next)
	}
	if len(all.Sources) != 3 || all.Sources[1].Completeness != "partial" || all.Sources[1].Reasons[0] != "reply_bound" {
		t.Errorf("sources %+v", all.Sources)
	}
	rest := s.list(t, `{"cursor":"`+all.Next+`"}`)
	if len(rest.Items) != 4 || rest.Next != "" {
		t.Errorf("second page %d items next %q", len(rest.Items), rest.Next)
	}
	for _, it := range append(all.Items, rest.Items...) {
		if it.Descriptor == "expired" {
			t.Error("an expired record was listed")
		}
		if strings.Contains(it.Descriptor, hiddenText) || strings.Contains(it.Descriptor, issueText) {
			t.Errorf("descriptor leaks record text: %q", it.Descriptor)
		}
	}
	ci := s.list(t, `{"resource_class":"ci_outcome"}`)
	if len(ci.Items) != 1 || ci.Items[0].Descriptor != "CI outcome: unit" {
		t.Errorf("ci filter %+v", ci.Items)
	}
	rem := s.list(t, `{"source":"remediation_threads","page_size":1}`)
	if len(rem.Items) != 1 || rem.Items[0].ResourceClass != "remediation_thread" {
		t.Errorf("source filter %+v", rem.Items)
	}
}

func TestContextGetModelProjection(t *testing.T) {
	s := mustStart(t, enrichedConfig(t, testStore(t)))
	all := s.list(t, `{"resource_class":"issue"}`)
	rem := s.list(t, `{"resource_class":"remediation_thread"}`)
	// context_get returns exactly the model projection
	text, isErr := s.call(t, ToolContextGet, `{"handle":"`+all.Items[0].Handle+`"}`)
	if isErr || !strings.Contains(text, issueText) || strings.Contains(text, hiddenText) {
		t.Errorf("context_get: %v %s", isErr, text)
	}
	text, isErr = s.call(t, ToolContextGet, `{"handle":"`+rem.Items[0].Handle+`"}`)
	if isErr || !strings.Contains(text, rootText) || !strings.Contains(text, "participant-1") {
		t.Errorf("remediation get: %v %s", isErr, text)
	}
	u, err := ReadUsage(s.usage)
	if err != nil || u.ContextList != 2 || u.ContextGet != 2 || u.EvidenceSummary != 0 || u.SummaryCalled() {
		t.Errorf("usage %+v %v: context calls must not count as evidence", u, err)
	}
}

// TestContextHandleRefusals: invalid, non-minted, unlisted, expired, wrong-run and
// wrong-policy handles all fail before record access, and refusals never echo a value.
func TestContextHandleRefusals(t *testing.T) {
	st := testStore(t)
	cfg := enrichedConfig(t, st)
	now := testNow
	cfg.Now = func() time.Time { return now }
	s := mustStart(t, cfg)
	listed := s.list(t, `{"resource_class":"issue","page_size":1}`).Items[0].Handle
	unlisted := st.Records[21].Handle
	foreign, _ := reviewctx.NewHandle()
	for _, tc := range []struct{ args, want string }{
		{`{}`, "handle: required"},
		{`{"handle":"SECRETVALUE"}`, "handle: not a ctx1_ handle"},
		{`{"handle":"ctx1_SECRETVALUE"}`, "handle: not a ctx1_ handle"},
		{`{"handle":"` + listed + `","handle":"` + listed + `"}`, "handle: duplicate field"},
		{`{"handle":["` + listed + `"]}`, "handle: must be a string"},
		{`{"handle":"` + listed + `","extra":"SECRETVALUE"}`, "arguments: unknown field"},
		{`{"handle":"` + foreign + `"}`, "not listed"},
		{`{"handle":"` + unlisted + `"}`, "not listed"},
		{`{"handle":"https://evil.example/SECRETVALUE"}`, "not a ctx1_ handle"},
	} {
		text, isErr := s.call(t, ToolContextGet, tc.args)
		if !isErr || !strings.Contains(text, tc.want) || strings.Contains(text, "SECRETVALUE") || strings.Contains(text, issueText) {
			t.Errorf("%s: %v %q, want %q", tc.args, isErr, text, tc.want)
		}
	}
	for _, tc := range []struct{ args, want string }{
		{`{"resource_class":"discussion"}`, "resource_class: must be one of"},
		{`{"source":"SECRETVALUE"}`, "source: not an admitted source"},
		{`{"page_size":21}`, "page_size: must be 1..20"},
		{`{"page_size":0}`, "page_size: must be 1..20"},
		{`{"cursor":"SECRETVALUE"}`, "cursor: not a cursor"},
		{`{"url":"https://evil.example"}`, "arguments: unknown field"},
	} {
		text, isErr := s.call(t, ToolContextList, tc.args)
		if !isErr || !strings.Contains(text, tc.want) || strings.Contains(text, "SECRETVALUE") {
			t.Errorf("context_list %s: %v %q, want %q", tc.args, isErr, text, tc.want)
		}
	}
	// a cursor minted for one filter is refused for another
	page := s.list(t, `{"resource_class":"issue","page_size":2}`)
	if text, isErr := s.call(t, ToolContextList, `{"resource_class":"document","cursor":"`+page.Next+`"}`); !isErr || !strings.Contains(text, "cursor") {
		t.Errorf("cross-query cursor accepted: %s", text)
	}
	// expiry: the listed handle fails once the clock passes the store expiry
	now = testNow.Add(3 * time.Hour)
	if text, isErr := s.call(t, ToolContextGet, `{"handle":"`+listed+`"}`); !isErr || !strings.Contains(text, "expired") {
		t.Errorf("expired handle: %v %s", isErr, text)
	}
	if text, isErr := s.call(t, ToolContextList, `{}`); !isErr || !strings.Contains(text, "expired") {
		t.Errorf("expired store listed: %v %s", isErr, text)
	}
}

// TestContextGetWrongRunOrPolicy drives the in-process server whose configured run/policy
// differ from the handle's binding (Serve itself refuses such a store at start-up).
func TestContextGetWrongRunOrPolicy(t *testing.T) {
	st := testStore(t)
	h := st.Records[0].Handle
	for _, cfg := range []Config{{RunID: "other-run", PolicyDigest: testPolicy}, {RunID: testRun, PolicyDigest: strings.Repeat("cd", 32)}} {
		s := &server{cfg: cfg, now: func() time.Time { return testNow }, store: st, ctx: &contextState{listed: map[string]bool{h: true}}}
		_, _, err := s.contextGetCall(json.RawMessage(`{"handle":"` + h + `"}`))
		if err == nil || !strings.Contains(err.Error(), "wrong") {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}
