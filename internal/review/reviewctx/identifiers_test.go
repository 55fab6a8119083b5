package reviewctx

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Spec: "Name, username, email, avatar/profile URL, and raw provider IDs are never model
// fields" — nor through body text: context DLP at admission finds the identifiers the
// publication DLP knows and the participants' own identities.
func TestIdentifierCodes(t *testing.T) {
	ids := Identities{Usernames: []string{"alice", "bob", "al"}, Names: []string{"Alice Liddell"}}
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"mail alice@example.com please", []string{identEmail}},
		{"write to carol@example.com", []string{identEmail}},
		{"call +1 415-555-0134", []string{identPhone}},
		{"see https://gitlab.example.com:8443/bob for context", []string{identProfileURL}},
		{"avatar https://gitlab.example.com:8443/uploads/-/system/user/avatar/101/avatar.png", []string{identProfileURL}},
		{"https://secure.gravatar.com/avatar/abc", []string{identProfileURL}},
		// not identifiers: another project's URL on the host, a bare number
		{"https://gitlab.example.com:8443/group/project; build 1234567890; https://x.example/al", nil},
		{"profile https://gitlab.com/alice.", []string{identProfileURL}},
	} {
		if got := identifierCodes(tc.in, ids); !slices.Equal(got, tc.want) {
			t.Errorf("identifierCodes(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// A participant's name or username written without an @ is rewritten like a mention: the
// text stays, the identity goes.
func TestUnnameRewritesNamesAndUsernames(t *testing.T) {
	ids := Identities{Usernames: []string{"alice", "bob", "al"}, Names: []string{"Alice Liddell"}}
	for in, want := range map[string]string{
		"ask Bob.":                      "ask someone.",
		"thanks alice, fixed":           "thanks someone, fixed",
		"per ALICE LIDDELL's note":      "per someone's note",
		"Source branch: alice/fix-ttl":  "Source branch: someone/fix-ttl",
		"the bobcat alias; al dente":    "the bobcat alias; al dente",
		"@participant-1 asked alice.bo": "@participant-1 asked alice.bo",
	} {
		if got := unname(in, ids); got != want {
			t.Errorf("unname(%q) = %q, want %q", in, got, want)
		}
	}
}

// A discussion note that carries an e-mail address, a profile URL or a phone number is not admitted: its record is rejected
// (not redacted), the source is dlp_rejected with the identifier reason and counts the
// omission, and nothing of it reaches the store the context tools serve.
func TestContextDLPRejectsIdentifierInDiscussionText(t *testing.T) {
	for _, leak := range []string{"write to alice@example.com", "see https://gitlab.example.com:8443/alice", "call +1 415-555-0134"} {
		t.Run(leak, func(t *testing.T) {
			p1 := fxEdit(t, "discussions_page1", func(v any) any {
				for _, d := range v.([]any) {
					for _, n := range d.(map[string]any)["notes"].([]any) {
						if n := n.(map[string]any); strings.HasPrefix(n["body"].(string), "Ready for review.") {
							n["body"] = "Ready for review; " + leak + "."
						}
					}
				}
				return v
			})
			f := newFakeGL(t)
			f.target(fx(t, "merge_request"), 2)
			f.policy(mutate(t, func(m map[string]any) {
				delete(m, "references")
				delete(m, "remediation_threads")
			}))
			f.discussions(p1, fx(t, "discussions_page2"))
			res, err := Acquire(context.Background(), f.edge(t), AcquireOptions{Mode: ModeEnriched, Protection: protectionRequired,
				Env: mrPipelineEnv(nil, nil), StoreDir: filepath.Join(t.TempDir(), "store"), Now: func() time.Time { return fxNow }})
			if err != nil {
				t.Fatal(err)
			}
			st := sourceState(t, res, SourceDiscussions)
			if st.Completeness != DLPRejected || st.Omitted != 1 || !slices.Contains(st.Reasons, reasonIdentifier) || !slices.Contains(st.Reasons, "dlp_rejected") {
				for _, r := range res.Store.Records {
					t.Logf("%s: %q", r.Source, r.Content.Text)
				}
				t.Fatalf("source %+v, want dlp_rejected with one omitted record and the identifier reason", st)
			}
			for _, r := range res.Store.Records {
				for _, s := range []string{r.Content.Text, r.Content.Descriptor} {
					if strings.Contains(s, "alice") || strings.Contains(s, "Alice") {
						t.Fatalf("%s record carries the identifier", r.Source)
					}
				}
			}
		})
	}
}
