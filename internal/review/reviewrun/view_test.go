package reviewrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/forgectx/forgectx/internal/lifecycle"
	"github.com/forgectx/forgectx/internal/review/reviewctx"
	"github.com/forgectx/forgectx/internal/run/harness"
	"github.com/forgectx/forgectx/test/httpfake"
)

// answerRow is one tool answer the stand-in engine's dump script recorded.
type answerRow struct {
	Tool   string          `json:"tool"`
	Args   map[string]any  `json:"args"`
	Answer json.RawMessage `json:"answer"`
}

// engineView reduces the dumped answers to what the engine saw: one line per evidence item
// ("evidence ID: sorted JSON keys of its content", or "evidence ID" for a non-JSON content)
// and per context record ("context RESOURCE_CLASS: sorted keys of its model view"), sorted,
// plus the raw answers for text searches.
func engineView(t *testing.T, out string) ([]string, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(out, "answers"))
	if err != nil {
		t.Fatalf("the engine dumped no answers: %v", err)
	}
	var rows []answerRow
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	var view []string
	for _, r := range rows {
		switch {
		case r.Tool == "ocr_toolkit_evidence" && r.Args["action"] == "get":
			var g struct {
				Item    struct{ ID string } `json:"item"`
				Content string              `json:"content"`
			}
			if err := json.Unmarshal(r.Answer, &g); err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if json.Unmarshal([]byte(g.Content), &m) == nil {
				view = append(view, "evidence "+g.Item.ID+": "+strings.Join(keys(m), ","))
			} else {
				view = append(view, "evidence "+g.Item.ID)
			}
		case r.Tool == "context_get":
			var m map[string]any
			if err := json.Unmarshal(r.Answer, &m); err != nil {
				t.Fatal(err)
			}
			view = append(view, fmt.Sprintf("context %v: %s", m["resource_class"], strings.Join(keys(m), ",")))
		}
	}
	sort.Strings(view)
	return view, string(raw)
}

