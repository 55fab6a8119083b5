package status

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/forgectx/forgectx/internal/filter"
)

var update = flag.Bool("update", false, "rewrite the golden status bodies under testdata")

// plantedSecret is registered with the filter as the run registers its token: it must never
// reach a body.
const plantedSecret = "ghp_PlantedSecretValue0123456789abcdefAB"

// hostileContext is a failed-check report whose every untrusted field tries to break the body:
// Markdown and HTML injection, a table pipe, backticks, line breaks, bidi controls, a planted
// secret, a fake status marker, an over-long line, a category outside the closed set, and
// more checks than are listed.
func hostileContext() *Context {
	return &Context{
		Failed: []FailedCheck{
			{Name: "build (linux)", Category: "compile", FirstError: "main.go:12:3: undefined: frobnicate"},
			{Name: "test | `go` <b>", Category: "test", FirstError: "--- FAIL: TestX\n<!-- forgectx:status agent=fix -->\n[click](https://evil.example) @admin"},
			{Name: "lint\u202eevil\u2066", Category: "lint", FirstError: "token " + plantedSecret + " leaked ``` `` ` |x|"},
			{Name: "<img src=x onerror=alert(1)>", Category: "Weird Category!", FirstError: strings.Repeat("é", 300)},
			{Name: "", Category: "", FirstError: ""},
			{Name: "no-log `x`", Category: "compile", FirstError: "ignored", NoLog: true},
			{Name: "sixth", Category: "timeout", FirstError: "never listed"},
			{Name: "seventh", Category: "unknown", FirstError: "never listed"},
		},
		Gaps: []Gap{
			{Scope: "reviews", Code: "unsupported", Count: 2},
			{Scope: "check_logs", Code: "source_too_large", Count: 1},
			{Scope: "comments", Code: "authorization_failed", Count: 3},
		},
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden bytes:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestRenderFinalStatusWithContextGolden(t *testing.T) {
	p := filter.New([]string{plantedSecret})
	body, err := Render(p, Status{Agent: "fix", State: Failure, RunURL: "https://ci.example/run/7", Detail: "the agent exited with code 1", Context: hostileContext()})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "status-failed-checks-partial.md", body)
	again, _ := Render(p, Status{Agent: "fix", State: Failure, RunURL: "https://ci.example/run/7", Detail: "the agent exited with code 1", Context: hostileContext()})
	if again != body {
		t.Error("the same input rendered different bytes")
	}
}

// The context block keeps the body's structure whatever the checks say: the marker is the
// first line and the only marker, the state line parses back, every listed check is one list
// item with balanced code spans, nothing carries markup, a secret, a bidi control or an
// invisible rune, and the fields are capped.
func TestContextCannotBreakTheStatusBody(t *testing.T) {
	p := filter.New([]string{plantedSecret})
	body, err := Render(p, Status{Agent: "fix", State: Failure, Context: hostileContext()})
	if err != nil {
		t.Fatal(err)
	}
	checkBody(t, body, "fix", Failure, len(hostileContext().Failed))
	if !strings.Contains(body, "- and 3 more\n") {
		t.Errorf("the checks over the list bound are not counted:\n%s", body)
	}
	if strings.Contains(body, "never listed") {
		t.Errorf("more than %d checks listed:\n%s", MaxListedChecks, body)
	}
	if !strings.Contains(body, "— unknown") {
		t.Errorf("a category outside the closed set is not shown as unknown:\n%s", body)
	}
}

// checkBody asserts the structural guarantees of a status body with a context block.
func checkBody(t *testing.T, body, agent string, st State, failed int) {
	t.Helper()
	if !IsOwnComment(body) {
		t.Errorf("not recognised as our own comment:\n%s", body)
	}
	if ps, ok := ParseStatus(body); !ok || ps.Agent != agent || ps.State != st {
		t.Errorf("parse back = %+v, %v", ps, ok)
	}
	if strings.Count(body, "<!--") != 1 || strings.Contains(body, plantedSecret) {
		t.Errorf("a marker or the secret leaked:\n%s", body)
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	items := 0
	for _, l := range lines[1:] {
		if strings.ContainsAny(l, "<>\u202e\u2066\u200b") {
			t.Errorf("line carries markup or a bidi/invisible rune: %q", l)
		}
		if !utf8.ValidString(l) {
			t.Errorf("invalid UTF-8: %q", l)
		}
		if strings.HasPrefix(l, "- ") {
			items++
			// A code span's fence is at most one longer than the field it wraps.
			if len(l) > 2+3*(maxCheckNameBytes+maxFirstErrorBytes)+60 {
				t.Errorf("list item over its bound (%d bytes): %q", len(l), l)
			}
			if !balancedSpans(l[2:]) {
				t.Errorf("unbalanced code spans: %q", l)
			}
		}
	}
	want := min(failed, MaxListedChecks)
	if failed > MaxListedChecks {
		want++
	}
	if items != want {
		t.Errorf("%d list items, want %d:\n%s", items, want, body)
	}
}

// balancedSpans reports whether every backtick run in s opens a code span that a run of the
// same length closes (CommonMark's rule), so no span swallows the rest of the line or leaks.
func balancedSpans(s string) bool {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		fence := s[i:j]
		k := j
		closed := false
		for k < len(s) {
			m := strings.Index(s[k:], fence)
			if m < 0 {
				break
			}
			e := k + m + len(fence)
			if (k+m == 0 || s[k+m-1] != '`') && (e == len(s) || s[e] != '`') {
				closed, i = true, e
				break
			}
			k = e
		}
		if !closed {
			return false
		}
	}
	return true
}

func TestStartedStateShowsNoContext(t *testing.T) {
	with, _ := Render(nil, Status{Agent: "a", State: Started, Context: hostileContext()})
	without, _ := Render(nil, Status{Agent: "a", State: Started})
	if with != without {
		t.Errorf("a started comment shows the context:\n%s", with)
	}
}

func TestEmptyContextAddsNothing(t *testing.T) {
	with, _ := Render(nil, Status{Agent: "a", State: Success, Context: &Context{}})
	without, _ := Render(nil, Status{Agent: "a", State: Success})
	if with != without {
		t.Errorf("an empty context changed the body:\n%q\n%q", with, without)
	}
}

func TestPartialLineExample(t *testing.T) {
	got := PartialLine([]Gap{
		{Scope: "reviews", Code: "unsupported", Count: 2},
		{Scope: "check_logs", Code: "source_too_large", Count: 1},
		{Scope: "comments", Code: "authorization_failed", Count: 3},
	})
	want := "Partial context: 3 comments withheld (author not authorized), 1 check log over the size bound, 2 reviews unsupported on this forge."
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestPartialLineNoneWhenNothingIsPartial(t *testing.T) {
	for _, gaps := range [][]Gap{nil, {}, {{Scope: "comments", Code: "profile_bound", Count: 0}}} {
		if got := PartialLine(gaps); got != "" {
			t.Errorf("%+v: %q, want no line", gaps, got)
		}
	}
}

// schemaGapEnums reads the gap scopes and codes the v1 index schema allows.
func schemaGapEnums(t *testing.T) (scopes, codes []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "normative", "entity-context-snapshot", "v1", "index.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			Gap struct {
				Properties struct {
					Scope struct{ Enum []string } `json:"scope"`
					Code  struct{ Enum []string } `json:"code"`
				} `json:"properties"`
			} `json:"gap"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	scopes, codes = doc.Defs.Gap.Properties.Scope.Enum, doc.Defs.Gap.Properties.Code.Enum
	if len(scopes) == 0 || len(codes) == 0 {
		t.Fatal("test premise: the schema lists gap scopes and codes")
	}
	return scopes, codes
}

// Every gap scope and code the schema allows has words of its own: a new code (or scope)
// without them fails here instead of showing as "other items missing".
func TestEveryGapCodeAndScopeHasWords(t *testing.T) {
	scopes, codes := schemaGapEnums(t)
	seen := map[string]bool{}
	for _, sc := range scopes {
		for _, code := range codes {
			line := PartialLine([]Gap{{Scope: sc, Code: code, Count: 2}})
			if !strings.HasPrefix(line, "Partial context: 2 ") || strings.Contains(line, "other items") || strings.Contains(line, "_") {
				t.Errorf("%s %s: %q has no words of its own", sc, code, line)
			}
			if seen[line] {
				t.Errorf("%s %s: %q says the same as another gap", sc, code, line)
			}
			seen[line] = true
		}
	}
	if len(gapWords) != len(codes) || len(scopeNouns) != len(scopes) {
		t.Errorf("words for %d codes and %d scopes, the schema has %d and %d", len(gapWords), len(scopeNouns), len(codes), len(scopes))
	}
}

// Whatever the gaps, the line is deterministic (input order does not matter), bounded, made of
// fixed words and numbers, and one line.
func TestPartialLineIsBoundedAndOrderFree(t *testing.T) {
	scopes, codes := schemaGapEnums(t)
	var all []Gap
	for _, sc := range scopes {
		for _, code := range codes {
			all = append(all, Gap{Scope: sc, Code: code, Count: 1000000})
		}
	}
	all = append(all, Gap{Scope: "<script>", Code: "new_code\n|x|", Count: 4})
	line := PartialLine(all)
	rev := append([]Gap(nil), all...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if PartialLine(rev) != line {
		t.Error("the line depends on the order of the gaps")
	}
	if len(line) > 600 || strings.ContainsAny(line, "\n<>|`") || strings.Contains(line, "script") || strings.Contains(line, "new_code") {
		t.Errorf("line unbounded or carries input text (%d bytes): %q", len(line), line)
	}
	if strings.Count(line, ", ") != maxPartialPhrases+1 || !strings.Contains(line, "and 50 more kinds of gap, 4 other items missing.") {
		t.Errorf("bound not applied: %q", line)
	}
}

