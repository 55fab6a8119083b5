package reviewctx

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/test/httpfake"
)

const (
	fxHead   = "8e0b45049b6253b8984cde9241830d2851168142"
	fxTarget = "dd692733bb84bc3e9e862e66c099daec2fa00c83"
	fxBlob   = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	api      = "/api/v4/projects/42"
)

var fxNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func fx(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "gitlab", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fxEdit decodes a fixture, applies f and re-encodes it.
func fxEdit(t testing.TB, name string, f func(v any) any) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(fx(t, name), &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(f(v))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// page is a list reply with GitLab's offset pagination headers.
func page(body []byte, pageNo, next int) httpfake.Reply {
	r := httpfake.JSON(200, body)
	r.Header.Set("X-Page", strconv.Itoa(pageNo))
	r.Header.Set("X-Per-Page", "100")
	if next > 0 {
		r.Header.Set("X-Next-Page", strconv.Itoa(next))
	}
	return r
}

func concatLists(t testing.TB, lists ...[]byte) []byte {
	var all []json.RawMessage
	for _, l := range lists {
		var x []json.RawMessage
		if err := json.Unmarshal(l, &x); err != nil {
			t.Fatal(err)
		}
		all = append(all, x...)
	}
	b, _ := json.Marshal(all)
	return b
}

// mrWithDEMO is the merge request whose description references DEMO-7.
func mrWithDEMO(t testing.TB) []byte {
	return fxEdit(t, "merge_request", func(v any) any {
		m := v.(map[string]any)
		m["description"] = m["description"].(string) + "Tracks DEMO-7.\r\n"
		return m
	})
}

type fakeGL struct {
	*httpfake.Server
	t testing.TB
}

func newFakeGL(t testing.TB) *fakeGL { return &fakeGL{Server: httpfake.New(t), t: t} }

func (f *fakeGL) edge(t testing.TB) *GitLab {
	g, err := NewGitLab(GitLabOptions{APIURL: f.URL + "/api/v4", Token: "glpat-test", RetryMax: -1}, "42", 7, func() time.Time { return fxNow })
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (f *fakeGL) target(mr []byte, reads int) {
	replies := make([]httpfake.Reply, reads)
	for i := range replies {
		replies[i] = httpfake.JSON(200, mr)
	}
	f.Expect("GET", api+"/merge_requests/7", replies...)
	f.Expect("GET", api+"/repository/branches/main", httpfake.JSON(200, fx(f.t, "branch_main")))
}

func (f *fakeGL) policy(doc []byte) {
	f.Expect("GET", api+"/repository/tree?page=1&path=.opencodereview&per_page=100&ref="+fxTarget, page(fx(f.t, "tree_opencodereview"), 1, 0))
	f.Expect("GET", api+"/repository/blobs/"+fxBlob+"/raw", httpfake.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: doc})
}

func (f *fakeGL) discussions(p1, p2 []byte) {
	f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx(f.t, "user_bot")))
	f.Expect("GET", api+"/merge_requests/7/discussions?page=1&per_page=100", page(p1, 1, 2), page(p1, 1, 2))
	f.Expect("GET", api+"/merge_requests/7/discussions?page=2&per_page=100", page(p2, 2, 0), page(p2, 2, 0))
}

func (f *fakeGL) ci(pipelines []byte, jobs map[int][]byte) {
	q := "?order_by=id&per_page=20&sha=" + fxHead + "&sort=desc"
	f.Expect("GET", api+"/pipelines"+q, page(pipelines, 1, 0), page(pipelines, 1, 0))
	for id, j := range jobs {
		p := api + "/pipelines/" + strconv.Itoa(id) + "/jobs?include_retried=true&page=1&per_page=100"
		f.Expect("GET", p, page(j, 1, 0), page(j, 1, 0))
	}
}

func onlyPipeline801(t testing.TB) []byte {
	return fxEdit(t, "pipelines", func(v any) any { return v.([]any)[:1] })
}

func jobs801(t testing.TB) []byte {
	return concatLists(t, fx(t, "jobs_801_page1"), fx(t, "jobs_801_page2"))
}

