package snapshot

import (
	"strconv"

	"github.com/forgectx/forgectx/internal/platform/parallel"
)

// The rows of relations/reviews.json and state/threads.json are written straight to RFC 8785
// bytes, as the index items are (index.go): members in byte order (every key is ASCII, so byte
// order is UTF-16 order), omitempty members left out exactly where encoding/json leaves them
// out, nil slices as null, and the json.RawMessage members (null or a string, see nullable)
// copied as they are, since nullable already writes them in canonical form. TestDirectRelationEncodersEqualJCS proves every encoder equal to
// canon.JSON over encoding/json, the form they replace, for every member present or absent.

// appendMember opens an object member: '{' before the first, ',' before any other, then the
// key (ASCII, needing no escape) and ':'.
func appendMember(b []byte, first bool, key string) []byte {
	if first {
		b = append(b, '{')
	} else {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendCanonical appends the RFC 8785 bytes of a relations/reviews.json reviews[] row.
func (r reviewRelJSON) appendCanonical(b []byte) []byte {
	first := true
	if len(r.DismissedAt) > 0 {
		b, first = append(appendMember(b, first, "dismissed_at"), r.DismissedAt...), false
	}
	if len(r.DismissedByActorID) > 0 {
		b, first = append(appendMember(b, first, "dismissed_by_actor_id"), r.DismissedByActorID...), false
	}
	b = appendString(appendMember(b, first, "id"), r.ID)
	b = appendString(appendMember(b, false, "record_key"), r.RecordKey)
	if r.ReviewedSHA != "" {
		b = appendString(appendMember(b, false, "reviewed_sha"), r.ReviewedSHA)
	}
	b = appendString(appendMember(b, false, "state"), r.State)
	b = appendString(appendMember(b, false, "submitted_at"), r.SubmittedAt)
	return append(b, '}')
}

// appendCanonical appends the RFC 8785 bytes of a relations/reviews.json threads[] row.
func (t threadRelJSON) appendCanonical(b []byte) []byte {
	optString := func(b []byte, key, v string) []byte {
		if v == "" {
			return b
		}
		return appendString(appendMember(b, false, key), v)
	}
	optInt := func(b []byte, key string, v int) []byte {
		if v == 0 {
			return b
		}
		return strconv.AppendInt(appendMember(b, false, key), int64(v), 10)
	}
	b = appendString(appendMember(b, true, "created_at"), t.CreatedAt)
	b = appendString(appendMember(b, false, "id"), t.ID)
	b = optInt(b, "line", t.Line)
	b = appendString(appendMember(b, false, "order_path"), t.OrderPath)
	b = optInt(b, "original_line", t.OriginalLine)
	b = optString(b, "original_side", t.OriginalSide)
	b = optInt(b, "original_start_line", t.OriginalStartLine)
	b = optString(b, "path", t.Path)
	b = appendStrings(appendMember(b, false, "record_keys"), t.RecordKeys)
	b = appendMember(b, false, "replies")
	if t.Replies == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, r := range t.Replies {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(appendMember(b, true, "parent_record_key"), r.ParentRecordKey)
			b = append(appendString(appendMember(b, false, "record_key"), r.RecordKey), '}')
		}
		b = append(b, ']')
	}
	b = optString(b, "review_id", t.ReviewID)
	b = optString(b, "review_record_key", t.ReviewRecordKey)
	b = optString(b, "reviewed_sha", t.ReviewedSHA)
	b = optString(b, "side", t.Side)
	b = optInt(b, "start_line", t.StartLine)
	b = appendString(appendMember(b, false, "thread_key"), t.ThreadKey)
	return append(b, '}')
}

// appendCanonical appends the RFC 8785 bytes of a state/threads.json threads[] row.
func (s threadStateJSON) appendCanonical(b []byte) []byte {
	b = appendString(appendMember(b, true, "id"), s.ID)
	if s.Minimized != nil {
		b = strconv.AppendBool(appendMember(b, false, "minimized"), *s.Minimized)
	}
	b = strconv.AppendBool(appendMember(b, false, "outdated"), s.Outdated)
	b = strconv.AppendBool(appendMember(b, false, "resolved"), s.Resolved)
	if len(s.ResolvedByActorID) > 0 {
		b = append(appendMember(b, false, "resolved_by_actor_id"), s.ResolvedByActorID...)
	}
	b = appendString(appendMember(b, false, "thread_key"), s.ThreadKey)
	return append(b, '}')
}

// encodeItems returns each item's canonical bytes, encoded on every core (each item into its
// own slot).
func encodeItems[T any](items []T, enc func(T, []byte) []byte) [][]byte {
	out := make([][]byte, len(items))
	parallel.Do(len(items), func(i int) { out[i] = enc(items[i], nil) })
	return out
}
