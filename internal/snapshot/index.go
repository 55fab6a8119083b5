package snapshot

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/forgectx/forgectx/internal/filter"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/internal/snapshot/canon"
	"github.com/forgectx/forgectx/internal/snapshot/schema"
	"github.com/forgectx/forgectx/internal/snapshot/treefs"
)

// finish adds collection.json, builds index.json, validates every JSON document against the
// project bundle and returns the tree.
func (a *asm) finish() (*Tree, error) {
	if a.out != nil {
		if err := a.out.flush(); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
	}
	a.addFile("collection.json", "collection", mediaJSON, a.collection, nil)
	e, repository := a.acq.Entity, a.acq.Source.Repository
	e.Body, e.Labels = "", nil
	// Every record is staged: the acquisition is not read again. A caller that handed it over
	// (ReleaseBodies) holds no reference to it either, so its remaining metadata can go while
	// the index, the largest document, is built and validated.
	a.acq = nil
	a.commentContent, a.reviewContent, a.reviewKept, a.reviewTimes = nil, nil, nil, nil

	gaps, err := a.sortedGaps()
	if err != nil {
		return nil, err
	}

	// Files sort by path (in place, files and their manifest entries together); records by
	// real created_at, then record key.
	sort.Sort(byPath{a.files, a.entries})
	files, entries := a.files, a.entries
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return nil, abortf("schema", abortSchemaInvalid, "two files share one path")
		}
	}
	sort.Slice(a.records, func(i, j int) bool {
		if !a.records[i].created.Equal(a.records[j].created) {
			return a.records[i].created.Before(a.records[j].created)
		}
		return a.records[i].key < a.records[j].key
	})
	if err := checkBounds(files, 0); err != nil {
		return nil, err
	}
	recs := make([]any, len(a.records))
	for i, r := range a.records {
		recs[i] = r.entry
	}
	_, upd, _ := ts(e.UpdatedAt)
	idx := indexJSON{
		SchemaVersion: SchemaVersion, FilterVersion: filter.Version, CollectionProfile: a.profileSum,
		Filter: filterJSON{Status: a.idxStatus.get(), Findings: a.idxFind.list()},
		Source: sourceJSON{Forge: a.forge, Host: a.host, RepositoryID: a.repoID, Repository: repository},
		Entity: indexEntityJSON{Kind: e.Kind, ID: e.ID, UpdatedAt: upd},
		Files:  entries, Records: recs, Gaps: gaps,
	}
	b, err := schema.Project()
	if err != nil {
		return nil, &AbortError{Scope: "schema", Code: abortSchemaInvalid, Reason: "the v1 schema bundle did not load", Err: err}
	}
	if err := a.validateDocs(files, b); err != nil {
		return nil, err
	}
	index, err := buildIndex(idx, b)
	if err != nil {
		return nil, err
	}

	if err := checkBounds(files, len(index)); err != nil {
		return nil, err
	}
	t := &Tree{Files: files, Index: index, IndexSHA256: canon.SHA256Hex(index)}
	t.Summary = a.summary(e, gaps, files, index, t.IndexSHA256)
	return t, nil
}

// sortedGaps is one row per (scope, code), sorted by scope then code. Any unusable
// entity-scope gap aborts (entity failures abort directly; this guards the rule itself).
func (a *asm) sortedGaps() ([]Gap, error) {
	gaps := make([]Gap, 0, len(a.gaps))
	for k, n := range a.gaps {
		gaps = append(gaps, Gap{Scope: k.scope, Code: k.code, Usability: Usability(k.code), Count: n})
	}
	sort.Slice(gaps, func(i, j int) bool {
		if gaps[i].Scope != gaps[j].Scope {
			return gaps[i].Scope < gaps[j].Scope
		}
		return gaps[i].Code < gaps[j].Code
	})
	for _, g := range gaps {
		if g.Scope == acquisition.ScopeEntity && g.Usability == "unusable" {
			return nil, abortf(acquisition.ScopeEntity, g.Code, "an unusable entity-scope gap aborts assembly")
		}
	}
	return gaps, nil
}