func scenarioPolicy(t testing.TB) []byte {
	return mutate(t, func(m map[string]any) {
		m["schema_version"] = policyV3
		obj(m, "remediation_threads")["account_classes"] = []any{"user"}
		m["ci_outcomes"] = map[string]any{"checks": []any{
			map[string]any{"name": "build", "path_prefixes": []any{"cmd/", "pkg/"}},
			map[string]any{"name": "test", "path_prefixes": []any{"pkg/"}},
			map[string]any{"name": "unit", "path_prefixes": []any{"pkg/"}},
		}}
	})
}

func sourceState(t *testing.T, r *Result, name string) SourceState {
	t.Helper()
	for _, s := range r.Sources {
		if s.Source == name {
			return s
		}
	}
	t.Fatalf("source %s missing in %+v", name, r.Sources)
	return SourceState{}
}

func TestAcquireScenarioCommitsStore(t *testing.T) {
	f := newFakeGL(t)
	f.target(mrWithDEMO(t), 2)
	f.policy(scenarioPolicy(t))
	f.discussions(fx(t, "discussions_page1"), concatLists(t, fx(t, "discussions_page2"), fx(t, "discussions_remediation")))
	f.ci(onlyPipeline801(t), map[int][]byte{801: jobs801(t)})
	dir := filepath.Join(t.TempDir(), "store")
	res, err := Acquire(context.Background(), f.edge(t), AcquireOptions{
		Mode: ModeEnriched, Protection: protectionRequired, AdaptersSet: true,
		AdaptersJSON: helperAdapterJSON(t, "tracker"), Env: mrPipelineEnv(helperEnv("admitted"), nil),
		StoreDir: dir, Filter: filter.New([]string{"glpat-test"}), Now: func() time.Time { return fxNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.StoreWritten || !res.Protected || res.Constrained || res.PolicyVersion != policyV3 {
		t.Fatalf("result %+v", res)
	}
	s, err := LoadStore(dir, res.Identity)
	if err != nil {
		t.Fatal(err)
	}
	byClass := map[string][]*Record{}
	for i := range s.Records {
		r := &s.Records[i]
		byClass[r.Binding.ResourceClass] = append(byClass[r.Binding.ResourceClass], r)
		if _, err := s.Lookup(r.Handle, s.RunID, s.PolicyDigest, fxNow); err != nil {
			t.Fatalf("handle %d: %v", i, err)
		}
		raw, _ := json.Marshal(r.ModelView())
		for _, forbidden := range []string{"alice", "Alice", "bob", "carol", "erin", "avatar", "5001", "gitlab.example.com", "project_42_bot"} {
			if strings.Contains(string(raw), forbidden) {
				t.Fatalf("model view of %s carries %q: %s", r.Binding.ResourceClass, forbidden, raw)
			}
		}
	}
	// generic: 6a9c17 (alice), 0c1d2e (carol; system and bot replies not selected), b1c2d3 (erin+alice)
	if n := len(byClass[resourceDiscussion]); n != 3 {
		t.Fatalf("%d generic discussions", n)
	}
	if got := byClass[resourceDiscussion][2].Content.Text; got != "[participant-3 user] Can we get a benchmark before merging?\n\n[participant-1 user] Added one in the description." {
		t.Fatalf("pseudonymized thread text %q", got)
	}
	rem := byClass[ResourceRemediation]
	if len(rem) != 1 {
		t.Fatalf("%d remediation records", len(rem))
	}
	th := rem[0].Content.Thread
	if th.Fingerprint != strings.Repeat("3f", 32) || strings.Contains(th.Root, "remediation-marker") || th.ReplyCount != 1 || th.OmittedReplies != 1 ||
		th.Replies[0].Text != "Fixed by reading cache.ttl in NewCache; see DEMO-42." || th.Replies[0].Class != classUser {
		t.Fatalf("remediation thread %+v", th)
	}
	ci := byClass[resourceCIOutcome]
	if len(ci) != 2 || ci[0].Content.CI.Check != "build" || ci[0].Content.CI.Status != "passed" || ci[1].Content.CI.Status != "passed" ||
		ci[1].Content.CI.Classification != "required" || ci[1].Content.CI.Provenance != "same_revision_pipeline" || ci[1].Content.CI.ReviewedHead != fxHead {
		t.Fatalf("ci records %+v %+v", ci[0].Content.CI, ci[1].Content.CI)
	}
	issues := byClass[ResourceIssue]
	if len(issues) != 1 || issues[0].Content.Descriptor != "issue DEMO-7" || issues[0].Binding.Adapter != "tracker" || issues[0].Binding.Tenant != "engineering" {
		t.Fatalf("issue records %+v (DEMO-42 from a remediation reply must not be discovered)", issues)
	}
	if len(byClass[resourceMetadata]) != 1 || !strings.Contains(byClass[resourceMetadata][0].Content.Text, "Title: Add widget caching") {
		t.Fatalf("metadata %+v", byClass[resourceMetadata])
	}
	want := map[string]Completeness{
		SourceMetadata: Complete, SourceDiscussions: Complete, SourceRemediation: Complete, SourceCI: Partial, SourceReferences: Complete,
	}
	for src, c := range want {
		if got := sourceState(t, res, src); got.Completeness != c {
			t.Errorf("%s: %s %v, want %s", src, got.Completeness, got.Reasons, c)
		}
	}
	ciState := sourceState(t, res, SourceCI)
	if strings.Join(ciState.Reasons, ",") != "duplicate_retries,malformed,missing_check" {
		t.Errorf("ci reasons %v", ciState.Reasons)
	}
	if !s.AdmittedMutable || s.PolicySHA != fxTarget || s.ReviewedHead != fxHead {
		t.Errorf("store identity %+v", s)
	}
}

func TestDiscussionsMutatedBetweenReads(t *testing.T) {
	f := newFakeGL(t)
	p1 := fx(t, "discussions_page1")
	edited := []byte(strings.Replace(string(p1), "Ready for review.", "Ready for review!", 1))
	f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx(t, "user_bot")))
	f.Expect("GET", api+"/merge_requests/7/discussions?page=1&per_page=100", page(p1, 1, 0), page(edited, 1, 0))
	pol, _ := parsePolicy(examplePolicy(t))
	g, r := f.edge(t).Discussions(context.Background(), pol.ForgeDiscussions, pol.RemediationThreads, fxHead)
	if g.State.Completeness != Mutated || r.State.Completeness != Mutated || len(g.Drafts)+len(r.Drafts) != 0 {
		t.Fatalf("edit between reads: %+v %+v", g.State, r.State)
	}
}

func TestDiscussionsReorderedBetweenReads(t *testing.T) {
	f := newFakeGL(t)
	p1 := fx(t, "discussions_page1")
	rev := fxEdit(t, "discussions_page1", func(v any) any {
		l := v.([]any)
		l[0], l[1] = l[1], l[0]
		return l
	})
	f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx(t, "user_bot")))
	f.Expect("GET", api+"/merge_requests/7/discussions?page=1&per_page=100", page(p1, 1, 0), page(rev, 1, 0))
	pol, _ := parsePolicy(examplePolicy(t))
	g, _ := f.edge(t).Discussions(context.Background(), pol.ForgeDiscussions, nil, fxHead)
	if g.State.Completeness != Mutated {
		t.Fatalf("reorder: %+v", g.State)
	}
}

