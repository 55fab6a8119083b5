package distill

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzForges = []Forge{gitHub, gitLab, Forgejo}

// FuzzExcerpt: for any payload bytes and event name, Excerpt never panics and always returns
// one valid JSON object; the text cap holds for every string it carries.
func FuzzExcerpt(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(fixtures, "github", "*", "0[0-1]-*.json"))
	gl, _ := filepath.Glob(filepath.Join(fixtures, "gitlab", "*.json"))
	for i, s := range append(seeds, gl...) {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		ev := filepath.Base(filepath.Dir(s))
		forge := uint8(0)
		if ev == "gitlab" {
			ev, forge = "", 1
		}
		f.Add(forge, ev, b)
		if i%3 == 0 {
			f.Add(uint8(2), ev, b[:len(b)/2]) // truncated JSON
		}
	}
	for _, s := range []string{``, `{}`, `[]`, `null`, `"x"`, `{"comment":"x"}`, `{"comment":{"body":"\u2028\ud800"}}`,
		`{"comment":{"body":"a","html_url":"https://api.github.com/x","user":{"login":7}}}`,
		`{"object_kind":"pipeline","object_attributes":{"id":1e999},"builds":[{"status":"failed","id":-1},{"status":"failed","id":"2"}]}`,
		`{"review":{"type":"pull_request_review_approved","content":"ok"},"sender":{"login":"a"},"pull_request":{"html_url":"https://x/y"}}`,
		`{"changes":{"labels":{"previous":[{"title":"a"}],"current":"x"}},"object_kind":"issue","object_attributes":{"iid":1}}`,
	} {
		f.Add(uint8(0), "issue_comment", []byte(s))
		f.Add(uint8(1), "", []byte(s))
	}
	f.Fuzz(func(t *testing.T, forge uint8, event string, payload []byte) {
		opts := Options{MaxTextChars: 80, MaxDisplayChars: 64}
		out, rep := Excerpt(fuzzForges[int(forge)%len(fuzzForges)], event, payload, opts)
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(out))
		if err := dec.Decode(&v); err != nil || dec.More() {
			t.Fatalf("not one JSON object: %v: %q", err, out)
		}
		if !utf8.Valid(out) {
			t.Fatalf("invalid UTF-8: %q", out)
		}
		if (len(v) == 0) != (rep.Warning != "") {
			t.Fatalf("empty excerpt %v but warning %q", len(v) == 0, rep.Warning)
		}
		checkCaps(t, v)
		// No address field is an API URL. (Free text is carried as written: a comment that
		// mentions https://api.github.com/... is the author's words, not GitHub's metadata.)
		checkAddresses(t, v)
	})
}

// checkCaps walks the excerpt: every string that is not an address is within the text cap.
func checkCaps(t *testing.T, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && !strings.Contains(k, "url") && !strings.Contains(k, "path") && k != "head_branch" && k != "ref" {
				if n := utf8.RuneCountInString(s); n > 80 {
					t.Fatalf("%s has %d characters, cap 80", k, n)
				}
			}
			checkCaps(t, e)
		}
	case []any:
		for _, e := range x {
			checkCaps(t, e)
		}
	}
}

// checkAddresses walks the excerpt: every *url field is an absolute http(s) web URL that is not
// an API URL.
func checkAddresses(t *testing.T, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && strings.HasSuffix(k, "url") {
				if !isWebURL(s) || strings.Contains(strings.ToLower(s), "api.github.com") {
					t.Fatalf("%s = %q is not a web URL", k, s)
				}
			}
			checkAddresses(t, e)
		}
	case []any:
		for _, e := range x {
			checkAddresses(t, e)
		}
	}
}

// FuzzEncodeString: the hand-written string encoder always produces a JSON string that decodes
// back to the input (invalid UTF-8 becomes U+FFFD, as in encoding/json).
func FuzzEncodeString(f *testing.F) {
	for _, s := range []string{"", `"`, `\`, "\x00\x1f\x7f", "\u2028\u2029", "\xff", "é🙂", `</script>&`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q encodes to invalid JSON %q: %v", s, b, err)
		}
		if want := strings.ToValidUTF8(s, "\ufffd"); got != want && !(!utf8.ValidString(s) && utf8.ValidString(got)) {
			t.Fatalf("round trip %q → %q", s, got)
		}
		if utf8.ValidString(s) && got != s {
			t.Fatalf("round trip %q → %q", s, got)
		}
	})
}
