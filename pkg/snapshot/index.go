package snapshot

import (
	"sort"
	"strings"

	"github.com/forgectx/forgectx/pkg/acquisition"
	"github.com/forgectx/forgectx/pkg/canon"
	"github.com/forgectx/forgectx/pkg/filter"
	"github.com/forgectx/forgectx/pkg/snapshot/schema"
)

// schemaFor maps a JSON file path to its schema.
func schemaFor(path string) string {
	switch {
	case path == "collection.json":
		return schema.Collection
	case path == "entity/metadata.json":
		return schema.Entity
	case path == "relations/reviews.json":
		return schema.Reviews
	case path == "history/agent-runs.json":
		return schema.AgentRuns
	case path == "state/actors.json":
		return schema.Actors
	case path == "state/threads.json":
		return schema.Threads
	case strings.HasPrefix(path, "checks/") && strings.HasSuffix(path, "/metadata.json"):
		return schema.Check
	}
	return ""
}

// finish adds collection.json, builds index.json, validates every JSON document against the
// project bundle and returns the tree.
func (a *asm) finish() (*Tree, error) {
	a.addFile("collection.json", "collection", mediaJSON, a.collection, nil)

	// Gaps: one row per (scope, code), sorted by scope then code. Any unusable entity-scope gap
	// aborts (entity failures abort directly; this guards the rule itself).
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

	// Files sort by path; records by real created_at, then record key.
	order := make([]int, len(a.files))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return a.files[order[i]].Path < a.files[order[j]].Path })
	files := make([]File, len(order))
	entries := make([]fileJSON, len(order))
	for i, k := range order {
		files[i], entries[i] = a.files[k], a.entries[k]
		if i > 0 && files[i].Path == files[i-1].Path {
			return nil, abortf("schema", AbortSchemaInvalid, "two files share one path")
		}
	}
	sort.Slice(a.records, func(i, j int) bool {
		if !a.records[i].created.Equal(a.records[j].created) {
			return a.records[i].created.Before(a.records[j].created)
		}
		return a.records[i].key < a.records[j].key
	})
	recs := make([]any, len(a.records))
	for i, r := range a.records {
		recs[i] = r.entry
	}
	e := a.acq.Entity
	_, upd, _ := ts(e.UpdatedAt)
	idx := indexJSON{
		SchemaVersion: SchemaVersion, FilterVersion: filter.Version, CollectionProfile: a.profileSum,
		Filter: filterJSON{Status: a.idxStatus.get(), Findings: a.idxFind.list()},
		Source: sourceJSON{Forge: a.forge, Host: a.host, RepositoryID: a.repoID, Repository: a.acq.Source.Repository},
		Entity: indexEntityJSON{Kind: e.Kind, ID: e.ID, UpdatedAt: upd},
		Files:  entries, Records: recs, Gaps: gaps,
	}
	b, err := schema.Project()
	if err != nil {
		return nil, &AbortError{Scope: "schema", Code: AbortSchemaInvalid, Reason: "the v1 schema bundle did not load", Err: err}
	}
	for _, f := range files {
		if name := schemaFor(f.Path); name != "" {
			if err := b.Validate(name, f.Data); err != nil {
				return nil, &AbortError{Scope: "schema", Code: AbortSchemaInvalid, Reason: f.Path + " does not validate against " + name, Err: err}
			}
		}
	}
	index, err := buildIndex(idx, b)
	if err != nil {
		return nil, err
	}

	t := &Tree{Files: files, Index: index, IndexSHA256: canon.SHA256Hex(index)}
	sum := Summary{EntityKind: e.Kind, EntityID: e.ID, EntityNumber: e.Number, Gaps: gaps, Findings: a.all.list(),
		Files: len(files) + 1, Bytes: int64(len(index)), IndexSHA256: t.IndexSHA256}
	for _, f := range files {
		sum.Bytes += int64(len(f.Data))
	}
	// Sources in reading order (entity first), not byte order: the summary is for people.
	for _, name := range []string{acquisition.SourceEntity, acquisition.SourceComments, acquisition.SourceReviews,
		acquisition.SourceChecks, acquisition.SourceCheckLogs, acquisition.SourceAgentRuns} {
		if a.prof.Includes(name) {
			sum.Sources = append(sum.Sources, *a.src(name))
		}
	}
	t.Summary = sum
	return t, nil
}

// indexChunk is how many files[] and records[] items one validation document carries.
const indexChunk = 1000

// buildIndex serialises index.json as RFC 8785 bytes and validates it against the index schema.
//
// A 100k-record index would be one huge JCS parse tree and one huge validator instance tree at
// the same time, so both are done in pieces with identical results. Bytes: each array element
// and each top-level member value is canonicalised by JCS on its own, and the members are
// joined in RFC 8785 order (the top-level keys are ASCII, so byte order is UTF-16 order) — the
// concatenation is exactly the canonical form of the whole object (a test re-canonicalises
// every emitted index and compares). Validation: every constraint of index.schema.json on
// files[], records[] and gaps[] applies to each item on its own (no uniqueItems, contains or
// size keywords), so validating the document with the arrays cut into chunks — every chunk
// carrying all other members unchanged — accepts exactly what validating the whole accepts.
func buildIndex(idx indexJSON, b *schema.Bundle) ([]byte, error) {
	enc := func(v any) ([]byte, error) { return canon.JSON(v) }
	files := make([][]byte, len(idx.Files))
	records := make([][]byte, len(idx.Records))
	var err error
	for i := range idx.Files {
		if files[i], err = enc(idx.Files[i]); err != nil {
			return nil, err
		}
	}
	for i := range idx.Records {
		if records[i], err = enc(idx.Records[i]); err != nil {
			return nil, err
		}
	}
	scalars := map[string][]byte{}
	for k, v := range map[string]any{
		"collection_profile": idx.CollectionProfile, "entity": idx.Entity, "filter": idx.Filter,
		"filter_version": idx.FilterVersion, "gaps": idx.Gaps, "schema_version": idx.SchemaVersion, "source": idx.Source,
	} {
		if scalars[k], err = enc(v); err != nil {
			return nil, err
		}
	}
	render := func(files, records [][]byte) []byte {
		n := 256
		for _, x := range files {
			n += len(x) + 1
		}
		for _, x := range records {
			n += len(x) + 1
		}
		out := make([]byte, 0, n)
		array := func(items [][]byte) {
			out = append(out, '[')
			for i, x := range items {
				if i > 0 {
					out = append(out, ',')
				}
				out = append(out, x...)
			}
			out = append(out, ']')
		}
		// Members in RFC 8785 order.
		for i, k := range []string{"collection_profile", "entity", "files", "filter", "filter_version", "gaps", "records", "schema_version", "source"} {
			if i == 0 {
				out = append(out, '{')
			} else {
				out = append(out, ',')
			}
			out = append(out, '"')
			out = append(out, k...)
			out = append(out, '"', ':')
			switch k {
			case "files":
				array(files)
			case "records":
				array(records)
			default:
				out = append(out, scalars[k]...)
			}
		}
		return append(out, '}')
	}
	for start := 0; start == 0 || start < len(files) || start < len(records); start += indexChunk {
		chunk := func(items [][]byte) [][]byte {
			if start >= len(items) {
				return nil
			}
			return items[start:min(start+indexChunk, len(items))]
		}
		if err := b.Validate(schema.Index, render(chunk(files), chunk(records))); err != nil {
			return nil, &AbortError{Scope: "schema", Code: AbortSchemaInvalid, Reason: "index.json does not validate against " + schema.Index, Err: err}
		}
	}
	return render(files, records), nil
}
