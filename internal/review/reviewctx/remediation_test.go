package reviewctx

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"
)

// Spec: "A remediation record contains one DLP-checked root, safe anchor state, ordered
// pseudonymized replies, closed completeness, and reply/resolved/outdated counts … Neither
// contains a raw provider identity or object": the model view's thread has exactly those
// fields (the finding fingerprint stays in the store's binding, never in the model view), and
// the counts count the record's notes.
func TestRemediationRecordModelViewHasCountsAndNoFingerprint(t *testing.T) {
	rem := fxEdit(t, "discussions_remediation", func(v any) any {
		notes := v.([]any)[0].(map[string]any)["notes"].([]any)
		// the first reply is a resolved diff note anchored to an older head
		r := notes[1].(map[string]any)
		r["type"], r["resolved"] = "DiffNote", true
		r["position"] = map[string]any{"base_sha": fxTarget, "start_sha": fxTarget, "head_sha": "0123456789abcdef0123456789abcdef01234567",
			"position_type": "text", "new_path": "cache/cache.go", "new_line": 12}
		return v
	})
	f := newFakeGL(t)
	f.target(fx(t, "merge_request"), 2)
	f.policy(mutate(t, func(m map[string]any) {
		delete(m, "references")
		delete(m, "forge_discussions")
		obj(m, "remediation_threads")["account_classes"] = []any{"user"}
		obj(m, "remediation_threads")["include_resolved"] = true
	}))
	f.discussions(fx(t, "discussions_page1"), concatLists(t, fx(t, "discussions_page2"), rem))
	res, err := Acquire(context.Background(), f.edge(t), AcquireOptions{Mode: ModeEnriched, Protection: protectionRequired,
		Env: mrPipelineEnv(nil, nil), StoreDir: filepath.Join(t.TempDir(), "store"), Now: func() time.Time { return fxNow }})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, r := range res.Store.Records {
		if r.Source != SourceRemediation {
			continue
		}
		found = true
		b, err := json.Marshal(r.ModelView())
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Thread map[string]any `json:"thread"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range v.Thread {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := []string{"anchor_state", "completeness", "omitted_replies", "outdated_count", "replies", "reply_count", "resolved", "resolved_count", "root"}
		if !slices.Equal(keys, want) {
			t.Fatalf("remediation model view fields %v, want %v", keys, want)
		}
		if regexp.MustCompile(`[0-9a-f]{64}`).Match(b) {
			t.Fatal("the model view carries the finding fingerprint")
		}
		if v.Thread["reply_count"] != float64(1) || v.Thread["resolved_count"] != float64(1) || v.Thread["outdated_count"] != float64(1) {
			t.Fatalf("counts %v", v.Thread)
		}
		if r.Content.Thread.Fingerprint == "" {
			t.Fatal("the store lost the fingerprint binding")
		}
	}
	if !found {
		t.Fatal("no remediation record")
	}
}