func TestDiscussionsChangedPageDeclaration(t *testing.T) {
	f := newFakeGL(t)
	p1 := fx(t, "discussions_page1")
	f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx(t, "user_bot")))
	f.Expect("GET", api+"/merge_requests/7/discussions?page=1&per_page=100", page(p1, 1, 0), page(p1, 1, 2))
	f.Expect("GET", api+"/merge_requests/7/discussions?page=2&per_page=100", page([]byte("[]"), 2, 0))
	pol, _ := parsePolicy(examplePolicy(t))
	g, _ := f.edge(t).Discussions(context.Background(), pol.ForgeDiscussions, nil, fxHead)
	if g.State.Completeness != Mutated {
		t.Fatalf("a page appearing between reads: %+v", g.State)
	}
}

func TestDiscussionsThreadBoundNeverFetchesNextPage(t *testing.T) {
	f := newFakeGL(t)
	p1 := fx(t, "discussions_page1")
	f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx(t, "user_bot")))
	// page 2 is declared but never registered: fetching it fails the test
	f.Expect("GET", api+"/merge_requests/7/discussions?page=1&per_page=100", page(p1, 1, 2), page(p1, 1, 2))
	pol, _ := parsePolicy(mutate(t, func(m map[string]any) { obj(m, "forge_discussions")["max_threads"] = 1 }))
	g, _ := f.edge(t).Discussions(context.Background(), pol.ForgeDiscussions, nil, fxHead)
	// page 1 holds one selectable thread, which fills max_threads=1: page 2 stays a declared
	// omission.
	if len(g.Drafts) != 1 || g.State.Completeness != Partial || strings.Join(g.State.Reasons, ",") != "page_omitted" {
		t.Fatalf("bound: %d drafts %+v", len(g.Drafts), g.State)
	}
}

