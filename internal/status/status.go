// Package status renders and parses what forgectx writes back to a forge: the sticky status
// comment of an agent on an entity, and the immutable run receipt that
// history/agent-runs.json is read back from (entity-context-snapshot v1, "Relationships,
// history, and collection profiles": "history/agent-runs.json contains only immutable,
// forge-observable Fullsend run receipts").
//
// It is forge-neutral: adapters implement forge.Commenter, this package decides the bytes.
//
// Markers are HTML comments on the FIRST line of a body, so forge markdown hides them and a
// marker-like string anywhere else (a detail, a quoted comment) is never taken for one.
package status

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/forgectx/forgectx/internal/filter"
)

// State is the state a status comment shows.
type State string

// States of a status comment. Started is the only non-final state; Reconcile turns a
// Started comment left by a dead job into Cancelled.
const (
	Started   State = "started"
	Success   State = "success"
	Failure   State = "failure"
	Skipped   State = "skipped"
	Cancelled State = "cancelled"
	TimedOut  State = "timed_out"
)

var icons = map[State]string{
	Started:   "⏳",
	Success:   "✅",
	Failure:   "❌",
	Skipped:   "⏭️",
	Cancelled: "⚠️",
	TimedOut:  "⚠️",
}

var words = map[State]string{
	Started:   "started",
	Success:   "succeeded",
	Failure:   "failed",
	Skipped:   "skipped",
	Cancelled: "was cancelled",
	TimedOut:  "timed out",
}

// Valid reports whether s is one of the states above.
func (s State) Valid() bool { _, ok := icons[s]; return ok }

// maxDetailBytes caps the rendered one-line detail (after sanitising).
const maxDetailBytes = 300

// agentPattern is what an agent name in a marker may look like; harness validation enforces
// it, and Render refuses anything else so a name can never break out of the marker.
var agentPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Status is one rendering of an agent's sticky status comment.
type Status struct {
	Agent  string // harness agent name: ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$
	State  State
	RunURL string // link to the CI run; only http(s) URLs are rendered
	Detail string // optional one-line detail: failure diagnostic, skip reason; untrusted
	// Context, on a final state, adds the failed checks of the head and the partial-context
	// line below the state line (nil, or a Started state: nothing is added).
	Context *Context
}

// Marker returns the hidden first-line marker that identifies the sticky status comment of
// agent on an entity. Lookups match it exactly on the first line.
func Marker(agent string) string {
	return fmt.Sprintf("<!-- forgectx:status agent=%s -->", agent)
}

// Render returns the comment body for s. The detail passes the filter's Unicode safety and
// secret redaction, is folded to one line, capped at maxDetailBytes on a UTF-8 boundary and
// rendered inside a code span with < and > replaced, so it cannot forge markers, links,
// mentions or HTML. On a final state, s.Context adds the failed checks and the
// partial-context line after a blank line; the first two lines, which ParseStatus and
// IsOwnComment read, are the same with or without it.
func Render(p *filter.Pipeline, s Status) (string, error) {
	if !agentPattern.MatchString(s.Agent) {
		return "", fmt.Errorf("status: agent: %q does not match %s", s.Agent, agentPattern)
	}
	if !s.State.Valid() {
		return "", fmt.Errorf("status: state: %q is not a status state", s.State)
	}
	var b strings.Builder
	b.WriteString(Marker(s.Agent))
	b.WriteString("\n")
	fmt.Fprintf(&b, "%s **forgectx** agent `%s` %s", icons[s.State], s.Agent, words[s.State])
	if u := safeURL(s.RunURL); u != "" {
		fmt.Fprintf(&b, " ([CI run](%s))", u)
	}
	b.WriteString(".")
	if d := SanitizeDetail(p, s.Detail); d != "" {
		b.WriteString(" ")
		b.WriteString(codeSpan(d))
	}
	b.WriteString("\n")
	if s.State != Started {
		renderContext(&b, p, s.Context)
	}
	return b.String(), nil
}

// Parsed is what ParseStatus reads back from a status comment body.
type Parsed struct {
	Agent string
	State State
}

// markerLine matches the first line of a status comment and captures the agent name.
var markerLine = regexp.MustCompile(`^<!-- forgectx:status agent=([A-Za-z0-9][A-Za-z0-9._-]{0,63}) -->$`)
var stateLine = regexp.MustCompile(`^(?:⏳|✅|❌|⏭️|⚠️) \*\*forgectx\*\* agent ` + "`" + `[^` + "`" + `]+` + "`" + ` (started|succeeded|failed|skipped|was cancelled|timed out)`)

// ParseStatus reads the agent and state of a status comment body, ok=false when the body is
// not a forgectx status comment.
func ParseStatus(body string) (Parsed, bool) {
	first, rest, _ := strings.Cut(body, "\n")
	m := markerLine.FindStringSubmatch(first)
	if m == nil {
		return Parsed{}, false
	}
	second, _, _ := strings.Cut(rest, "\n")
	sm := stateLine.FindStringSubmatch(second)
	if sm == nil {
		return Parsed{}, false
	}
	for st, w := range words {
		if w == sm[1] {
			return Parsed{Agent: m[1], State: st}, true
		}
	}
	return Parsed{}, false
}

// SanitizeDetail makes an untrusted detail safe for one status line: filter Unicode safety and
// redaction, control characters, line breaks and every other space character folded to
// spaces, runs of spaces collapsed, anything that renders invisibly dropped (invisible
// reports), < and > replaced by ‹ and ›, and the result capped at maxDetailBytes on a UTF-8
// boundary with "…" appended when cut.
func SanitizeDetail(p *filter.Pipeline, detail string) string {
	return sanitizeLine(p, detail, maxDetailBytes)
}

// sanitizeLine is SanitizeDetail with the cap in bytes as a parameter.
func sanitizeLine(p *filter.Pipeline, detail string, maxBytes int) string {
	if p == nil {
		p = filter.New(nil)
	}
	s, _ := p.Sanitize(detail)
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || r == '\u0085' || r == '\u2028' || r == '\u2029' || unicode.IsSpace(r):
			r = ' '
		case invisible(r):
			continue
		case r == '<':
			r = '‹'
		case r == '>':
			r = '›'
		}
		if r == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b.WriteRune(r)
	}
	out := strings.TrimSpace(b.String())
	if len(out) > maxBytes {
		cut := maxBytes - len("…")
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = strings.TrimSpace(out[:cut]) + "…"
	}
	return out
}

// invisible reports whether r renders as nothing (or as an unreadable blank) and so could
// hide text or make two different details look alike: format characters, private-use,
// surrogate and unassigned code points, variation selectors, the other default-ignorable code
// points (Hangul fillers, combining grapheme joiner, Khmer inherent vowels, …), the braille
// blank and the object replacement character. The filter's Unicode safety removes most of
// them already; this is the status line's own guarantee.
func invisible(r rune) bool {
	switch r {
	case '\u2800', '\ufffc':
		return true
	}
	return !unicode.IsGraphic(r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Cf, r)
}

// codeSpan wraps s in a Markdown code span whose backtick fence is longer than any backtick
// run inside s, so s cannot close it.
func codeSpan(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}

// safeURL returns u when it is a plain http(s) URL with no characters that could break the
// Markdown link, else "".
func safeURL(u string) string {
	if !(strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) {
		return ""
	}
	for _, r := range u {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("()<>[]`\"'\\", r) || r > 0x7e {
			return ""
		}
	}
	return u
}
