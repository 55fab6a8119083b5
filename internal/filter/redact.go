package filter

import (
	"bytes"
	"slices"
	"sort"
	"strings"
)

// span is one detected secret: b[start:end] is replaced by replacements[kind].
type span struct {
	start, end int
	kind       code
}

// byte classes for the single forward scan.
const (
	clOther uint8 = iota
	clAlnum
	clSpecial // = : - % > : a detector anchors on the byte itself
)

var byteClass = func() (t [256]uint8) {
	for b := '0'; b <= '9'; b++ {
		t[b] = clAlnum
	}
	for b := 'a'; b <= 'z'; b++ {
		t[b] = clAlnum
		t[b-'a'+'A'] = clAlnum
	}
	t['='] = clSpecial
	t[':'] = clSpecial
	t['-'] = clSpecial
	t['%'] = clSpecial
	t['>'] = clSpecial
	return t
}()

func isAlnum(b byte) bool { return byteClass[b] == clAlnum }

func isHex(b byte) bool { return isDigit(b) || (b|0x20 >= 'a' && b|0x20 <= 'f') }

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isUpper(b byte) bool { return b >= 'A' && b <= 'Z' }

// appendLowerASCII appends src to dst with ASCII upper case folded to lower case (other bytes
// unchanged). Callers pass a stack buffer as dst so key classification allocates nothing.
func appendLowerASCII(dst, src []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(src))
	lowerInto(dst[n:n], src) // into dst's spare capacity, which holds src
	return dst[:n+len(src)]
}

// hasAnySuffix reports whether s ends with one of suffixes.
func hasAnySuffix(s string, suffixes []string) bool {
	for _, suf := range suffixes {
		if strings.HasSuffix(s, suf) {
			return true
		}
	}
	return false
}

func isLower(b byte) bool { return b >= 'a' && b <= 'z' }

// tokenByte sets: [A-Za-z0-9], plus '_', plus '-'.
var (
	setAlnum      = mkset("")
	setAlnumU     = mkset("_")
	setAlnumUD    = mkset("_-")
	setAlnumUDDot = mkset("_-.")
)

type byteSet [256]bool

func mkset(extra string) (s byteSet) {
	for b := 0; b < 256; b++ {
		s[b] = isAlnum(byte(b))
	}
	for i := 0; i < len(extra); i++ {
		s[extra[i]] = true
	}
	return s
}

// run returns the end of the run of bytes in set starting at i.
func (s *byteSet) run(b []byte, i int) int {
	for i < len(b) && s[b[i]] {
		i++
	}
	return i
}

// detect finds every secret in b: registered literals and the pattern floor. Spans may
// overlap; redactSpans resolves them.
func (p *Pipeline) detect(b []byte, spans []span) []span {
	spans = p.detectLiterals(b, spans)
	n := len(b)
	for i := 0; i < n; {
		switch byteClass[b[i]] {
		case clOther:
			i++
		case clAlnum:
			end := setAlnum.run(b, i)
			// a word start that can open a token: a digit, a pair of bytes some prefix rule
			// or the IBAN and webhook detectors start with, or a word glued to an escape
			// (detectPrefix and detectNumber reject every other word at once)
			found := false
			if (i == 0 || !isAlnum(b[i-1])) && (isDigit(b[i]) || i+1 < n && prefixPair[pairKey(b[i], b[i+1])] ||
				i > 0 && (b[i-1] == '%' || b[i-1] == '\\')) {
				var s span
				if s, found = detectWord(b, i, end); found {
					spans = append(spans, s)
					end = max(end, s.end)
				}
			}
			if !found && end < n && b[end] == '_' && end-i > 3 {
				if s, ok := detectGluedGitHub(b, i, end); ok {
					spans = append(spans, s)
					end = max(end, s.end)
				}
			}
			i = end
		case clSpecial:
			i, spans = detectSpecial(b, i, spans)
		}
	}
	return spans
}

// gluedGitHubPrefixes are the GitHub token prefixes without their '_' (the alphanumeric run
// that detect sees ends right before it).
var gluedGitHubPrefixes = []string{"ghp", "gho", "ghu", "ghs", "ghr", "github"}

