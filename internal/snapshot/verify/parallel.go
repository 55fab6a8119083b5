package verify

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/forgectx/forgectx/internal/platform/parallel"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
)

// forEach runs fn(0) … fn(n-1) on every available core. fn must only write state of its own
// index; callers merge the results in index order, so reports do not depend on scheduling.
func forEach(n int, fn func(i int)) { parallel.Do(n, fn) }

// jsonViolations checks one document against its schema and its RFC 8785 form and returns the
// violations (it touches no checker state, so documents can be checked concurrently).
func jsonViolations(b *schema.Bundle, p, schemaName string, doc []byte) []Violation {
	var out []Violation
	if err := b.Validate(schemaName, doc); err != nil {
		out = append(out, newViolation(p, RuleSchemaInvalid, strings.TrimPrefix(err.Error(), "schema: ")))
	}
	if !canon.IsCanonical(doc) {
		out = append(out, newViolation(p, RuleNotCanonical, "JSON documents must be RFC 8785 bytes with no trailing newline"))
	}
	return out
}

// indexChunk is how many files[] and records[] items one index validation chunk carries.
const indexChunk = 1000

// indexViolations validates index.json against its schema and its RFC 8785 form without
// building one parse tree of the whole index (77 MB at 100k records), on every core.
//
// Schema: every constraint of index.schema.json on files[] and records[] applies to each
// item on its own (no uniqueItems, contains or size keywords), so validating documents that
// carry every other top-level member unchanged and a chunk of each array accepts exactly what
// validating the whole accepts (the assembler validates its index the same way). Canonical
// form: the whole is canonical exactly when its members are in RFC 8785 order, each scalar
// member and each array item is canonical, and the bytes are the plain join of those parts —
// which is what is compared. A document whose top level is not an object with ASCII member
// names and array-valued files and records is checked whole.
func indexViolations(b *schema.Bundle, idx []byte, parts indexParts, split bool) []Violation {
	if !split {
		return jsonViolations(b, "index.json", schema.Index, idx)
	}
	chunks := max((parts.longest()+indexChunk-1)/indexChunk, 1)
	schemaErr := make([]string, chunks)
	nonCanonical := make([]bool, chunks)
	forEach(chunks, func(c int) {
		schemaErr[c], nonCanonical[c] = parts.checkChunk(b, c*indexChunk, (c+1)*indexChunk)
	})
	var out []Violation
	for _, e := range schemaErr {
		if e != "" {
			// The first failing chunk names the rule; later chunks add nothing a reader needs.
			out = append(out, newViolation("index.json", RuleSchemaInvalid, e))
			break
		}
	}
	canonical := true
	for _, n := range nonCanonical {
		canonical = canonical && !n
	}
	canonical = canonical && parts.equalsCanonicalJoin(idx)
	if !canonical {
		out = append(out, newViolation("index.json", RuleNotCanonical, "JSON documents must be RFC 8785 bytes with no trailing newline"))
	}
	return out
}

// indexParts is a JSON document split for the chunked checks: the top-level member names in
// byte order, the members, and the items of the array members checked in chunks (for
// index.json files[] and records[], also held as files and records).
type indexParts struct {
	keys           []string
	top            map[string]json.RawMessage
	arrays         map[string][]json.RawMessage
	files, records []json.RawMessage
}

// splitIndex splits the top level of index.json; ok is false when the index must be checked
// whole (a non-ASCII member name, or files or records not arrays).
func splitIndex(top map[string]json.RawMessage) (indexParts, bool) {
	p, ok := splitDoc(top, "files", "records")
	p.files, p.records = p.arrays["files"], p.arrays["records"]
	return p, ok
}

// splitDoc splits the top level of a document and the named array members into their items
// (sub-slices of the member values, see splitArray); ok is false when the document must be
// checked whole (a non-ASCII member name, whose RFC 8785 order is not byte order, or a named
// member that is missing or not an array).
func splitDoc(top map[string]json.RawMessage, arrays ...string) (indexParts, bool) {
	p := indexParts{keys: sortedKeys(top), top: top, arrays: make(map[string][]json.RawMessage, len(arrays))}
	for _, k := range p.keys {
		if !isASCII([]byte(k)) {
			return p, false
		}
	}
	for _, k := range arrays {
		items, ok := splitArray(top[k])
		if !ok {
			return p, false
		}
		p.arrays[k] = items
	}
	return p, true
}

