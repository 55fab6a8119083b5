// Package schema loads an entity-context-snapshot v1 schema bundle and validates snapshot
// documents against it (spec section "Compatibility").
//
// Every sibling *.schema.json file of a bundle is loaded into one compiler, registered under
// its $id, and looked up by its file name; relative references such as
// "common.schema.json#/$defs/timestamp" therefore resolve to the sibling registered under the
// $id with that last path segment. The compiler's URL loader always fails: $id values are
// identifiers, not endpoints, so a missing sibling or an unresolved reference is a validation
// error rather than a network fetch.
//
// The bundle's $schema is JSON Schema draft 2020-12. github.com/xeipuuv/gojsonschema (the
// project's usual validator) implements only drafts 4, 6 and 7: it would not understand
// 2020-12's keyword semantics ($defs resolution, if/then/else combined with unevaluated
// vocabularies) and a validator that cannot evaluate a security pattern must not be used
// (spec: "must never ignore the pattern or fall back to a weaker constraint"). So this package
// uses github.com/santhosh-tekuri/jsonschema/v6, which implements 2020-12 fully, ships the
// meta-schemas in-process, and uses Go's RE2 regexp engine — the engine the spec's patterns
// are written for. Formats are asserted (date-time), on top of the bundle's patterns.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	ecsv1 "github.com/forgectx/forgectx/docs/normative/entity-context-snapshot/v1"
)

// Schema file names of the v1 bundle, one per document role.
const (
	Index      = "index.schema.json"
	Collection = "collection.schema.json"
	Entity     = "entity.schema.json"
	Reviews    = "reviews.schema.json"
	AgentRuns  = "agent-runs.schema.json"
	Check      = "check.schema.json"
	Actors     = "actor-state.schema.json"
	Threads    = "thread-state.schema.json"
	Common     = "common.schema.json"
)

// DocumentSchemas are the schemas a snapshot document is validated against (Common only
// provides definitions).
var DocumentSchemas = []string{Index, Collection, Entity, Reviews, AgentRuns, Check, Actors, Threads}

// ErrInvalid is wrapped by every document validation failure.
var ErrInvalid = errors.New("schema validation failed")

// Bundle is a compiled v1 schema bundle. It is safe for concurrent use.
type Bundle struct {
	byName map[string]*jsonschema.Schema
	ids    map[string]string // file name → $id
}

type noNetwork struct{}

func (noNetwork) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema: %s is not a sibling of the bundle; $id values are never fetched", url)
}

// Load compiles every *.schema.json file at the top level of fsys into one registry. Each
// file must carry a $id whose last path segment is its file name (so sibling references
// resolve inside the bundle); every document schema must be present and compile.
func Load(fsys fs.FS) (*Bundle, error) {
	names, err := fs.Glob(fsys, "*.schema.json")
	if err != nil {
		return nil, fmt.Errorf("schema: list bundle: %w", err)
	}
	sort.Strings(names)
	c := jsonschema.NewCompiler()
	c.UseLoader(noNetwork{})
	c.AssertFormat()
	c.DefaultDraft(jsonschema.Draft2020)
	b := &Bundle{byName: map[string]*jsonschema.Schema{}, ids: map[string]string{}}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("schema: read %s: %w", name, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("schema: %s: not JSON: %w", name, err)
		}
		obj, _ := doc.(map[string]any)
		id, _ := obj["$id"].(string)
		if id == "" || path.Base(id) != name {
			return nil, fmt.Errorf("schema: %s: $id must end in /%s", name, name)
		}
		if err := c.AddResource(id, doc); err != nil {
			return nil, fmt.Errorf("schema: register %s: %w", name, err)
		}
		b.ids[name] = id
	}
	for _, name := range append([]string{Common}, DocumentSchemas...) {
		id, ok := b.ids[name]
		if !ok {
			return nil, fmt.Errorf("schema: bundle has no %s", name)
		}
		s, err := c.Compile(id)
		if err != nil {
			return nil, fmt.Errorf("schema: compile %s: %w", name, err)
		}
		b.byName[name] = s
	}
	return b, nil
}

var (
	projectOnce sync.Once
	project     *Bundle
	projectErr  error
)

// Project returns the project's own bundle (docs/normative/entity-context-snapshot/v1),
// embedded in the binary and compiled once.
func Project() (*Bundle, error) {
	projectOnce.Do(func() { project, projectErr = Load(ecsv1.FS) })
	return project, projectErr
}

// ID returns the $id the bundle registered for a schema file name.
func (b *Bundle) ID(name string) string { return b.ids[name] }

// Validate checks one JSON document against the named schema (a file name such as
// "index.schema.json"). The error wraps ErrInvalid and names the failing instance locations
// and keywords, never the document's values.
func (b *Bundle) Validate(name string, doc []byte) error {
	s, ok := b.byName[name]
	if !ok {
		return fmt.Errorf("schema: %w: no schema %q in the bundle", ErrInvalid, name)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("schema: %s: %w: document is not JSON", name, ErrInvalid)
	}
	if err := s.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return fmt.Errorf("schema: %s: %w: %s", name, ErrInvalid, locations(ve))
		}
		return fmt.Errorf("schema: %s: %w: %v", name, ErrInvalid, err)
	}
	return nil
}

// locations lists the failing instance locations and schema keywords of a validation error
// (leaves only), so a message never echoes an untrusted value.
func locations(ve *jsonschema.ValidationError) string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			kw := e.SchemaURL
			if i := strings.LastIndex(kw, "#"); i >= 0 {
				kw = kw[i+1:]
			}
			out = append(out, "/"+strings.Join(e.InstanceLocation, "/")+" (schema "+kw+")")
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(out)
	if len(out) > 8 {
		out = append(out[:8], fmt.Sprintf("and %d more", len(out)-8))
	}
	return strings.Join(out, "; ")
}

// ForPath maps a tree path to the schema its document conforms to (spec "Tree"), or "" for a
// file that is not a JSON document (records, order files, logs).
func ForPath(path string) string {
	switch {
	case path == "index.json":
		return Index
	case path == "collection.json":
		return Collection
	case path == "entity/metadata.json":
		return Entity
	case path == "relations/reviews.json":
		return Reviews
	case path == "history/agent-runs.json":
		return AgentRuns
	case path == "state/actors.json":
		return Actors
	case path == "state/threads.json":
		return Threads
	case strings.HasPrefix(path, "checks/") && strings.HasSuffix(path, "/metadata.json"):
		return Check
	}
	return ""
}