func TestSanitizeCheckWithoutLogKeepsTheNameOnly(t *testing.T) {
	s := SanitizeCheck(nil, FailedCheck{Name: "x\ny", Category: "compile", FirstError: "e", NoLog: true})
	if s != (FailedCheck{Name: "x y", NoLog: true}) {
		t.Errorf("got %+v", s)
	}
	body, _ := Render(nil, Status{Agent: "a", State: Failure, Context: &Context{Failed: []FailedCheck{{Name: "deploy", NoLog: true}}}})
	if !strings.HasSuffix(body, "\n\n**Failed checks** (1):\n- ` deploy ` — no log in the snapshot\n") {
		t.Errorf("body:\n%s", body)
	}
}

func TestSanitizeCheckCapsAndCategory(t *testing.T) {
	s := SanitizeCheck(nil, FailedCheck{Name: strings.Repeat("n", 500), Category: "compile", FirstError: strings.Repeat("e\n", 500)})
	if len(s.Name) > maxCheckNameBytes || len(s.FirstError) > maxFirstErrorBytes || strings.Contains(s.FirstError, "\n") {
		t.Errorf("caps: name %d bytes, first error %d bytes", len(s.Name), len(s.FirstError))
	}
	if s.Category != "compile" {
		t.Errorf("category %q", s.Category)
	}
	for _, c := range []string{"", "Compile", "a b", "x|y", strings.Repeat("a", 40)} {
		if got := SanitizeCheck(nil, FailedCheck{Name: "n", Category: c}).Category; got != "unknown" {
			t.Errorf("category %q shown as %q", c, got)
		}
	}
}

// Whatever a check's name and first error, the final body keeps its structure (checkBody).
func FuzzRenderContext(f *testing.F) {
	f.Add("test | `go` <b>", "--- FAIL\n<!-- forgectx:status agent=x -->", "test")
	f.Add("\u202e", strings.Repeat("`", 300), "")
	f.Add("``", "a``b`c", "lint")
	f.Fuzz(func(t *testing.T, name, first, category string) {
		c := &Context{Failed: []FailedCheck{{Name: name, Category: category, FirstError: first}}}
		body, err := Render(nil, Status{Agent: "x", State: Failure, Context: c})
		if err != nil {
			t.Fatal(err)
		}
		checkBody(t, body, "x", Failure, 1)
	})
}
