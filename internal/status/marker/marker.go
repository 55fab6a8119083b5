// Package marker holds the first-line markers of forgectx's own comments — the sticky status
// comment and the run receipt (docs/run.md, "Status comment"; docs/receipts.md; spec
// entity-context-snapshot v1, "history") — as a leaf the snapshot assembler can depend on to
// leave those comments out of the comments source without depending on comment rendering
// (internal/status).
package marker

import (
	"regexp"
	"strings"
)

// Receipt is the first line of every receipt comment (a wire name: byte-exact).
const Receipt = "<!-- forgectx:receipt v1 -->"

// StatusLine matches the first line of a status comment and captures the agent name.
var StatusLine = regexp.MustCompile(`^<!-- forgectx:status agent=([A-Za-z0-9][A-Za-z0-9._-]{0,63}) -->$`)

// IsOwnComment reports whether body is one of forgectx's own comments: a sticky status comment
// or a run receipt. The check is on the FIRST line only and is exact: the line (without a
// trailing "\r" of a CRLF line ending, which a forge may store for an edited comment) must be
// Receipt or a status marker for a valid agent name. A marker anywhere else, a marker with
// leading or trailing text, spacing or case changes is not a match.
//
// The snapshot assembler drops such comments from the comments source: the mutable status
// comment ("⏳ started") would otherwise change the agent's context on every run and defeat
// prompt-cache reuse, and receipts are read back into history/agent-runs.json instead.
// Matching is on the body alone; whether the author is the registered bot is the caller's
// business (a non-bot comment whose first line is a marker is hidden by forge Markdown anyway).
func IsOwnComment(body string) bool {
	first, _, _ := strings.Cut(body, "\n")
	first = strings.TrimSuffix(first, "\r")
	return first == Receipt || StatusLine.MatchString(first)
}
