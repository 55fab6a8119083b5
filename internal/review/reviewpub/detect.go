package reviewpub

import (
	"html"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/review/reviewctx"
)

// Reason is a closed DLP reason code.
type Reason string

// Reasons (closed; every one is a key of ReasonCounts).
const (
	reasonControl             Reason = "control"
	ReasonForbiddenContext    Reason = "forbidden_context"
	reasonHTML                Reason = "html"
	ReasonLaundering          Reason = "laundering"
	ReasonMarkdownDestination Reason = "markdown_destination"
	ReasonPII                 Reason = "pii"
	ReasonSecret              Reason = "secret"
	reasonWorkBound           Reason = "work_bound"
)

// hit is one detector result: the closed reason and the detector (subtype) that fired.
type hit struct {
	reason   Reason
	detector string
}

// fieldClass selects the detectors and the characters a value may hold.
type fieldClass int

const (
	// prose: multi-line Markdown rendered by the poster (message, warnings, outcome).
	classProse fieldClass = iota
	// line: single-line rendered text (path, tool name, manifest path and reason).
	classLine
	// code: existing_code and suggestion_code, rendered inside a code fence: tab allowed,
	// Markdown and HTML are not interpreted there, entities are shown literally.
	classCode
	// private: private metadata, never rendered; checked before retention.
	classPrivate
)

// Excerpt and work bounds of the forbidden-context comparison.
const (
	// excerptChars is the contiguous excerpt length compared (normalized characters).
	excerptChars = 24
	// minWholeChars is the shortest forbidden value compared as a whole (normalized).
	minWholeChars = 12
	// maxForbiddenChars bounds the normalized forbidden corpus; beyond it every unit is
	// uncertain and filtered (work_bound).
	maxForbiddenChars = 4 << 20
	// maxUnitChars bounds one checked value's normalized length.
	maxUnitChars = 1 << 20
)

// detector holds the compiled inputs: the secret pipeline and the forbidden-context index.
type detector struct {
	pipe *filter.Pipeline
	ex   *excerptIndex
	// whole are the normalized forbidden values of minWholeChars..excerptChars-1 characters,
	// looked for anywhere in a value (shorter ones only as the whole value: ex.whole).
	whole []string
	// secrets are the normalized configured secrets of minWholeChars or more: a copy with
	// inserted spaces, punctuation or Markdown is still that secret.
	secretNorm []string
	overBound  bool
}

func newDetector(in Inputs) *detector {
	d := &detector{pipe: filter.New(in.Secrets), ex: newExcerptIndex()}
	for _, v := range in.Secrets {
		for _, f := range variants(v) {
			if n := normalize(f); len(n) >= minWholeChars {
				d.secretNorm = append(d.secretNorm, string(n))
			}
		}
	}
	total := 0
	for _, v := range in.Forbidden {
		for _, f := range variants(v) {
			c := canonical(f)
			total += len(c)
			if total > maxForbiddenChars {
				d.overBound = true
				return d
			}
			if n := d.ex.add(c); len(n) >= minWholeChars && len(n) < excerptChars {
				d.whole = append(d.whole, string(n))
			}
		}
	}
	return d
}

// variants are the forms of a value that are compared: as written and, when it holds %XX
// escapes, percent-decoded.
func variants(v string) []string {
	if p := percentDecode(v); p != v {
		return []string{v, p}
	}
	return []string{v}
}

func decodeEntities(s string) string {
	for i := 0; i < 4 && strings.Contains(s, "&"); i++ {
		u := html.UnescapeString(s)
		if u == s {
			break
		}
		s = u
	}
	return s
}

