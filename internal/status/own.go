package status

import "strings"

// IsOwnComment reports whether body is one of forgectx's own comments: a sticky status comment
// or a run receipt. The check is on the FIRST line only and is exact: the line (without a
// trailing "\r" of a CRLF line ending, which a forge may store for an edited comment) must be
// ReceiptMarker or a status marker for a valid agent name. A marker anywhere else, a marker with
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
	return first == ReceiptMarker || markerLine.MatchString(first)
}