func TestDiscussionsReplyAndItemBoundsArePartial(t *testing.T) {
	f := newFakeGL(t)
	p1 := fx(t, "discussions_page1")
	f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx(t, "user_bot")))
	f.Expect("GET", api+"/merge_requests/7/discussions?page=1&per_page=100", page(p1, 1, 0), page(p1, 1, 0))
	pol, _ := parsePolicy(mutate(t, func(m map[string]any) {
		d := obj(m, "forge_discussions")
		d["include_resolved"] = true
		d["max_replies_per_thread"] = 1
		d["max_items"] = 2
	}))
	g, _ := f.edge(t).Discussions(context.Background(), pol.ForgeDiscussions, nil, fxHead)
	if g.State.Completeness != Partial || !contains(g.State.Reasons, "item_bound") {
		t.Fatalf("items: %+v", g.State)
	}
	notes := 0
	for _, d := range g.Drafts {
		notes += d.Content.Count
	}
	if notes > 2 {
		t.Fatalf("%d notes over max_items 2", notes)
	}
}

func TestDiscussionsInvalidIdentityAndUnsupportedNotesArePartial(t *testing.T) {
	f := newFakeGL(t)
	bad := fxEdit(t, "discussions_page1", func(v any) any {
		l := v.([]any)
		n0 := l[0].(map[string]any)["notes"].([]any)[0].(map[string]any)
		n0["author"].(map[string]any)["id"] = 0
		n3 := l[2].(map[string]any)["notes"].([]any)[0].(map[string]any)
		n3["internal"] = true
		return l
	})
	f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx(t, "user_bot")))
	f.Expect("GET", api+"/merge_requests/7/discussions?page=1&per_page=100", page(bad, 1, 0), page(bad, 1, 0))
	pol, _ := parsePolicy(examplePolicy(t))
	g, _ := f.edge(t).Discussions(context.Background(), pol.ForgeDiscussions, nil, fxHead)
	if g.State.Completeness != Partial || !contains(g.State.Reasons, "invalid_identity") || !contains(g.State.Reasons, "unsupported_note") {
		t.Fatalf("state %+v", g.State)
	}
}

