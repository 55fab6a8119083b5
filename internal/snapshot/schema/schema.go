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
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

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

// documentSchemas are the schemas a snapshot document is validated against (Common only
// provides definitions).
var documentSchemas = []string{Index, Collection, Entity, Reviews, AgentRuns, Check, Actors, Threads}

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
	for _, name := range append([]string{Common}, documentSchemas...) {
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

// locations lists what failed, one "POINTER: KEYWORD: EXPECTED" entry per leaf error, sorted:
// the JSON pointer of the instance (RFC 6901, "" shown as "/"), the schema keyword and what
// the schema expected — "/gaps: required: property missing", "/files/0/size: type: want
// integer, got string". Only the schema's side and the document's structure (property names,
// types, counts, lengths) are named; a document value is never echoed, since a snapshot holds
// untrusted text.
func locations(ve *jsonschema.ValidationError) string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, describe(e)...)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(out)
	out = slices.Compact(out)
	if len(out) > 8 {
		out = append(out[:8], fmt.Sprintf("and %d more", len(out)-8))
	}
	return strings.Join(out, "; ")
}

// pointer renders an instance location as a JSON pointer.
func pointer(loc []string) string {
	if len(loc) == 0 {
		return "/"
	}
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	for _, t := range loc {
		b.WriteByte('/')
		b.WriteString(esc.Replace(clip(t)))
	}
	return b.String()
}

// clip bounds a name taken from the document (a property name) in a message.
func clip(s string) string {
	const max = 64
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// schemaValue renders a value from the schema (an enum member, a const), bounded.
func schemaValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return clip(string(b))
}

func describe(e *jsonschema.ValidationError) []string {
	at := pointer(e.InstanceLocation)
	if out, ok := describeProperties(e); ok {
		return out
	}
	msg, ok := describeValue(e.ErrorKind)
	if !ok {
		msg, ok = describeBound(e.ErrorKind)
	}
	if ok {
		return []string{at + ": " + msg}
	}
	kw := "schema"
	if e.ErrorKind != nil {
		if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
			kw = p[len(p)-1]
		}
	}
	return []string{at + ": " + kw + ": the value does not satisfy the schema"}
}

// describeProperties describes the error kinds that name properties (one line per property,
// at the property's own pointer).
func describeProperties(e *jsonschema.ValidationError) ([]string, bool) {
	child := func(name string) string { return pointer(append(slices.Clone(e.InstanceLocation), name)) }
	var out []string
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			out = append(out, child(m)+": required: property missing")
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			out = append(out, child(p)+": additionalProperties: property not allowed")
		}
	case *kind.DependentRequired:
		for _, m := range k.Missing {
			out = append(out, child(m)+": dependentRequired: property missing (required with "+clip(k.Prop)+")")
		}
	default:
		return nil, false
	}
	return out, true
}

// describeValue describes the error kinds about what a value is (its type, enum, const,
// pattern, format, uniqueness, property names).
func describeValue(ek jsonschema.ErrorKind) (string, bool) {
	switch k := ek.(type) {
	case *kind.Type:
		return fmt.Sprintf("type: want %s, got %s", strings.Join(k.Want, " or "), k.Got), true
	case *kind.Enum:
		want := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			want = append(want, schemaValue(w))
		}
		if len(want) > 6 {
			want = append(want[:6], fmt.Sprintf("… (%d values)", len(k.Want)))
		}
		return "enum: want one of " + strings.Join(want, ", "), true
	case *kind.Const:
		return "const: want " + schemaValue(k.Want), true
	case *kind.Pattern:
		return "pattern: does not match " + clip(k.Want), true
	case *kind.Format:
		return "format: not a valid " + k.Want, true
	case *kind.UniqueItems:
		return fmt.Sprintf("uniqueItems: items %d and %d are equal", k.Duplicates[0], k.Duplicates[1]), true
	case *kind.FalseSchema:
		return "false schema: no value allowed here", true
	case *kind.PropertyNames:
		return "propertyNames: property " + strconv.Quote(clip(k.Property)) + " has a name the schema does not allow", true
	}
	return "", false
}

// describeBound describes the error kinds of a size or numeric bound.
func describeBound(ek jsonschema.ErrorKind) (string, bool) {
	switch k := ek.(type) {
	case *kind.MinLength:
		return fmt.Sprintf("minLength: %d characters, want at least %d", k.Got, k.Want), true
	case *kind.MaxLength:
		return fmt.Sprintf("maxLength: %d characters, want at most %d", k.Got, k.Want), true
	case *kind.MinItems:
		return fmt.Sprintf("minItems: %d items, want at least %d", k.Got, k.Want), true
	case *kind.MaxItems:
		return fmt.Sprintf("maxItems: %d items, want at most %d", k.Got, k.Want), true
	case *kind.MinProperties:
		return fmt.Sprintf("minProperties: %d properties, want at least %d", k.Got, k.Want), true
	case *kind.MaxProperties:
		return fmt.Sprintf("maxProperties: %d properties, want at most %d", k.Got, k.Want), true
	case *kind.Minimum:
		return "minimum: want at least " + k.Want.RatString(), true
	case *kind.Maximum:
		return "maximum: want at most " + k.Want.RatString(), true
	case *kind.ExclusiveMinimum:
		return "exclusiveMinimum: want more than " + k.Want.RatString(), true
	case *kind.ExclusiveMaximum:
		return "exclusiveMaximum: want less than " + k.Want.RatString(), true
	case *kind.MultipleOf:
		return "multipleOf: want a multiple of " + k.Want.RatString(), true
	case *kind.AdditionalItems:
		return fmt.Sprintf("additionalItems: %d items beyond those allowed", k.Count), true
	}
	return "", false
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