// longest is the length of the longest chunked array.
func (p indexParts) longest() int {
	n := 0
	for _, items := range p.arrays {
		n = max(n, len(items))
	}
	return n
}

// render appends the document of every other member and items [start, end) of each chunked
// array (a validation chunk; equalsCanonicalJoin compares the whole in place).
func (p indexParts) render(out []byte, start, end int) []byte {
	out = append(out, '{')
	for i, k := range p.keys {
		if i > 0 {
			out = append(out, ',')
		}
		ks, _ := canon.String(k)
		out = append(out, ks...)
		out = append(out, ':')
		items, chunked := p.arrays[k]
		if !chunked {
			out = append(out, p.top[k]...)
			continue
		}
		out = append(out, '[')
		for j := min(start, len(items)); j < min(end, len(items)); j++ {
			if j > start {
				out = append(out, ',')
			}
			out = append(out, items[j]...)
		}
		out = append(out, ']')
	}
	return append(out, '}')
}

// validateChunk renders the chunk [start, end) into a pooled buffer and validates it. The
// chunk documents of a 100k-record index are 500 MB in all; grown by append they were the
// largest allocation left in verification after the validator's own. Validate keeps nothing
// of the bytes (it decodes a copy), so the buffer is reused.
func (p indexParts) validateChunk(b *schema.Bundle, schemaName string, start, end int) error {
	bp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp)
	*bp = p.render((*bp)[:0], start, end)
	return b.Validate(schemaName, *bp)
}

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, 1<<20); return &b }}

// nonCanonicalItems reports whether an item in [start, end) of a chunked array is not in
// RFC 8785 form.
func (p indexParts) nonCanonicalItems(start, end int) bool {
	for _, items := range p.arrays {
		for j := min(start, len(items)); j < min(end, len(items)); j++ {
			if !canon.IsCanonical(items[j]) {
				return true
			}
		}
	}
	return false
}

// arrayDocViolations is jsonViolations for a document whose array members grow with the tree
// (relations/reviews.json, 29 MB at 100k records; state/threads.json), checked in chunks on
// every core instead of as one parse tree, by the reasoning of indexViolations: the schema
// constrains those arrays only item by item (the assembler builds and validates them in
// chunks the same way), so the chunks together pass exactly when the whole passes, and the
// whole is canonical exactly when the items and other members are and the bytes are their
// join. A document that fails any chunk (or cannot be split) is checked whole, so its
// violations are exactly those of jsonViolations, details included.
func arrayDocViolations(b *schema.Bundle, p, schemaName string, doc []byte, arrays ...string) []Violation {
	top, _, ok := splitTop(doc)
	if !ok {
		return jsonViolations(b, p, schemaName, doc)
	}
	parts, split := splitDoc(top, arrays...)
	if !split {
		return jsonViolations(b, p, schemaName, doc)
	}
	chunks := max((parts.longest()+indexChunk-1)/indexChunk, 1)
	failed := make([]bool, chunks)
	forEach(chunks, func(c int) {
		start, end := c*indexChunk, (c+1)*indexChunk
		failed[c] = parts.validateChunk(b, schemaName, start, end) != nil || parts.nonCanonicalItems(start, end)
	})
	for _, f := range failed {
		if f {
			return jsonViolations(b, p, schemaName, doc)
		}
	}
	if !parts.equalsCanonicalJoin(doc) {
		return jsonViolations(b, p, schemaName, doc)
	}
	return nil
}

// checkChunk validates the chunk [start, end) against the schema (the error, if any, naming
// the chunk) and reports whether one of its items is not in RFC 8785 form.
func (p indexParts) checkChunk(b *schema.Bundle, start, end int) (schemaErr string, nonCanonical bool) {
	if err := p.validateChunk(b, schema.Index, start, end); err != nil {
		schemaErr = fmt.Sprintf("%s (in the chunk of files[%d:%d] and records[%d:%d])", strings.TrimPrefix(err.Error(), "schema: "),
			min(start, len(p.files)), min(end, len(p.files)), min(start, len(p.records)), min(end, len(p.records)))
	}
	return schemaErr, p.nonCanonicalItems(start, end)
}
