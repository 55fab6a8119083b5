package verify

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/forgectx/forgectx/internal/snapshot/canon"
)

// index.json is the one document whose size grows with the tree (77 MB at 100k records). It is
// scanned once for validity (json.Valid) and once to split it: the top-level members and the
// items of files[] and records[] are sub-slices of the index bytes, never copies, so the
// chunked schema and canonical-form checks (indexViolations) and the manifest decode
// (decodeManifest, on every core) work on the bytes read from disk. Before, the index was
// decoded three times (a member map, the two arrays, the manifest), each copying what it kept.

// indexMembers are the top-level members of a v1 index (index.schema.json, which allows no
// other).
var indexMembers = map[string]bool{
	"collection_profile": true, "entity": true, "files": true, "filter": true, "filter_version": true,
	"gaps": true, "records": true, "schema_version": true, "source": true,
}

// splitTop splits a JSON object into its members: each name as encoding/json decodes it and
// each value (without surrounding whitespace) as a sub-slice of doc, a later duplicate
// replacing an earlier one — exactly what json.Unmarshal into a map[string]json.RawMessage
// yields, without copying. ok is false when doc is not JSON or not an object. plain reports
// that every name is a v1 index member and none repeats: only then does decoding the members
// one by one equal decoding the whole (encoding/json also matches names case-insensitively and
// merges repeated objects).
func splitTop(doc []byte) (top map[string]json.RawMessage, plain, ok bool) {
	if !json.Valid(doc) {
		return nil, false, false
	}
	i := skipSpace(doc, 0)
	if doc[i] != '{' {
		return nil, false, false
	}
	top = map[string]json.RawMessage{}
	plain = true
	n := 0
	i = skipSpace(doc, i+1)
	for doc[i] != '}' {
		end := skipString(doc, i)
		raw := doc[i:end]
		var name string
		if bytes.IndexByte(raw, '\\') < 0 && isASCII(raw) {
			name = string(raw[1 : len(raw)-1])
		} else if json.Unmarshal(raw, &name) != nil {
			return nil, false, false // cannot happen in a valid document
		}
		i = skipSpace(doc, skipSpace(doc, end)+1) // the colon
		end = skipValue(doc, i)
		top[name] = doc[i:end:end]
		n++
		plain = plain && indexMembers[name]
		i = skipSpace(doc, end)
		if doc[i] == ',' {
			i = skipSpace(doc, i+1)
		}
	}
	return top, plain && n == len(top), true
}

// splitArray returns the items of a JSON array as sub-slices of v (without surrounding
// whitespace), as json.Unmarshal into a []json.RawMessage would, without copying; ok is false
// when v is not an array. v must be valid JSON (a member value returned by splitTop).
func splitArray(v []byte) (items []json.RawMessage, ok bool) {
	if len(v) == 0 || v[0] != '[' {
		return nil, false
	}
	items = []json.RawMessage{}
	i := skipSpace(v, 1)
	for v[i] != ']' {
		end := skipValue(v, i)
		items = append(items, v[i:end:end])
		i = skipSpace(v, end)
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	return items, true
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// skipSpace returns the offset of the first non-whitespace byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset just past the JSON string starting at b[i] (a quote).
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the offset just past the JSON value starting at b[i]; b is valid JSON, so
// brackets balance outside strings and a scalar ends at the first delimiter.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// decodeManifest decodes a split index (plain, see splitTop) into a Manifest, the array
// items chunk by chunk on every core. Each member and each item is decoded by json.Unmarshal
// into its own field or slot, which is what json.Unmarshal of the whole index does member by
// member and item by item (fresh slice elements start zero); it fails exactly when that
// would.
func decodeManifest(p indexParts) (*Manifest, error) {
	m := &Manifest{Files: make([]ManifestFile, len(p.files)), Records: make([]ManifestRecord, len(p.records))}
	for k, v := range p.top {
		var dst any
		switch k {
		case "schema_version":
			dst = &m.SchemaVersion
		case "filter_version":
			dst = &m.FilterVersion
		case "collection_profile":
			dst = &m.CollectionProfile
		case "filter":
			dst = &m.Filter
		case "source":
			dst = &m.Source
		case "entity":
			dst = &m.Entity
		case "gaps":
			dst = &m.Gaps
		default: // files, records: below
			continue
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return nil, err
		}
	}
	chunks := (max(len(p.files), len(p.records)) + indexChunk - 1) / indexChunk
	errs := make([]error, chunks)
	forEach(chunks, func(c int) {
		for i := c * indexChunk; i < min((c+1)*indexChunk, len(p.files)) && errs[c] == nil; i++ {
			errs[c] = json.Unmarshal(p.files[i], &m.Files[i])
		}
		for i := c * indexChunk; i < min((c+1)*indexChunk, len(p.records)) && errs[c] == nil; i++ {
			errs[c] = json.Unmarshal(p.records[i], &m.Records[i])
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// equalsCanonicalJoin reports whether idx is exactly the canonical join of the parts: '{',
// then for each member in byte order its RFC 8785 name, ':' and value (the other members
// canonicalised, the chunked arrays' items as they are, comma-separated in brackets), then
// '}' — compared in place instead of rendered into a copy (the index is the largest
// document).
func (p indexParts) equalsCanonicalJoin(idx []byte) bool {
	rest := idx
	eat := func(b []byte) bool {
		if !bytes.HasPrefix(rest, b) {
			return false
		}
		rest = rest[len(b):]
		return true
	}
	if !eat([]byte{'{'}) {
		return false
	}
	for i, k := range p.keys {
		if i > 0 && !eat([]byte{','}) {
			return false
		}
		ks, _ := canon.String(k)
		if !eat([]byte(ks)) || !eat([]byte{':'}) {
			return false
		}
		items, chunked := p.arrays[k]
		if !chunked {
			c, err := canon.Transform(p.top[k])
			if err != nil || !eat(c) {
				return false
			}
			continue
		}
		if !eat([]byte{'['}) {
			return false
		}
		for j, it := range items {
			if j > 0 && !eat([]byte{','}) || !eat(it) {
				return false
			}
		}
		if !eat([]byte{']'}) {
			return false
		}
	}
	return eat([]byte{'}'}) && len(rest) == 0
}

// sortedKeys returns the member names in byte order.
func sortedKeys(top map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
