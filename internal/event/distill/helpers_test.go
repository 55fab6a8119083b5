package distill

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/internal/filter"
)

const fixtures = "../../../test/fixtures/webhooks"

// readFixture reads a file under test/fixtures/webhooks.
func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// githubCorpus lists the vendored @octokit/webhooks-examples files by event name, sorted.
func githubCorpus(t testing.TB) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtures, "github", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, f := range files {
		ev := filepath.Base(filepath.Dir(f))
		if ev == "rest" {
			continue
		}
		out[ev] = append(out[ev], f)
	}
	if len(out) != 9 {
		t.Fatalf("corpus has %d event types, want the nine named ones", len(out))
	}
	return out
}

// decode parses an excerpt, failing the test if it is not one JSON object.
func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("excerpt is not a JSON object: %v\n%s", err, b)
	}
	if dec.More() {
		t.Fatalf("trailing data after the excerpt: %s", b)
	}
	return m
}

// keysInOrder returns the keys of the object at the given path of an excerpt, in byte order.
func keysInOrder(t testing.TB, b []byte, path ...string) []string {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	cur := json.RawMessage(b)
	for _, k := range path {
		if err := json.Unmarshal(cur, &raw); err != nil {
			t.Fatalf("%v: %s", err, cur)
		}
		cur = raw[k]
		if cur == nil {
			t.Fatalf("no %q in %s", k, b)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(cur))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object at %v: %s", path, cur)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func obj(t testing.TB, m map[string]any, key string) map[string]any {
	t.Helper()
	o, ok := m[key].(map[string]any)
	if !ok {
		t.Fatalf("excerpt has no object %q: %v", key, m)
	}
	return o
}

func sortedKeys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// mustJSON marshals v for building test payloads.
func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeFilter is a Sanitizer whose behaviour a test chooses per input.
type fakeFilter func(string) (string, []filter.Finding)

func (f fakeFilter) Sanitize(s string) (string, []filter.Finding) { return f(s) }

// panicOn is a filter that fails (panics) on strings containing trigger and passes the rest.
func panicOn(trigger string) fakeFilter {
	return func(s string) (string, []filter.Finding) {
		if strings.Contains(s, trigger) {
			panic("filter: detector failed")
		}
		return s, nil
	}
}
