package reviewctx

import (
	"slices"
	"testing"
)

// E-mail addresses are found as written and as written to dodge the plain pattern (a
// full-width at sign, "at"/"dot" spelled in brackets); ordinary prose with "at" is not one.
func TestFindEmailForms(t *testing.T) {
	for _, s := range []string{
		"questions to alice@example.com please",
		"questions to alice＠example.com please",
		"ping bob.smith [at] example.org now",
		"ping bob.smith(at)example(dot)org now",
		"ping Bob {AT} mail [dot] example [dot] net",
		"ping bob <at> example.org",
		"ping bob[at]example.org",
	} {
		if got := FindPII(s); !slices.Contains(got, identEmail) {
			t.Errorf("FindPII(%q) = %v, want %s", s, got, identEmail)
		}
	}
	for _, s := range []string{
		"look at README.md",
		"the cache [at] startup is cold",
		"see docs (at your leisure).",
		"array[at] index.go",
		"data[at]\n\tfoo.Bar()",
		"reading [at] line 4. Then",
	} {
		if got := FindPII(s); slices.Contains(got, identEmail) {
			t.Errorf("FindPII(%q) = %v, want no e-mail", s, got)
		}
	}
}