// validateDocs validates every JSON document not validated where it was built (check
// metadata, entity, agent runs, actors, collection), on every core; the bundle is safe for
// concurrent use.
func (a *asm) validateDocs(files []File, b *schema.Bundle) error {
	var docs []int
	for i, f := range files {
		if schema.ForPath(f.Path) != "" && !a.validated[f.Path] {
			docs = append(docs, i)
		}
	}
	return forEach((len(docs)+indexChunk-1)/indexChunk, func(c int) error {
		for _, i := range docs[c*indexChunk : min((c+1)*indexChunk, len(docs))] {
			f := files[i]
			name := schema.ForPath(f.Path)
			if err := b.Validate(name, f.Data); err != nil {
				return &AbortError{Scope: "schema", Code: abortSchemaInvalid, Reason: f.Path + " does not validate against " + name, Err: err}
			}
		}
		return nil
	})
}

// summary is the tree's summary for people: sources in reading order (entity first), not
// byte order.
func (a *asm) summary(e acquisition.Entity, gaps []Gap, files []File, index []byte, indexSHA string) Summary {
	sum := Summary{EntityKind: e.Kind, EntityID: e.ID, EntityNumber: e.Number, Gaps: gaps, Findings: a.all.list(),
		Files: len(files) + 1, Bytes: int64(len(index)), IndexSHA256: indexSHA}
	for _, f := range files {
		sum.Bytes += int64(f.len())
	}
	for _, name := range []string{acquisition.SourceEntity, acquisition.SourceComments, acquisition.SourceReviews,
		acquisition.SourceChecks, acquisition.SourceCheckLogs, acquisition.SourceAgentRuns} {
		if a.prof.Includes(name) {
			sum.Sources = append(sum.Sources, *a.src(name))
		}
	}
	return sum
}

// checkBounds applies the tree bounds verification enforces (internal/snapshot/treefs, one definition for
// both) before the tree leaves the assembler: a tree beyond them aborts assembly instead of
// being written and then refused by the consumer. The profile check (ValidateProfile) rejects
// every profile whose record bounds alone could exceed them before fetching; this catches the
// rest (threads sharing comments, an index or tree grown past its byte bounds by long IDs and
// bodies). The abort names the consumer's rule code.
func checkBounds(files []File, indexBytes int) error {
	err := treefs.CheckTree(len(files), func(i int) (string, int) { return files[i].Path, files[i].len() }, indexBytes)
	var be *treefs.BoundsError
	if errors.As(err, &be) {
		return &AbortError{Scope: "tree", Code: be.Rule, Reason: be.Detail + " (the tree bound verification enforces)", Err: err}
	}
	return err
}

// byPath sorts the staged files and their manifest entries (same index) by path.
type byPath struct {
	files   []File
	entries []fileJSON
}

func (b byPath) Len() int           { return len(b.files) }
func (b byPath) Less(i, j int) bool { return b.files[i].Path < b.files[j].Path }
func (b byPath) Swap(i, j int) {
	b.files[i], b.files[j] = b.files[j], b.files[i]
	b.entries[i], b.entries[j] = b.entries[j], b.entries[i]
}

// indexChunk is how many files[] and records[] items one validation document carries.
const indexChunk = 1000

// indexMembers are index.json's top-level members in RFC 8785 order (ASCII keys: byte order is
// UTF-16 order).
var indexMembers = []string{"collection_profile", "entity", "files", "filter", "filter_version", "gaps", "records", "schema_version", "source"}

// indexWriter renders index.json, or a validation chunk of it, straight to RFC 8785 bytes.
type indexWriter struct {
	idx     *indexJSON
	scalars map[string][]byte
	// items counts the bytes of the array items rendered so far (commas excluded).
	items int
}

func (w *indexWriter) render(out []byte, f0, f1, r0, r1 int) ([]byte, error) {
	for m, k := range indexMembers {
		out = appendMember(out, m == 0, k)
		switch k {
		case "files":
			out = append(out, '[')
			for i := f0; i < f1; i++ {
				if i > f0 {
					out = append(out, ',')
				}
				n := len(out)
				out = w.idx.Files[i].appendCanonical(out)
				w.items += len(out) - n
			}
			out = append(out, ']')
		case "records":
			out = append(out, '[')
			for i := r0; i < r1; i++ {
				if i > r0 {
					out = append(out, ',')
				}
				n := len(out)
				switch r := w.idx.Records[i].(type) {
				case recordJSON:
					out = r.appendCanonical(out)
				case checkRecordJSON:
					out = r.appendCanonical(out)
				default:
					return nil, fmt.Errorf("snapshot: records[%d]: unexpected record type %T", i, r)
				}
				w.items += len(out) - n
			}
			out = append(out, ']')
		default:
			out = append(out, w.scalars[k]...)
		}
	}
	return append(out, '}'), nil
}

