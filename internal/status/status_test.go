package status

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/forgectx/forgectx/internal/filter"
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
	if len(d) > maxDetailBytes || !utf8.ValidString(d) || !strings.HasSuffix(d, "…") {
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

// Nothing that renders invisibly survives into the detail: format characters, default-
// ignorable fillers, private-use and unassigned code points, variation selectors, the braille
// blank; other space characters become one plain space.
func TestDetailDropsEveryInvisibleClass(t *testing.T) {
	for _, r := range []rune{0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x200B, 0x200E, 0x2060, 0x2061,
		0x202E, 0x2066, 0x2800, 0x3164, 0xFE0F, 0xFEFF, 0xFFA0, 0xFFFC, 0xE000, 0xF8FF, 0x1BCA0, 0x1D173, 0xE0001, 0xE0100, 0x10FFFD, 0x0378} {
		if got := SanitizeDetail(nil, "a"+string(r)+"b"); got != "ab" {
			t.Errorf("U+%04X: detail = %q, want \"ab\"", r, got)
		}
	}
	for _, r := range []rune{0x00A0, 0x1680, 0x2003, 0x202F, 0x205F, 0x3000, '\t', '\v', '\f'} {
		if got := SanitizeDetail(nil, "a"+string(r)+string(r)+"b"); got != "a b" {
			t.Errorf("U+%04X: detail = %q, want \"a b\"", r, got)
		}
	}
}

// Whatever the detail, the status body is the marker line and one line, parses back to the
// same agent and state, carries no markup, no invisible rune and no over-long detail.
func FuzzRenderDetail(f *testing.F) {
	f.Add("plain")
	f.Add("x\n<!-- forgectx:status agent=other -->\n[click](https://evil.example) @admin <img src=x> ``` `` \u200bhidden\u202e")
	f.Add("\r\n\u2028`\u0085")
	f.Add(strings.Repeat("`", 400))
	f.Fuzz(func(t *testing.T, detail string) {
		body, err := Render(nil, Status{Agent: "a", State: Failure, RunURL: "https://github.com/o/r/actions/runs/1", Detail: detail})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		if len(lines) != 2 || strings.Count(body, "<!--") != 1 || strings.ContainsAny(lines[1], "<>") {
			t.Fatalf("layout broken: %q", body)
		}
		if p, ok := ParseStatus(body); !ok || p.Agent != "a" || p.State != Failure {
			t.Fatalf("parse back = %+v, %v", p, ok)
		}
		d := SanitizeDetail(nil, detail)
		if len(d) > maxDetailBytes || !utf8.ValidString(d) {
			t.Fatalf("detail %d bytes, valid=%v", len(d), utf8.ValidString(d))
		}
		for _, r := range d {
			if invisible(r) || (r != ' ' && unicode.IsSpace(r)) {
				t.Fatalf("detail keeps U+%04X: %q", r, d)
			}
		}
	})
}