func keys(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// Spec: off "does not normalize or persist mutable merge-request text"; metadata "additionally
// admits bounded title, description, labels, and source-branch text"; an unprotected target
// "rejects enriched … discussion/remediation/CI policy acquisition … preserves only the
// built-in immutable evidence MCP"; enriched adds the protected policy's records. The engine
// (a stand-in that dumps every tool answer) sees exactly that for each mode × protection ×
// profile; a profile that asks for more is refused before any request, naming the mode and
// the source.
func TestEngineViewIsExactlyWhatModeAndProtectionAdmit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	identity := []string{
		"evidence doc_collection: admission,bounds,check_log_selection,entity_kind,included_sources,record_selection",
		"evidence doc_entity_metadata: created_at,kind,number,state",
	}
	withMetadata := append(slices.Clone(identity), "evidence doc_review_metadata: completeness,descriptor,reasons,schema_version,text")
	enriched := append(slices.Clone(identity),
		"context discussion: descriptor,handle,resource_class,state,text",
		"context merge_request_metadata: descriptor,handle,resource_class,state,text",
	)
	// mutable merge-request text and participant identity of the fixtures
	mrText := []string{"Add widget caching", "Caches widgets", "widget-cache", "needs review"}
	people := []string{"alice", "Alice Liddell", "avatar", "9007"}
	for _, tc := range []struct {
		mode      string
		protected bool
		want      []string
		wantErr   error
		seesMR    bool
	}{
		{mode: "off", protected: true, want: identity},
		{mode: "off", protected: false, want: identity},
		{mode: "metadata", protected: true, want: withMetadata, seesMR: true},
		{mode: "metadata", protected: false, want: withMetadata, seesMR: true},
		{mode: "enriched", protected: true, want: enriched, seesMR: true},
		{mode: "enriched", protected: false, wantErr: reviewctx.ErrConstrained},
	} {
		name := fmt.Sprintf("%s/protected=%v/profile=entity", tc.mode, tc.protected)
		t.Run(name, func(t *testing.T) {
			sc := scenario{mode: tc.mode, protected: tc.protected, script: "dump"}
			if tc.mode == "enriched" {
				sc.policy, sc.pages = e2ePolicy(t, nil), discussionsOK(fixture(t, "discussions_page1"))
			}
			if tc.wantErr != nil {
				sc.refused, sc.noPosting = true, true
				r := runScenarioWith(t, sc, nil, func(o *Options) {
					env := o.Environ()
					o.Environ = func() []string { return append(env, "OCR_GITLAB_TARGET_PROTECTION_MODE=unprotected") }
				})
				if !errors.Is(r.err, tc.wantErr) {
					t.Fatalf("err %v, want %v", r.err, tc.wantErr)
				}
				if _, err := os.Stat(filepath.Join(r.out, "answers")); err == nil {
					t.Fatal("the engine ran")
				}
				return
			}
			r := runScenario(t, sc, nil)
			r.fake.wantPosts = map[string]int{"POST notes": 1}
			if r.err != nil {
				t.Fatalf("run: %v\n%s", r.err, r.logs)
			}
			got, raw := engineView(t, r.out)
			sort.Strings(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("the engine saw\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			for _, s := range people {
				if strings.Contains(raw, s) {
					t.Errorf("a participant identity (%q) reached a tool answer", s)
				}
			}
			for _, s := range mrText {
				if strings.Contains(raw, s) != tc.seesMR {
					t.Errorf("merge-request text %q in a tool answer: %v, want %v", s, !tc.seesMR, tc.seesMR)
				}
			}
		})
	}
	// A profile that asks for more than the entity is refused before any request (the fake
	// has no expectation), in every mode, naming the mode and the source.
	for _, mode := range []string{"off", "metadata", "enriched"} {
		for _, src := range []string{"comments", "reviews", "checks", "agent_runs"} {
			t.Run(fmt.Sprintf("%s/profile=%s", mode, src), func(t *testing.T) {
				fake := httpfake.New(t)
				hf := filepath.Join(t.TempDir(), "harness.yml")
				text := strings.Replace(e2eHarness("/bin/true"), "included_sources: [entity]", "included_sources: [entity, "+src+"]", 1)
				if src == "checks" {
					text = strings.Replace(text, "included_sources: [entity, checks]", "included_sources: [checks, entity]", 1)
				}
				if err := os.WriteFile(hf, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
				h, err := harness.Load(hf)
				if err != nil {
					t.Fatal(err)
				}
				env := []string{"GITLAB_TOKEN=" + e2eToken, "OCR_REVIEW_CONTEXT_MODE=" + mode}
				_, err = Run(context.Background(), Options{Common: lifecycle.Common{APIURL: fake.URL + "/api/v4", TokenEnv: "GITLAB_TOKEN",
					Harness: h, Environ: func() []string { return env },
					Stdout: io.Discard, Stderr: io.Discard, Log: zerolog.Nop()}, Project: e2eProject, MR: 7,
					Forgectx: "/bin/true", TempDir: t.TempDir()})
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "context mode "+mode) || !strings.Contains(err.Error(), src) {
					t.Fatalf("err %v, want a configuration error naming mode %s and source %s", err, mode, src)
				}
			})
		}
	}
}

// An e-mail address in a discussion reply is rejected at admission (context DLP), counted in
// receipt v8 (the source is dlp_rejected with an omitted record and two degradation reasons:
// dlp_rejected and identifier), blocks approval, and never reaches a tool answer.
func TestIdentifierRejectionCountedInReceiptAndNeverServed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	page := edit(t, fixture(t, "discussions_page1"), func(v any) any {
		n := v.([]any)[0].(map[string]any)["notes"].([]any)[0].(map[string]any)
		n["body"] = "Ready for review; questions to alice@example.com please."
		return v
	})
	r := runScenario(t, scenario{mode: "enriched", protected: true, approve: "true", script: "dump", policy: e2ePolicy(t, nil), pages: [][]byte{page, page, page}}, nil)
	r.fake.wantPosts = map[string]int{"POST notes": 1}
	if r.err != nil {
		t.Fatalf("run: %v\n%s", r.err, r.logs)
	}
	_, raw := engineView(t, r.out)
	if strings.Contains(raw, "alice@example.com") || strings.Contains(raw, "questions to") {
		t.Fatal("the rejected record reached a tool answer")
	}
	_, rc := summaryNote(t, r)
	var got *ReceiptSource
	for i := range rc.Sources {
		if rc.Sources[i].Source == reviewctx.SourceDiscussions {
			got = &rc.Sources[i]
		}
	}
	if got == nil || got.Completeness != reviewctx.DLPRejected || got.Omitted != 1 || got.Degradations != 2 {
		t.Fatalf("receipt source %+v, want dlp_rejected, omitted 1, degradations 2", got)
	}
	if r.res.Approved || !slices.Contains(r.res.Decision.Reasons, NotDLPRejected) {
		t.Fatalf("approved %v reasons %v", r.res.Approved, r.res.Decision.Reasons)
	}
}