// check runs every detector of the class over one value and returns the hits, deduplicated
// by reason and detector, in detector order.
func (d *detector) check(v string, c fieldClass) []hit {
	var hits []hit
	add := func(r Reason, det string) {
		for _, h := range hits {
			if h.reason == r && h.detector == det {
				return
			}
		}
		hits = append(hits, hit{r, det})
	}
	d.controls(v, c, add)
	decoded := norm.NFKC.String(v)
	if c != classCode && c != classPrivate {
		decoded = norm.NFKC.String(decodeEntities(v))
		if decoded != norm.NFKC.String(v) {
			add(ReasonLaundering, "html.entity")
		}
		d.markup(decoded, add)
		if quickAction.MatchString(decoded) {
			// a note line "/approve", "/merge", … is a forge command run with the bot's rights
			add(reasonControl, "control.quick-action")
		}
	}
	if decoded != v {
		add(ReasonLaundering, "unicode.nfkc")
	}
	if mixedScriptWord(decoded) {
		add(ReasonLaundering, "unicode.mixed-script")
	}
	// Secrets and PII are looked for in the value as written and in its decoded form, so an
	// entity-encoded or full-width copy is caught too; a stripped copy catches a secret
	// split by zero-width or bidi characters.
	forms := []string{v}
	stripped := stripFormat(decoded)
	for _, f := range []string{decoded, stripped, foldDigits(stripped), percentDecode(stripped)} {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, form := range forms {
		d.secrets(form, add)
		piiPatterns(form, add)
	}
	d.forbidden(v, add)
	return hits
}

// controls flags control characters (tab only in code, LF only in multi-line classes) and
// format characters (zero-width, bidi, tags, variation selectors: laundering).
func (d *detector) controls(v string, c fieldClass, add func(Reason, string)) {
	for _, r := range v {
		switch {
		case r == '\t':
			if c != classCode {
				add(reasonControl, "control.tab")
			}
		case r == '\n':
			if c == classLine || c == classPrivate {
				add(reasonControl, "control.newline")
			}
		case r == utf8.RuneError:
			add(reasonControl, "control.invalid")
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			add(reasonControl, "control.c0c1")
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
			add(ReasonLaundering, "unicode.bidi")
		case r >= 0x200B && r <= 0x200D, r == 0xFEFF, r == 0x2060:
			add(ReasonLaundering, "unicode.zero-width")
		case unicode.Is(unicode.Cf, r), r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF, r >= 0xE0000 && r <= 0xE007F:
			add(ReasonLaundering, "unicode.format")
		}
	}
}

// mixedScriptWord reports a word (a run of letters) that mixes Latin and Cyrillic letters:
// the homoglyph form of laundering ("rоllout" with a Cyrillic о), which NFKC does not fold.
// Whole words in one script (Russian prose) are not flagged; Greek is left alone because
// review prose mixes it with Latin legitimately ("O(nα)").
func mixedScriptWord(s string) bool {
	latin, other := false, false
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			latin = true
		case r >= utf8.RuneSelf && unicode.Is(unicode.Cyrillic, r):
			other = true
		case r >= utf8.RuneSelf && unicode.Is(unicode.Latin, r):
			latin = true
		case unicode.IsLetter(r) || unicode.IsMark(r):
		default:
			latin, other = false, false
			continue
		}
		if latin && other {
			return true
		}
	}
	return false
}

func stripFormat(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || (r >= 0xFE00 && r <= 0xFE0F) {
			return -1
		}
		return r
	}, s)
}

var (
	mdLink = regexp.MustCompile(`\][(\[]`)
	// a reference definition may sit inside a block quote or list item ("> [x]: /p", "- [x]: /p")
	mdRefDef = regexp.MustCompile(`(?m)^[ \t>*+\-0-9.)]*\[[^\]\n]+\]:`)
	// autolink is a CommonMark autolink of any scheme ("<irc:x>", "<ssh:x>"): the forge
	// renders it as a link whatever the scheme
	autolink  = regexp.MustCompile(`<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>`)
	urlScheme = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]{1,31}:(//|[^\s]*@)|(?i)\b(javascript|data|vbscript|mailto|file):|(?i)\bwww\.[a-z0-9-]`)
	// htmlTag is deliberately not every "<x": review prose is full of generics (Vec<u8>). It
	// flags comments (a forged marker), the tags that fetch, link, embed, script or restyle,
	// and any URL-bearing attribute.
	htmlTag    = regexp.MustCompile(`(?i)<!--|</?(a|img|image|picture|source|video|audio|track|iframe|frame|object|embed|link|script|style|svg|math|form|input|button|base|meta|details|summary|div|span|table|p|br|font)\b|\b(src|href|srcset|action|formaction|poster|background|xlink:href)\s*=`)
	mdImageBeg = regexp.MustCompile(`!\[`)
	// quickAction is a line that starts with a slash command (GitLab quick actions run from
	// note text, outside code blocks).
	quickAction = regexp.MustCompile(`(?m)^[ \t]*/[A-Za-z_]`)
)