// buildIndex serialises index.json as RFC 8785 bytes and validates it against the index schema.
//
// A 100k-record index would be one huge JCS parse tree and one huge validator instance tree at
// the same time, so neither is built. Bytes: the array items are written directly in RFC 8785
// form by their appendCanonical methods (TestDirectIndexEncodersEqualJCS proves them equal to
// JCS over encoding/json), the small top-level members through canon.JSON, and the members are
// joined in RFC 8785 order — exactly the canonical form of the whole object (a test
// re-canonicalises every emitted index and compares). Validation: every constraint of
// index.schema.json on files[], records[] and gaps[] applies to each item on its own (no
// uniqueItems, contains or size keywords), so validating the document with the arrays cut into
// chunks — every chunk carrying all other members unchanged — accepts exactly what validating
// the whole accepts. The first pass renders and validates the chunks in one reused buffer and
// measures the items; the second writes the index once into an exactly sized buffer, so the
// only index-sized allocation is the index itself.
func buildIndex(idx indexJSON, b *schema.Bundle) ([]byte, error) {
	w := &indexWriter{idx: &idx, scalars: map[string][]byte{}}
	for k, v := range map[string]any{
		"collection_profile": idx.CollectionProfile, "entity": idx.Entity, "filter": idx.Filter,
		"filter_version": idx.FilterVersion, "gaps": idx.Gaps, "schema_version": idx.SchemaVersion, "source": idx.Source,
	} {
		var err error
		if w.scalars[k], err = canon.JSON(v); err != nil {
			return nil, err
		}
	}
	nf, nr := len(idx.Files), len(idx.Records)
	// The chunks are independent documents: render and validate them on every core, each
	// with its own writer (its own item count) and buffer; the counts are summed after.
	chunks := max((max(nf, nr)+indexChunk-1)/indexChunk, 1)
	items := make([]int, chunks)
	err := forEach(chunks, func(c int) error {
		start := c * indexChunk
		cw := &indexWriter{idx: w.idx, scalars: w.scalars}
		buf, err := cw.render(nil, min(start, nf), min(start+indexChunk, nf), min(start, nr), min(start+indexChunk, nr))
		if err != nil {
			return err
		}
		if err := b.Validate(schema.Index, buf); err != nil {
			return &AbortError{Scope: "schema", Code: abortSchemaInvalid, Reason: "index.json does not validate against " + schema.Index, Err: err}
		}
		items[c] = cw.items
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, n := range items {
		w.items += n
	}
	empty, err := w.render(nil, 0, 0, 0, 0)
	if err != nil {
		return nil, err
	}
	size := len(empty) + w.items + max(nf-1, 0) + max(nr-1, 0)
	return w.render(make([]byte, 0, size), 0, nf, 0, nr)
}

// appendString appends s as an RFC 8785 JSON string: printable ASCII without '"' or '\' is
// written as is; anything else goes through the canonical encoder.
func appendString(b []byte, s string) []byte {
	if jsonSafeASCII(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return append(b, quote(s)...)
}

func appendNullable(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

// appendCanonical appends the RFC 8785 bytes of a filter object (members in byte order:
// findings, status; finding members code, count).
func (f filterJSON) appendCanonical(b []byte) []byte {
	b = append(b, `{"findings":[`...)
	for i, x := range f.Findings {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"code":`...)
		b = appendString(b, x.Code)
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(x.Count), 10)
		b = append(b, '}')
	}
	b = append(b, `],"status":`...)
	b = appendString(b, string(f.Status))
	return append(b, '}')
}

// appendCanonical appends the RFC 8785 bytes of a files[] item (members in byte order).
func (f fileJSON) appendCanonical(b []byte) []byte {
	b = append(b, `{"bytes":`...)
	b = strconv.AppendInt(b, int64(f.Bytes), 10)
	if f.Filter != nil {
		b = append(b, `,"filter":`...)
		b = f.Filter.appendCanonical(b)
	}
	b = append(b, `,"media_type":`...)
	b = appendString(b, f.MediaType)
	b = append(b, `,"path":`...)
	b = appendString(b, f.Path)
	b = append(b, `,"role":`...)
	b = appendString(b, f.Role)
	b = append(b, `,"sha256":`...)
	b = appendString(b, f.SHA256)
	return append(b, '}')
}

// appendCanonical appends the RFC 8785 bytes of an entity, comment or review records[] item.
func (r recordJSON) appendCanonical(b []byte) []byte {
	b = append(b, `{"author":`...)
	b = appendNullable(b, r.Author)
	b = append(b, `,"author_id":`...)
	b = appendNullable(b, r.AuthorID)
	if r.ContentPath != "" {
		b = append(b, `,"content_path":`...)
		b = appendString(b, r.ContentPath)
	}
	b = append(b, `,"created_at":`...)
	b = appendString(b, r.CreatedAt)
	b = append(b, `,"filter":`...)
	b = r.Filter.appendCanonical(b)
	b = append(b, `,"id":`...)
	b = appendString(b, r.ID)
	b = append(b, `,"kind":`...)
	b = appendString(b, r.Kind)
	b = append(b, `,"record_key":`...)
	b = appendString(b, r.RecordKey)
	if r.UpdatedAt != "" {
		b = append(b, `,"updated_at":`...)
		b = appendString(b, r.UpdatedAt)
	}
	return append(b, '}')
}

// appendCanonical appends the RFC 8785 bytes of a check records[] item.
func (r checkRecordJSON) appendCanonical(b []byte) []byte {
	b = append(b, `{"created_at":`...)
	b = appendString(b, r.CreatedAt)
	b = append(b, `,"filter":`...)
	b = r.Filter.appendCanonical(b)
	b = append(b, `,"id":`...)
	b = appendString(b, r.ID)
	b = append(b, `,"kind":`...)
	b = appendString(b, r.Kind)
	if r.LogPath != "" {
		b = append(b, `,"log_path":`...)
		b = appendString(b, r.LogPath)
	}
	if r.MetadataPath != "" {
		b = append(b, `,"metadata_path":`...)
		b = appendString(b, r.MetadataPath)
	}
	b = append(b, `,"record_key":`...)
	b = appendString(b, r.RecordKey)
	return append(b, '}')
}

// arrayMember is one array-valued top-level member of a JSON document, as the RFC 8785 bytes
// of each item.
type arrayMember struct {
	key   string
	items [][]byte
}

// arrayDocument assembles a JSON object whose members are all arrays (relations/reviews.json,
// state/threads.json) from per-item canonical bytes, and validates it against the named schema
// in chunks of indexChunk items per array, exactly as buildIndex does and for the same reason:
// a document of 30k threads would otherwise be one JCS parse tree and one validator instance
// tree of its whole size. The members must be given in RFC 8785 (byte) order, and the schema
// must constrain the arrays only item by item (no uniqueItems, contains or size keywords on
// them), so that the chunks together accept exactly what the whole accepts.
func arrayDocument(b *schema.Bundle, name string, members []arrayMember) ([]byte, error) {
	render := func(out []byte, start, end int) []byte {
		for m, mem := range members {
			out = append(appendMember(out, m == 0, mem.key), '[')
			for i := min(start, len(mem.items)); i < min(end, len(mem.items)); i++ {
				if i > start {
					out = append(out, ',')
				}
				out = append(out, mem.items[i]...)
			}
			out = append(out, ']')
		}
		if len(members) == 0 {
			out = append(out, '{')
		}
		return append(out, '}')
	}
	longest, size := 0, 2
	for _, mem := range members {
		longest = max(longest, len(mem.items))
		size += len(mem.key) + 5 + max(len(mem.items)-1, 0)
		for _, x := range mem.items {
			size += len(x)
		}
	}
	// Independent chunks: validated on every core (the lowest failing chunk's error wins).
	if err := forEach(max((longest+indexChunk-1)/indexChunk, 1), func(c int) error {
		return b.Validate(name, render(nil, c*indexChunk, (c+1)*indexChunk))
	}); err != nil {
		return nil, err
	}
	return render(make([]byte, 0, size), 0, longest), nil
}
