package status

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/forgectx/forgectx/pkg/filter"
)

func TestRenderStatusEveryStateRoundTrips(t *testing.T) {
	for _, st := range []State{Started, Success, Failure, Skipped, Cancelled, TimedOut} {
		body, err := Render(nil, Status{Agent: "triage-bot", State: st, RunURL: "https://github.com/o/r/actions/runs/1", Detail: "d"})
		if err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		if !strings.HasPrefix(body, Marker("triage-bot")+"\n") {
			t.Errorf("%s: marker is not the first line: %q", st, body)
		}
		if !strings.Contains(body, icons[st]) {
			t.Errorf("%s: no icon %s in %q", st, icons[st], body)
		}
		got, ok := ParseStatus(body)
		if !ok || got.Agent != "triage-bot" || got.State != st {
			t.Errorf("%s: parse back = %+v, %v", st, got, ok)
		}
	}
}

func TestRenderStatusExactBytes(t *testing.T) {
	body, err := Render(nil, Status{Agent: "fix", State: Failure, RunURL: "https://ci.example/run/7", Detail: "exit status 1"})
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- forgectx:status agent=fix -->\n❌ **forgectx** agent `fix` failed ([CI run](https://ci.example/run/7)). ` exit status 1 `\n"
	if body != want {
		t.Fatalf("got  %q\nwant %q", body, want)
	}
}

func TestRenderStatusRejectsBadAgentAndState(t *testing.T) {
	if _, err := Render(nil, Status{Agent: "a -->", State: Success}); err == nil || !strings.Contains(err.Error(), "agent") {
		t.Errorf("agent with marker breakout accepted: %v", err)
	}
	if _, err := Render(nil, Status{Agent: "a", State: "done"}); err == nil || !strings.Contains(err.Error(), "state") {
		t.Errorf("unknown state accepted: %v", err)
	}
}

// The detail cannot forge markers, links, mentions or HTML, and carries no invisible characters.
func TestDetailCannotForgeMarkupOrCarryInvisibles(t *testing.T) {
	hostile := "x\n<!-- forgectx:status agent=other -->\n[click](https://evil.example) @admin <img src=x> ``` `` \u200bhidden\u202e"
	body, err := Render(nil, Status{Agent: "a", State: Failure, Detail: hostile})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("detail broke the one-line layout: %q", body)
	}
	if strings.Count(body, "<!--") != 1 || strings.Contains(lines[1], "<") || strings.Contains(lines[1], ">") {
		t.Errorf("detail carries markup: %q", lines[1])
	}
	if strings.ContainsAny(lines[1], "\u200b\u202e") {
		t.Errorf("detail carries invisible characters: %q", lines[1])
	}
	// The whole detail sits inside one code span whose fence is longer than any backtick run.
	idx := strings.Index(lines[1], "````")
	if idx < 0 || !strings.HasSuffix(lines[1], "````") {
		t.Errorf("detail not fenced by a 4-backtick code span: %q", lines[1])
	}
	if p, ok := ParseStatus(body); !ok || p.Agent != "a" {
		t.Errorf("forged marker in detail changed the parse: %+v", p)
	}
}

func TestDetailRedactsSecretsAndCaps(t *testing.T) {
	p := filter.New([]string{"s3cr3t-value-123"})
	d := SanitizeDetail(p, "token s3cr3t-value-123 "+strings.Repeat("é", 400))
	if strings.Contains(d, "s3cr3t-value-123") {
		t.Errorf("registered secret not redacted: %q", d)
	}
	if len(d) > MaxDetailBytes || !utf8.ValidString(d) || !strings.HasSuffix(d, "…") {
		t.Errorf("cap broken: %d bytes, valid=%v", len(d), utf8.ValidString(d))
	}
}

func TestUnsafeRunURLIsDropped(t *testing.T) {
	for _, u := range []string{"javascript:alert(1)", "https://x/a)b", "https://x/\n", "https://x/é"} {
		body, _ := Render(nil, Status{Agent: "a", State: Success, RunURL: u})
		if strings.Contains(body, "CI run") {
			t.Errorf("%q rendered as link: %q", u, body)
		}
	}
}

func TestParseStatusIgnoresNonStatusBodies(t *testing.T) {
	for _, b := range []string{"", "hello", "text\n" + Marker("a") + "\n✅ **forgectx** agent `a` succeeded.", Marker("a") + "\nsomething else"} {
		if _, ok := ParseStatus(b); ok {
			t.Errorf("parsed %q as a status comment", b)
		}
	}
}