// detectGluedGitHub finds a GitHub token glued to the letters or digits before it
// ("abcghp_…", "tokengithub_pat_…": a concatenated log line, a value pasted after a word with
// no separator): the alphanumeric run [i, end) is followed by '_' and ends with a token prefix
// that does not start it (a word that starts with one was tried by detectWord). The token
// rule itself then decides, so the body needs its usual length and must end the token.
func detectGluedGitHub(b []byte, i, end int) (span, bool) {
	if b[end-2] != 'h' && b[end-1] != 'b' { // "gh?" or "github"
		return span{}, false
	}
	for _, p := range gluedGitHubPrefixes {
		st := end - len(p)
		if st <= i || string(b[st:end]) != p {
			continue
		}
		// glued, the body must not be lower-case letters only and must not go on with '_' (a
		// long identifier such as "laughs_…" is no token; random base62 always has a digit or
		// an upper-case letter)
		if s, ok := detectPrefix(b, st); ok && s.kind == cGitHubToken && !allLowerLetters(b[end+1:s.end]) && (s.end == len(b) || b[s.end] != '_') {
			return s, true
		}
	}
	return span{}, false
}

// allLowerLetters reports a body of lower-case ASCII letters and '_' only.
func allLowerLetters(b []byte) bool {
	for _, c := range b {
		if !isLower(c) && c != '_' {
			return false
		}
	}
	return true
}

// detectLiterals adds a span for every occurrence of a registered literal.
func (p *Pipeline) detectLiterals(b []byte, spans []span) []span {
	for _, lit := range p.literals {
		for off := 0; ; {
			k := bytes.Index(b[off:], lit)
			if k < 0 {
				break
			}
			spans = append(spans, span{off + k, off + k + len(lit), cRunCredential})
			off += k + len(lit)
		}
	}
	return spans
}

// detectWord runs the token and number detectors at the word start i (the alphanumeric run
// ends at end). A token glued to an escape is still at a word start: URL-encoded text
// ("%3Aghp_…", "%2Fhooks.slack.com") and JSON or shell escapes ("\nghp_…", "\u003dghp_…")
// are read past first; when that finds nothing, the plain word is tried too.
func detectWord(b []byte, i, end int) (span, bool) {
	if st := escapeSkip(b, i, end); st != i {
		if s, ok := detectToken(b, st); ok {
			return s, true
		}
	}
	return detectToken(b, i)
}

// escapeSkip returns where a word glued to a URL-encoded byte or a JSON/shell escape really
// starts, or i.
func escapeSkip(b []byte, i, end int) int {
	if i == 0 {
		return i
	}
	switch {
	case b[i-1] == '%' && i+2 < end && isHex(b[i]) && isHex(b[i+1]):
		return i + 2
	case b[i-1] == '\\' && i+1 < end && (b[i] == 'n' || b[i] == 't' || b[i] == 'r'):
		return i + 1
	case b[i-1] == '\\' && b[i] == 'u' && i+5 < end && isHex(b[i+1]) && isHex(b[i+2]) && isHex(b[i+3]) && isHex(b[i+4]):
		return i + 5 // "\u003dghp_…"
	}
	return i
}

// detectToken runs the number detectors (a digit) or the prefix detectors at st.
func detectToken(b []byte, st int) (span, bool) {
	if isDigit(b[st]) {
		return detectNumber(b, st)
	}
	return detectPrefix(b, st)
}

// detectSpecial runs the detectors anchored on the special byte at i and returns where the
// scan goes on. A detected value is skipped whole: everything in it is redacted already, and
// never rescanning it keeps the scan linear ("token=token=token=…").
func detectSpecial(b []byte, i int, spans []span) (int, []span) {
	var s span
	ok := false
	switch b[i] {
	case '-':
		s, ok = detectDash(b, i)
	case ':':
		n := len(b)
		if i+2 < n && b[i+1] == '/' && b[i+2] == '/' || i+4 < n && string(b[i+1:i+5]) == `\/\/` {
			s, ok = detectURL(b, i)
			break
		}
		if skip := skipDataURI(b, i); skip > i {
			return skip, spans
		}
		s, ok = detectAssignment(b, i)
	case '=':
		s, ok = detectAssignment(b, i)
	case '%':
		if i+9 <= len(b) && bytes.EqualFold(b[i:i+9], encodedScheme) {
			s, ok = detectEncodedURL(b, i)
		}
	case '>':
		s, ok = detectXMLElement(b, i)
	}
	if !ok {
		return i + 1, spans
	}
	s, spans = refineValue(b, s, spans)
	return max(s.end, i+1), append(spans, s)
}