// markup flags Markdown destinations (links, images, reference definitions, autolinks and
// bare URLs, which the forge renders as links) and raw HTML (tags, comments: a comment
// could forge a toolkit marker). It runs on the decoded form, so entity-encoded and
// full-width markup is caught.
func (d *detector) markup(s string, add func(Reason, string)) {
	// byte prefilters keep the regular expressions off values that cannot match
	hasBracket := strings.IndexByte(s, ']') >= 0
	switch {
	case hasBracket && mdImageBeg.MatchString(s) && mdLink.MatchString(s):
		add(ReasonMarkdownDestination, "markdown.image")
	case hasBracket && mdLink.MatchString(s):
		add(ReasonMarkdownDestination, "markdown.link")
	}
	if hasBracket && mdRefDef.MatchString(s) {
		add(ReasonMarkdownDestination, "markdown.reference")
	}
	if (strings.IndexByte(s, ':') >= 0 || strings.Contains(s, "www.") || strings.Contains(s, "WWW.")) && urlScheme.MatchString(s) {
		add(ReasonMarkdownDestination, "markdown.url")
	}
	if strings.IndexByte(s, '<') >= 0 && strings.IndexByte(s, ':') >= 0 && autolink.MatchString(s) {
		add(ReasonMarkdownDestination, "markdown.autolink")
	}
	if (strings.IndexByte(s, '<') >= 0 || strings.IndexByte(s, '=') >= 0) && htmlTag.MatchString(s) {
		add(reasonHTML, "html.tag")
	}
}

// secrets runs the filter pipeline's redaction (registered secrets and the pattern floor).
// Its SSN, payment-card and IBAN detectors are PII.
func (d *detector) secrets(s string, add func(Reason, string)) {
	if s == "" {
		return
	}
	_, fs := d.pipe.Redact(s)
	for _, f := range fs {
		switch f.Code {
		case "redact.ssn", "redact.payment-card", "redact.iban":
			add(ReasonPII, f.Code)
		default:
			add(ReasonSecret, f.Code)
		}
	}
}

// piiPatterns applies the closed PII patterns this package adds to the filter's (reviewctx.FindPII):
// e-mail addresses and separator-bearing phone numbers.
func piiPatterns(s string, add func(Reason, string)) {
	for _, code := range reviewctx.FindPII(s) {
		add(ReasonPII, code)
	}
}

// forbidden compares the value's normalized forms (as written and percent-decoded) with the
// forbidden context: every indexed 24-character excerpt (excerptIndex), every whole
// forbidden value of minWholeChars or more anywhere in the value, and a whole value equal to
// any forbidden value; and with the normalized configured secrets.
func (d *detector) forbidden(v string, add func(Reason, string)) {
	var ns [][]rune
	for _, f := range variants(v) {
		ns = append(ns, normalize(f))
	}
	for _, n := range ns {
		if d.hasSecret(n) {
			add(ReasonSecret, "secret.normalized")
			break
		}
	}
	if d.overBound || len(ns[0]) > maxUnitChars {
		add(reasonWorkBound, "forbidden.work-bound")
		return
	}
	for _, n := range ns {
		if d.ex.contains(n) {
			add(ReasonForbiddenContext, "forbidden.excerpt")
			return
		}
	}
	for _, n := range ns {
		if d.hasWhole(n) {
			add(ReasonForbiddenContext, "forbidden.whole")
			return
		}
	}
}

func (d *detector) hasSecret(n []rune) bool {
	for _, sec := range d.secretNorm {
		if strings.Contains(string(n), sec) {
			return true
		}
	}
	return false
}

func (d *detector) hasWhole(n []rune) bool {
	s := string(n)
	if _, ok := d.ex.whole[s]; ok && s != "" {
		return true
	}
	for _, w := range d.whole {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
