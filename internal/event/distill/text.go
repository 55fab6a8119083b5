package distill

import (
	"fmt"
	"unicode/utf8"
)

// markerPrefix starts the truncation marker appended inside a capped value. The whole marker is
//
//	\n[forgectx: truncated, kept K of N characters]
//
// where K and N count Unicode code points of the filtered value. It lives inside the JSON
// string, so the excerpt stays parseable and the reader sees that text is missing.
const markerPrefix = "[forgectx: truncated, kept "

func marker(kept, total int) string {
	return fmt.Sprintf("\n%s%d of %d characters]", markerPrefix, kept, total)
}

// capText bounds s to limit code points, marker included. It cuts on a code point boundary and
// reports whether it cut.
func capText(s string, limit int) (string, bool) {
	total := utf8.RuneCountInString(s)
	if total <= limit {
		return s, false
	}
	// The marker with kept = limit is at least as long as the final one (kept < limit), so
	// sizing by it keeps the result within limit.
	keep := limit - utf8.RuneCountInString(marker(limit, total))
	keep = max(keep, 0)
	cut := 0
	for i := 0; i < keep; i++ {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return s[:cut] + marker(keep, total), true
}
