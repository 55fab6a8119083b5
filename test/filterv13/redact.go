package filterv13

import (
	"bytes"
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
	for _, c := range src {
		if isUpper(c) {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
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
	n := len(b)
	for i := 0; i < n; {
		switch byteClass[b[i]] {
		case clOther:
			i++
		case clAlnum:
			end := setAlnum.run(b, i)
			if i == 0 || !isAlnum(b[i-1]) {
				st := i
				// A token glued to an escape is still at a word start: URL-encoded text
				// ("%3Aghp_…", "%2Fhooks.slack.com") and JSON or shell escapes ("\nghp_…").
				if i > 0 && b[i-1] == '%' && i+2 < end && isHex(b[i]) && isHex(b[i+1]) {
					st = i + 2
				} else if i > 0 && b[i-1] == '\\' && i+1 < end && (b[i] == 'n' || b[i] == 't' || b[i] == 'r') {
					st = i + 1
				} else if i > 0 && b[i-1] == '\\' && b[i] == 'u' && i+5 < end && isHex(b[i+1]) && isHex(b[i+2]) && isHex(b[i+3]) && isHex(b[i+4]) {
					st = i + 5 // "\u003dghp_…"
				}
				for {
					var s span
					var ok bool
					if isDigit(b[st]) {
						s, ok = detectNumber(b, st)
					} else {
						s, ok = detectPrefix(b, st)
					}
					if ok {
						spans = append(spans, s)
						if s.end > end {
							end = s.end
						}
						break
					}
					if st == i {
						break
					}
					st = i // the escape reading found nothing: try the plain word too
				}
			}
			i = end
		case clSpecial:
			var s span
			ok := false
			switch b[i] {
			case '-':
				switch {
				case bytes.HasPrefix(b[i:], beginMarker):
					s, ok = detectPrivateKey(b, i)
				case i+1 < n && b[i+1] == '-':
					s, ok = detectLongFlag(b, i)
				case i+2 < n && b[i+1] == 'u' && b[i+2] == ' ':
					s, ok = detectCurlUser(b, i, i+3)
				case i+2 < n && b[i+1] == 'p':
					s, ok = detectPasswordFlag(b, i)
				}
			case ':':
				if i+2 < n && b[i+1] == '/' && b[i+2] == '/' || i+4 < n && string(b[i+1:i+5]) == `\/\/` {
					s, ok = detectURL(b, i)
					break
				}
				if skip := skipDataURI(b, i); skip > i {
					i = skip
					continue
				}
				s, ok = detectAssignment(b, i)
			case '=':
				s, ok = detectAssignment(b, i)
			case '%':
				if i+9 <= n && bytes.EqualFold(b[i:i+9], encodedScheme) {
					s, ok = detectEncodedURL(b, i)
				}
			case '>':
				s, ok = detectXMLElement(b, i)
			}
			if ok {
				// A value that opens a private-key block redacts the whole block, whatever
				// the value parser took (an unquoted value ends at the first space).
				if s.kind != cPrivateKey && bytes.HasPrefix(b[s.start:], beginMarker) {
					if t, tok := detectPrivateKey(b, s.start); tok {
						s = t
					}
				}
				// A value that is itself a known token takes the more specific kind.
				if s.kind != cPrivateKey && s.start < n && isAlnum(b[s.start]) && (s.start == 0 || !isAlnum(b[s.start-1])) {
					var t span
					var tok bool
					if isDigit(b[s.start]) {
						t, tok = detectNumber(b, s.start)
					} else {
						t, tok = detectPrefix(b, s.start)
					}
					if tok {
						spans = append(spans, t)
					}
				}
				spans = append(spans, s)
				// Skip the value: everything in it is redacted already, and never rescanning
				// it keeps the scan linear ("token=token=token=…").
				i = max(s.end, i+1)
				continue
			}
			i++
		}
	}
	return spans
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