func TestRemediationRootNeedsLiveBotAndMarker(t *testing.T) {
	forged := fxEdit(t, "discussions_remediation", func(v any) any {
		l := v.([]any)
		root := l[0].(map[string]any)["notes"].([]any)[0].(map[string]any)
		root["author"] = map[string]any{"id": 102, "username": "bob", "name": "Bob Builder", "state": "active", "avatar_url": "", "web_url": ""}
		return l
	})
	badMarker := []byte(strings.Replace(string(fx(t, "discussions_remediation")), "fingerprint=3f3f", "fingerprint=XX3f", 1))
	for name, body := range map[string][]byte{"marker by another author is not remediation": forged, "malformed marker is not remediation": badMarker} {
		t.Run(name, func(t *testing.T) {
			f := newFakeGL(t)
			f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx(t, "user_bot")))
			f.Expect("GET", api+"/merge_requests/7/discussions?page=1&per_page=100", page(body, 1, 0), page(body, 1, 0))
			pol, _ := parsePolicy(examplePolicy(t))
			g, r := f.edge(t).Discussions(context.Background(), pol.ForgeDiscussions, pol.RemediationThreads, fxHead)
			if len(r.Drafts) != 0 || r.State.Completeness != Complete {
				t.Fatalf("remediation %+v", r)
			}
			for _, d := range g.Drafts {
				if strings.Contains(d.Content.Text, "fingerprint=3f") && name == "malformed marker is not remediation" {
					t.Fatalf("bot note without the toolkit_bot class leaked into generic discussions")
				}
			}
		})
	}
}

