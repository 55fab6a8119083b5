package reviewctx

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

var (
	emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]+[@＠﹫][A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
	// emailSpelledRe is an address written to dodge the plain pattern: the at sign spelled
	// "at" inside brackets, either tight ("bob[at]example.org", "bob(at)example(dot)org") or
	// spaced on both sides ("bob [at] example [dot] org"). A bare " at " is not taken ("look
	// at README.md" is prose), nor a bracket spaced on one side only (code: "data[at] x.y").
	emailSpelledRe = regexp.MustCompile(`(?i)[a-z0-9._%+-]+(?:` +
		`[\[({<]at[\])}>][a-z0-9-]+(?:(?:\.|[\[({<]dot[\])}>])[a-z0-9-]+)*(?:\.|[\[({<]dot[\])}>])[a-z]{2,}` + `|` +
		`[ \t]+[\[({<][ \t]*at[ \t]*[\])}>][ \t]+[a-z0-9-]+(?:(?:\.|[ \t]*[\[({<][ \t]*dot[ \t]*[\])}>][ \t]*)[a-z0-9-]+)*(?:\.|[ \t]*[\[({<][ \t]*dot[ \t]*[\])}>][ \t]*)[a-z]{2,})`)
	// phoneRe needs separators and a final group of four digits: a bare digit run (a build
	// number, an opaque ID) is not phone-like; a separator-bearing technical identifier can
	// still be (conservative). A closing parenthesis is itself a separator: "(415)555-0100".
	phoneRe = regexp.MustCompile(`\+?(?:\(\d{1,4}\)[ .-]?\(?\d{2,4}\)?|\(?\d{1,4}\)?[ .-]\(?\d{2,4}\)?)(?:[ .-]\(?\d{2,4}\)?){0,2}[ .-]\d{4}`)
)

// FindPII returns the codes of the closed personal-identifier patterns s matches (e-mail
// addresses, also with a full-width at sign or the at sign spelled in brackets, and
// separator-bearing phone numbers): the one rule both the context DLP at admission (this
// package, on what reaches the model) and the publication DLP (internal/review/reviewpub, on the
// engine's result) apply. The filter pipeline's redact.ssn, redact.payment-card and redact.iban
// are the other closed PII patterns; both DLPs apply them through the pipeline.
// Codes come in the order e-mail, phone (10–15 digits with separators, not inside a word).
func FindPII(s string) []string {
	var codes []string
	if (strings.ContainsAny(s, "@＠﹫") && emailRe.MatchString(s)) || (strings.ContainsAny(s, "[({<") && emailSpelledRe.MatchString(s)) {
		codes = append(codes, identEmail)
	}
	digits := 0
	for i := 0; i < len(s) && digits < 10; i++ {
		if s[i] >= '0' && s[i] <= '9' {
			digits++
		}
	}
	if digits < 10 {
		return codes
	}
	for _, m := range phoneRe.FindAllStringIndex(s, -1) {
		if phoneLike(s, m[0], m[1]) {
			return append(codes, identPhone)
		}
	}
	return codes
}

func phoneLike(s string, i, j int) bool {
	if i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' {
			return false
		}
	}
	if j < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[j:]); unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	digits := 0
	for _, r := range s[i:j] {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	return digits >= 10 && digits <= 15
}
