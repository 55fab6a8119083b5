package status

import "github.com/forgectx/forgectx/internal/status/marker"

// IsOwnComment reports whether body is one of forgectx's own comments (a sticky status comment
// or a run receipt): marker.IsOwnComment, the rule the snapshot assembler applies.
func IsOwnComment(body string) bool { return marker.IsOwnComment(body) }