func TestPolicyBlobFailsClosed(t *testing.T) {
	treeWith := func(typ, mode string) []byte {
		return fxEdit(t, "tree_opencodereview", func(v any) any {
			l := v.([]any)
			e := l[1].(map[string]any)
			e["type"], e["mode"] = typ, mode
			return l
		})
	}
	q := api + "/repository/tree?page=1&path=.opencodereview&per_page=100&ref=" + fxTarget
	cases := []struct {
		rule  string
		setup func(f *fakeGL)
		want  string
	}{
		{"missing policy fails closed", func(f *fakeGL) {
			f.Expect("GET", q, page(fxEdit(t, "tree_opencodereview", func(v any) any { return v.([]any)[:1] }), 1, 0))
		}, "missing"},
		{"missing directory fails closed", func(f *fakeGL) { f.Expect("GET", q, httpfake.JSON(404, `{"message":"404 Tree Not Found"}`)) }, "missing"},
		{"symlink policy fails closed", func(f *fakeGL) { f.Expect("GET", q, page(treeWith("blob", "120000"), 1, 0)) }, "symlink"},
		{"submodule policy fails closed", func(f *fakeGL) { f.Expect("GET", q, page(treeWith("commit", "160000"), 1, 0)) }, "submodule"},
		{"tree entry policy fails closed", func(f *fakeGL) { f.Expect("GET", q, page(treeWith("tree", "040000"), 1, 0)) }, "not a regular blob"},
		{"oversized policy fails closed", func(f *fakeGL) {
			f.Expect("GET", q, page(fx(t, "tree_opencodereview"), 1, 0))
			f.Expect("GET", api+"/repository/blobs/"+fxBlob+"/raw", httpfake.Reply{Status: 200, Body: []byte(strings.Repeat(" ", maxPolicyBytes+1))})
		}, "64 KiB"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			f := newFakeGL(t)
			c.setup(f)
			_, err := f.edge(t).PolicyBlob(context.Background(), fxTarget)
			if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestUnprotectedTargetRejectedBeforeReview(t *testing.T) {
	f := newFakeGL(t)
	f.Expect("GET", api+"/merge_requests/7", httpfake.JSON(200, fx(t, "merge_request")))
	f.Expect("GET", api+"/repository/branches/main", httpfake.JSON(200, fxEdit(t, "branch_main", func(v any) any {
		v.(map[string]any)["protected"] = false
		return v
	})))
	_, err := Acquire(context.Background(), f.edge(t), AcquireOptions{Mode: ModeEnriched, Protection: protectionRequired, StoreDir: t.TempDir() + "/s"})
	if !errors.Is(err, ErrUnprotectedTarget) {
		t.Fatalf("err %v", err)
	}
}

func TestUnprotectedOptInIsConstrainedMetadataOnly(t *testing.T) {
	f := newFakeGL(t)
	unprot := fxEdit(t, "branch_main", func(v any) any {
		v.(map[string]any)["protected"] = false
		return v
	})
	f.Expect("GET", api+"/merge_requests/7", httpfake.JSON(200, fx(t, "merge_request")), httpfake.JSON(200, fx(t, "merge_request")))
	f.Expect("GET", api+"/repository/branches/main", httpfake.JSON(200, unprot))
	f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx(t, "user_bot"))) // the live bot's mention commands
	dir := filepath.Join(t.TempDir(), "s")
	res, err := Acquire(context.Background(), f.edge(t), AcquireOptions{Mode: ModeMetadata, Protection: protectionUnprotected, StoreDir: dir, Now: func() time.Time { return fxNow }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Constrained || res.StoreWritten || res.Metadata == nil || res.PolicyDigest != "" {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("constrained run created a store directory")
	}
}

func TestHeadMovingDuringAcquisitionFailsClosed(t *testing.T) {
	f := newFakeGL(t)
	moved := fxEdit(t, "merge_request", func(v any) any {
		v.(map[string]any)["sha"] = strings.Repeat("9", 40)
		return v
	})
	f.Expect("GET", api+"/merge_requests/7", httpfake.JSON(200, fx(t, "merge_request")), httpfake.JSON(200, moved))
	f.Expect("GET", api+"/repository/branches/main", httpfake.JSON(200, fx(t, "branch_main")))
	f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fx(t, "user_bot")))
	_, err := Acquire(context.Background(), f.edge(t), AcquireOptions{Mode: ModeMetadata, StoreDir: t.TempDir() + "/s", Now: func() time.Time { return fxNow }})
	if !errors.Is(err, errRevision) {
		t.Fatalf("err %v", err)
	}
}

func TestCIOutcomes(t *testing.T) {
	sel := &CIOutcomes{Required: true, MaxAgeSeconds: 86400, Checks: []CICheck{{Name: "build", PathPrefixes: []string{"pkg/"}}, {Name: "test", PathPrefixes: []string{"pkg/"}}}}
	t.Run("different-revision jobs fail closed", func(t *testing.T) {
		f := newFakeGL(t)
		q := "?order_by=id&per_page=20&sha=" + fxHead + "&sort=desc"
		f.Expect("GET", api+"/pipelines"+q, page(fx(t, "pipelines"), 1, 0))
		f.Expect("GET", api+"/pipelines/801/jobs?include_retried=true&page=1&per_page=100", page(jobs801(t), 1, 0))
		f.Expect("GET", api+"/pipelines/802/jobs?include_retried=true&page=1&per_page=100", page(fx(t, "jobs_802"), 1, 0))
		r := f.edge(t).CIOutcomes(context.Background(), sel, fxHead)
		if r.State.Completeness != Unavailable || !contains(r.State.Reasons, "different_revision") || len(r.Drafts) != 0 {
			t.Fatalf("%+v", r.State)
		}
	})
	t.Run("mutation between reads", func(t *testing.T) {
		f := newFakeGL(t)
		q := "?order_by=id&per_page=20&sha=" + fxHead + "&sort=desc"
		f.Expect("GET", api+"/pipelines"+q, page(onlyPipeline801(t), 1, 0), page(onlyPipeline801(t), 1, 0))
		changed := []byte(strings.Replace(string(jobs801(t)), `"status":"success"`, `"status":"failed"`, 1))
		f.Expect("GET", api+"/pipelines/801/jobs?include_retried=true&page=1&per_page=100", page(jobs801(t), 1, 0), page(changed, 1, 0))
		r := f.edge(t).CIOutcomes(context.Background(), sel, fxHead)
		if r.State.Completeness != Mutated || len(r.Drafts) != 0 {
			t.Fatalf("%+v", r.State)
		}
	})
	t.Run("retried jobs with duplicate names pick the latest and stay partial", func(t *testing.T) {
		f := newFakeGL(t)
		f.ci(onlyPipeline801(t), map[int][]byte{801: jobs801(t)})
		r := f.edge(t).CIOutcomes(context.Background(), &CIOutcomes{MaxAgeSeconds: 86400, Checks: []CICheck{{Name: "test", PathPrefixes: []string{"pkg/"}}}}, fxHead)
		if len(r.Drafts) != 1 || r.Drafts[0].Content.CI.Status != "passed" || r.State.Completeness != Partial || !contains(r.State.Reasons, "duplicate_retries") {
			t.Fatalf("%+v %+v", r.State, r.Drafts)
		}
	})
	t.Run("equally recent duplicates are ambiguous", func(t *testing.T) {
		f := newFakeGL(t)
		same := []byte(strings.Replace(string(jobs801(t)), `"finished_at":"2026-11-29T17:02:00.000Z"`, `"finished_at":"2026-11-29T17:07:00.000Z"`, -1))
		f.ci(onlyPipeline801(t), map[int][]byte{801: same})
		r := f.edge(t).CIOutcomes(context.Background(), &CIOutcomes{MaxAgeSeconds: 86400, Checks: []CICheck{{Name: "test", PathPrefixes: []string{"pkg/"}}}}, fxHead)
		if len(r.Drafts) != 1 || r.Drafts[0].Content.CI.Status != "unknown" || !contains(r.State.Reasons, "ambiguous") {
			t.Fatalf("%+v %+v", r.State, r.Drafts[0].Content.CI)
		}
		// both tied jobs finished: the result is ambiguous, not incomplete
		if contains(r.State.Reasons, "incomplete") {
			t.Fatalf("a tie of finished jobs reports incomplete: %+v", r.State)
		}
	})
	t.Run("stale completion is unknown and partial", func(t *testing.T) {
		f := newFakeGL(t)
		f.ci(onlyPipeline801(t), map[int][]byte{801: jobs801(t)})
		g := f.edge(t)
		g.now = func() time.Time { return fxNow.Add(72 * time.Hour) }
		r := g.CIOutcomes(context.Background(), &CIOutcomes{MaxAgeSeconds: 86400, Checks: []CICheck{{Name: "build", PathPrefixes: []string{"pkg/"}}}}, fxHead)
		if len(r.Drafts) != 1 || r.Drafts[0].Content.CI.Status != "unknown" || !contains(r.State.Reasons, "stale") {
			t.Fatalf("%+v", r.State)
		}
	})
	t.Run("current pipeline provenance and advisory classification", func(t *testing.T) {
		f := newFakeGL(t)
		f.Expect("GET", api+"/merge_requests/7", httpfake.JSON(200, fxEdit(t, "merge_request", func(v any) any {
			v.(map[string]any)["head_pipeline"] = map[string]any{"id": 801, "iid": 31, "project_id": 42, "sha": fxHead, "ref": "widget-cache", "status": "running"}
			return v
		})))
		f.Expect("GET", api+"/repository/branches/main", httpfake.JSON(200, fx(t, "branch_main")))
		advisory := []byte(strings.Replace(string(jobs801(t)), `"allow_failure":false`, `"allow_failure":true`, -1))
		f.ci(onlyPipeline801(t), map[int][]byte{801: advisory})
		g := f.edge(t)
		if _, err := g.Target(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := g.CIOutcomes(context.Background(), &CIOutcomes{MaxAgeSeconds: 86400, Checks: []CICheck{{Name: "build", PathPrefixes: []string{"pkg/"}}}}, fxHead)
		if len(r.Drafts) != 1 || r.Drafts[0].Content.CI.Provenance != "current_pipeline" || r.Drafts[0].Content.CI.Classification != "advisory" {
			t.Fatalf("%+v", r.Drafts)
		}
	})
	t.Run("pipeline pagination loss is partial", func(t *testing.T) {
		f := newFakeGL(t)
		q := "?order_by=id&per_page=20&sha=" + fxHead + "&sort=desc"
		f.Expect("GET", api+"/pipelines"+q, page(onlyPipeline801(t), 1, 2), page(onlyPipeline801(t), 1, 2))
		f.Expect("GET", api+"/pipelines/801/jobs?include_retried=true&page=1&per_page=100", page(jobs801(t), 1, 0), page(jobs801(t), 1, 0))
		r := f.edge(t).CIOutcomes(context.Background(), sel, fxHead)
		if r.State.Completeness != Partial || !contains(r.State.Reasons, "pipeline_page_omitted") {
			t.Fatalf("%+v", r.State)
		}
	})
}