// detectDash runs the detectors anchored on a '-': a private-key block, a long flag, curl's
// -u and the short password flags.
func detectDash(b []byte, i int) (span, bool) {
	n := len(b)
	switch {
	case bytes.HasPrefix(b[i:], beginMarker):
		return detectPrivateKey(b, i)
	case i+1 < n && b[i+1] == '-':
		return detectLongFlag(b, i)
	case i+2 < n && b[i+1] == 'u' && b[i+2] == ' ':
		return detectCurlUser(b, i, i+3)
	case i+2 < n && b[i+1] == 'p':
		return detectPasswordFlag(b, i)
	}
	return span{}, false
}

// refineValue looks again at a detected value: one that opens a private-key block redacts the
// whole block, whatever the value parser took (an unquoted value ends at the first space),
// and one that is itself a known token also gets a span of that more specific kind.
func refineValue(b []byte, s span, spans []span) (span, []span) {
	if s.kind == cPrivateKey {
		return s, spans
	}
	if bytes.HasPrefix(b[s.start:], beginMarker) {
		if t, tok := detectPrivateKey(b, s.start); tok {
			return t, spans
		}
	}
	if s.start < len(b) && isAlnum(b[s.start]) && (s.start == 0 || !isAlnum(b[s.start-1])) {
		if t, tok := detectToken(b, s.start); tok {
			spans = append(spans, t)
		}
	}
	return s, spans
}

// redactSpans merges overlapping spans (the merged span takes the highest-priority kind) and
// writes the redacted text. It returns b itself when there is nothing to redact. When owned
// (b is the pipeline's own buffer) and no replacement ever puts the write position ahead of
// the read position, the text is rewritten in place, saving a copy of the input's size.
func redactSpans(b []byte, spans []span, c *counts, owned bool) []byte {
	if len(spans) == 0 {
		return b
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	merged := spans[:1]
	for _, s := range spans[1:] {
		m := &merged[len(merged)-1]
		if s.start < m.end {
			m.end = max(m.end, s.end)
			m.kind = min(m.kind, s.kind)
			continue
		}
		merged = append(merged, s)
	}
	// g is the furthest the write position ever runs ahead of the read position (the largest
	// prefix growth). When b is the pipeline's own buffer and has g bytes of spare capacity,
	// the text is shifted right by g once and rewritten in place: no second copy of the
	// input's size.
	grow, g := 0, 0
	for _, s := range merged {
		grow += len(replacements[s.kind]) - (s.end - s.start)
		g = max(g, grow)
	}
	if owned && cap(b) >= len(b)+g {
		n := len(b)
		b = b[:n+g]
		if g > 0 {
			copy(b[g:], b[:n]) // memmove
		}
		w, last := 0, 0
		for _, s := range merged {
			w += copy(b[w:], b[g+last:g+s.start]) // w <= g+last always
			w += copy(b[w:], replacements[s.kind])
			c[s.kind]++
			last = s.end
		}
		w += copy(b[w:], b[g+last:g+n])
		return b[:w]
	}
	out := make([]byte, 0, len(b)+max(grow, 0))
	last := 0
	for _, s := range merged {
		out = append(out, b[last:s.start]...)
		out = append(out, replacements[s.kind]...)
		c[s.kind]++
		last = s.end
	}
	return append(out, b[last:]...)
}

// redact is pipeline step 2 on the complete normalised text; owned says b may be rewritten.
func (p *Pipeline) redact(b []byte, c *counts, owned bool) []byte {
	spans := p.detect(b, nil)
	return redactSpans(b, spans, c, owned)
}

var redactedMarker = []byte("[REDACTED:")
