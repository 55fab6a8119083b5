package reviewmcp

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	"github.com/forgectx/forgectx/test/verifytest"
)

// refusalForm is every refusal's shape: a known field or "arguments"/"answer", then a fixed
// rule text (no argument value can appear: rules are built from constants and numbers).
var refusalForm = regexp.MustCompile(`^(action|kind|page_size|cursor|id|offset|query|limit|scope|arguments|answer|handle|resource_class|source|store): [a-zA-Z0-9 .,()_-]+$`)

// FuzzEvidenceTools drives the three evidence tools with arbitrary argument bytes: no panic,
// every answer fits the response bound, every refusal has the fixed form.
func FuzzEvidenceTools(f *testing.F) {
	for _, a := range []string{`{"action":"summary"}`, `{"action":"list","kind":"comment","page_size":2}`, `{"action":"get","id":"doc_collection","offset":3}`,
		`{"query":"backoff cap","limit":3}`, `{"kind":"review","scope":"reviews","query":"x"}`, `{"action":"list","cursor":"AAAA"}`, `null`, `[1]`} {
		f.Add(a)
	}
	s, err := newServer(context.Background(), Config{Mode: ModeConstrained, SnapshotDir: verifytest.Write(f, verifytest.Demo), UsagePath: f.TempDir() + "/u.json"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, call := range []func(json.RawMessage) (func(*Usage), any, error){s.evidenceCall, s.searchCall, s.coverageCall} {
			_, ans, err := call(json.RawMessage(raw))
			if err != nil {
				var r *refusal
				if !errors.As(err, &r) || !refusalForm.MatchString(r.Error()) {
					t.Fatalf("refusal %q has an unexpected form", err)
				}
				continue
			}
			b, err := json.Marshal(ans)
			if err != nil || !fits(b) {
				t.Fatalf("answer does not fit: %d bytes %v", len(b), err)
			}
		}
	})
}
