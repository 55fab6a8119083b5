package reviewrun

import (
	"strings"
	"testing"
)

// Spec: names, usernames, e-mails, profile URLs and raw IDs are never model fields, and a
// bot mention or command is removed wherever it stands in a line. Hostile participant text —
// mid-line mentions, e-mail addresses as written and as written to dodge a plain pattern,
// profile URLs, commands — in a discussion note (enriched) and in the merge request's title
// and description (metadata, enriched) never reaches a tool answer.
func TestHostileParticipantTextNeverReachesAToolAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds forgectx and the stand-in engine")
	}
	hostile := []struct{ text, leak string }{
		{"Fixed in latest push, @toolkit please recheck", "@toolkit"},
		{"Fixed, cc @alice thanks", "@alice"},
		{"ping bob.smith@example.org now", "bob.smith"},
		{"ping bob.smith [at] example.org now", "bob.smith"},
		{"ping bob.smith(at)example(dot)org now", "bob.smith"},
		{"ping bob.smith＠example.org now", "bob.smith"},
		{"[mail](mailto:dave@example.net)", "dave@"},
		{"see https://gitlab.example.com/alice for details", "example.com/alice"},
		{"ok /approve this", "/approve"},
	}
	type place struct{ mode, where string }
	for _, p := range []place{{"enriched", "note"}, {"metadata", "description"}, {"enriched", "description"}, {"metadata", "title"}} {
		for _, h := range hostile {
			t.Run(p.mode+"/"+p.where+"/"+h.leak, func(t *testing.T) {
				sc := scenario{mode: p.mode, protected: true, script: "dump"}
				if p.where == "note" {
					page := edit(t, fixture(t, "discussions_page1"), func(v any) any {
						n := v.([]any)[0].(map[string]any)["notes"].([]any)[0].(map[string]any)
						n["body"] = "Ready for review. " + h.text
						return v
					})
					sc.pages = [][]byte{page, page, page}
				} else {
					sc.mr = edit(t, fixture(t, "merge_request"), func(v any) any {
						v.(map[string]any)[p.where] = "Add caching. " + h.text
						return v
					})
				}
				if p.mode == "enriched" {
					sc.policy = e2ePolicy(t, nil)
					if sc.pages == nil {
						sc.pages = discussionsOK(fixture(t, "discussions_page1"))
					}
				}
				r := runScenario(t, sc, nil)
				r.fake.wantPosts = map[string]int{"POST notes": 1}
				if r.err != nil {
					t.Fatalf("run: %v\n%s", r.err, r.logs)
				}
				if _, raw := engineView(t, r.out); strings.Contains(raw, h.leak) {
					t.Errorf("%q reached a tool answer", h.leak)
				}
			})
		}
	}
}
