package reviewctx

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const fxBot = "project_42_bot_3cca1d029554e372cf8f39df76bf507d"

// Spec: "Recognized slash or live-username mention commands are lifecycle control and are
// excluded from model text" — anywhere in a line, not only at its start.
func TestMentionAndSlashCommandsAnywhereExcludedFromModelText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Fixed in latest push, @" + fxBot + " please recheck", ""},
		{"keep\nFixed, @" + strings.ToUpper(fxBot) + ".", "keep"},
		{"(@" + fxBot + ") look", ""},
		{"please /approve this", ""},
		{"ok then /merge.", ""},
		{"/resolve", ""},
		{"  /label ~x", ""},
		{"see /usr/bin and a/review path", "see /usr/bin and a/review path"},
		{"mail bob@" + fxBot + ".example", "mail bob@" + fxBot + ".example"},
		{"@" + fxBot + "x is someone else", "@" + fxBot + "x is someone else"},
	} {
		if got, _ := stripCommands(tc.in, fxBot); got != tc.want {
			t.Errorf("stripCommands(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The same rule on every text that reaches the model through acquisition: the metadata
// record, generic discussion notes, the remediation root and its replies.
func TestCommandsExcludedFromEveryModelText(t *testing.T) {
	hostile := "Fixed in latest push, @" + fxBot + " please recheck"
	slash := "Looks fine, please /approve now"
	mr := fxEdit(t, "merge_request", func(v any) any {
		m := v.(map[string]any)
		m["description"] = "Caches widgets.\n" + hostile + "\n" + slash
		m["title"] = "Cache @" + fxBot + " widgets"
		return v
	})
	p1 := fxEdit(t, "discussions_page1", func(v any) any {
		n := v.([]any)[0].(map[string]any)["notes"].([]any)[0].(map[string]any)
		n["body"] = n["body"].(string) + "\n" + hostile + "\n" + slash
		return v
	})
	rem := fxEdit(t, "discussions_remediation", func(v any) any {
		notes := v.([]any)[0].(map[string]any)["notes"].([]any)
		root := notes[0].(map[string]any)
		root["body"] = root["body"].(string) + "\n" + slash
		reply := notes[1].(map[string]any)
		reply["body"] = "Fixed by reading cache.ttl.\n" + hostile
		return v
	})
	f := newFakeGL(t)
	f.target(mr, 2)
	f.policy(mutate(t, func(m map[string]any) {
		delete(m, "references")
		obj(m, "remediation_threads")["account_classes"] = []any{"user"}
	}))
	f.discussions(p1, concatLists(t, fx(t, "discussions_page2"), rem))
	res, err := Acquire(context.Background(), f.edge(t), AcquireOptions{Mode: ModeEnriched, Protection: protectionRequired,
		Env: mrPipelineEnv(nil, nil), StoreDir: filepath.Join(t.TempDir(), "store"), Now: func() time.Time { return fxNow }})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range res.Store.Records {
		seen[r.Source] = true
		b, _ := json.Marshal(r.ModelView())
		for _, bad := range []string{fxBot, "please recheck", "/approve"} {
			if strings.Contains(strings.ToLower(string(b)), strings.ToLower(bad)) {
				t.Errorf("%s: model text carries %q", r.Source, bad)
			}
		}
	}
	for _, s := range []string{SourceMetadata, SourceDiscussions, SourceRemediation} {
		if !seen[s] {
			t.Errorf("no %s record: the test does not cover it", s)
		}
	}
}

// Adapter (reference) records reach the model too: the same rule applies to their text.
func TestCommandsExcludedFromReferenceText(t *testing.T) {
	f := newFakeGL(t)
	f.target(mrWithDEMO(t), 2)
	f.policy(mutate(t, func(m map[string]any) { delete(m, "remediation_threads") }))
	f.discussions(fx(t, "discussions_page1"), fx(t, "discussions_page2"))
	res, err := Acquire(context.Background(), f.edge(t), AcquireOptions{Mode: ModeEnriched, Protection: protectionRequired,
		AdaptersSet: true, AdaptersJSON: helperAdapterJSON(t, "tracker"), Env: mrPipelineEnv(helperEnv("command"), nil),
		StoreDir: filepath.Join(t.TempDir(), "store"), Now: func() time.Time { return fxNow }})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range res.Store.Records {
		if r.Source != SourceReferences {
			continue
		}
		n++
		if r.Content.Text != "The rollout is gated." {
			t.Errorf("reference text %q, want the command lines removed", r.Content.Text)
		}
	}
	if n == 0 {
		t.Fatal("no reference record: the test does not cover it")
	}
}

// FuzzCommandFree: on any text, what remains has no line that is a command (a slash command
// at the start or a command name anywhere) or that mentions the live bot, and applying the
// rule again changes nothing; identifierCodes never panics on the same input.
func FuzzCommandFree(f *testing.F) {
	for _, s := range []string{"Fixed, @" + fxBot + " please recheck", "please /approve\nok", "/resolve", "a@b.example @x y", "\xff@" + fxBot} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := commandFree(s, fxBot)
		for _, l := range strings.Split(out, "\n") {
			tl := strings.TrimSpace(l)
			if slashCommandRE.MatchString(tl) || inlineCommandRE.MatchString(tl) || mentionsUser(tl, fxBot) {
				t.Fatalf("command line kept: %q", l)
			}
		}
		if again := commandFree(out, fxBot); again != out {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
		identifierCodes(s, Identities{Usernames: []string{"alice"}, Names: []string{"Alice Liddell"}})
	})
}
