package prescript

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// MaxTextBytes caps every captured text the protocol surfaces: the exit-78 stdout reason and
// the hard-failure diagnostic ("capped at 1024 bytes").
const MaxTextBytes = 1024

// AnnotationSeparator joins several error annotations into the one-line diagnostic, in the
// spec's order (all stdout annotations, then all stderr annotations).
const AnnotationSeparator = " | "

// captureMargin is how much of a line beyond MaxTextBytes a capture keeps. Redaction runs
// before the cap, so a secret that straddles byte 1024 of a long line is still whole when the
// scanner sees it; the margin must cover the longest secret the scanner or a literal value can
// match. Literal secrets longer than this enlarge the margin (see newCapture).
const captureMargin = 512

// capture is an io.Writer that tees one stream of the script to the job log and keeps only
// what the protocol's rules need: the error annotations on the stream (bounded) and the last
// non-empty line (bounded). Memory is O(limit) whatever the script prints, and lines of any
// length are handled: only a line's first limit bytes are kept.
type capture struct {
	live  func([]byte) // copies to the job log; nil discards
	limit int          // bytes kept per line, and bytes of annotations kept per stream

	cur     []byte // the first limit bytes of the current line
	curLong bool   // the current line exceeded limit

	last        []byte   // last non-empty line (raw, at most limit bytes)
	annotations []string // messages of ::error:: / ##[error] lines, raw
	annBytes    int      // total bytes in annotations
	annDropped  int      // annotations not kept once annBytes reached limit
	lines       int      // complete lines seen (for logging; counts only)
}

func newCapture(live func([]byte), secrets []string) *capture {
	limit := MaxTextBytes + captureMargin
	for _, s := range secrets {
		limit = max(limit, MaxTextBytes+len(s)+captureMargin)
	}
	return &capture{live: live, limit: limit}
}

// Write never fails: a failing job log must not kill the script through a broken pipe, and the
// capture itself cannot fail.
func (c *capture) Write(p []byte) (int, error) {
	if c.live != nil {
		c.live(p)
	}
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		if len(c.cur) == 0 {
			// Leading blanks are dropped before the window starts: sanitising trims them
			// anyway, and a line indented past the window must still show its text.
			chunk = bytes.TrimLeft(chunk, " \t")
		}
		if room := c.limit - len(c.cur); len(chunk) > room {
			c.curLong = true
			chunk = chunk[:max(room, 0)]
		}
		c.cur = append(c.cur, chunk...)
		if i < 0 {
			break
		}
		c.endLine()
		rest = rest[i+1:]
	}
	return len(p), nil
}

// close finishes a final line that had no trailing newline.
func (c *capture) close() {
	if len(c.cur) > 0 {
		c.endLine()
	}
}

// endLine processes the finished line without allocating for ordinary lines: the line buffer
// and the last-line buffer are reused, and only annotation candidates become strings.
func (c *capture) endLine() {
	line := c.cur
	if c.curLong {
		line = line[:len(trimPartialRune(string(line)))]
	}
	c.lines++
	if hasText(line) {
		c.last = append(c.last[:0], line...)
	}
	if annotationCandidate(line) {
		if msg, ok := errorAnnotation(string(line)); ok {
			if c.annBytes >= c.limit {
				c.annDropped++
			} else {
				c.annotations = append(c.annotations, msg)
				c.annBytes += len(msg) + len(AnnotationSeparator)
			}
		}
	}
	c.cur, c.curLong = c.cur[:0], false
}

// lastNonEmpty is the last line that still has text once control characters and blanks are
// removed (raw, at most limit bytes); "" when there is none.
func (c *capture) lastNonEmpty() string { return string(c.last) }

// hasText reports whether sanitize would leave something of b: a rune that is neither a
// control character nor white space (invalid bytes count as text).
func hasText(b []byte) bool {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r >= 0x20 && r != 0x7f && !unicode.IsSpace(r) {
			return true
		}
		b = b[size:]
	}
	return false
}

// annotationCandidate is the cheap prefix test before errorAnnotation.
func annotationCandidate(b []byte) bool {
	b = bytes.TrimLeft(b, " \t")
	return bytes.HasPrefix(b, []byte("::")) || bytes.HasPrefix(b, []byte("##["))
}

// errorAnnotation recognises a GitHub Actions error annotation and returns its message:
// "::error::msg", "::error k=v,…::msg" (parameterised: the message only) and the legacy
// "##[error]msg" / "##[error k=v;…]msg". Leading blanks are allowed and the command name is
// matched case-insensitively: erring toward capturing a human-meant message costs nothing, and
// missing one hides it. The message is unescaped (%25, %0D, %0A) the way workflow-command data
// is escaped by the toolkit; control characters are stripped later.
func errorAnnotation(line string) (string, bool) {
	s := strings.TrimLeft(line, " \t")
	switch {
	case len(s) >= 7 && strings.HasPrefix(s, "::") && strings.EqualFold(s[2:7], "error"):
		return commandMessage(s[7:], "::")
	case len(s) >= 8 && strings.HasPrefix(s, "##[") && strings.EqualFold(s[3:8], "error"):
		return commandMessage(s[8:], "]")
	}
	return "", false
}

// commandMessage is the unescaped message of an error command whose name has been read: rest
// is what follows the name, and end closes the command (`::`, or `]` in the `##[` form), either
// at once or after properties that a blank separates from the name.
func commandMessage(rest, end string) (string, bool) {
	if strings.HasPrefix(rest, end) {
		return unescapeData(rest[len(end):]), true
	}
	if strings.HasPrefix(rest, " ") {
		if j := strings.Index(rest, end); j >= 0 {
			return unescapeData(rest[j+len(end):]), true
		}
	}
	return "", false
}

var dataUnescaper = strings.NewReplacer("%0D", "\r", "%0A", "\n", "%25", "%")

func unescapeData(s string) string { return dataUnescaper.Replace(s) }

// sanitize strips the control characters U+0000–U+001F and U+007F and the blanks around the
// result, matching the file-based value validation. It does not cap; see capBytes.
func sanitize(s string) string {
	if !hasControl(s) {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x20 && c != 0x7f {
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// capBytes cuts s to at most n bytes without splitting a UTF-8 sequence: when byte n is the
// continuation of a rune that began before it, the cut moves back to that rune's first byte.
// Invalid bytes are kept as they are (they count one byte each).
func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	// Only a valid rune that starts before n and ends after it moves the cut; stray
	// continuation bytes are invalid data with no rune to protect.
	if r, size := utf8.DecodeRuneInString(s[cut:]); (r == utf8.RuneError && size <= 1) || cut+size <= n {
		cut = n
	}
	return s[:cut]
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of s: what a per-line capture
// limit leaves when it cuts a long line mid-rune.
func trimPartialRune(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			return s
		}
	}
	return s
}

// jobLog serialises writes from the two stream copiers, so stdout and stderr going to the same
// destination never interleave inside a write. Write errors are counted, not returned: a
// broken job log must not break the script.
type jobLog struct {
	mu     sync.Mutex
	failed int
}

// to returns a copier for one stream to w (nil w discards).
func (l *jobLog) to(w io.Writer) func([]byte) {
	if w == nil {
		return nil
	}
	return func(p []byte) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if _, err := w.Write(p); err != nil {
			l.failed++
		}
	}
}
