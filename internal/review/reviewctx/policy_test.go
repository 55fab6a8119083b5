package reviewctx

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func examplePolicy(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/policy-v2-example.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mutate decodes the example, applies f to the generic document and re-encodes it.
func mutate(t testing.TB, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(examplePolicy(t), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func obj(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

func ref0(m map[string]any) map[string]any { return m["references"].([]any)[0].(map[string]any) }

func ciSelector() map[string]any {
	return map[string]any{"required": true, "checks": []any{
		map[string]any{"name": "lint", "path_prefixes": []any{"pkg/"}},
		map[string]any{"name": "unit tests", "path_prefixes": []any{"cmd/", "internal/review/reviewctx/"}},
	}}
}

func TestPolicyCompleteV2ExampleValidates(t *testing.T) {
	p, err := parsePolicy(examplePolicy(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.SchemaVersion != policyV2 || len(p.Digest) != 64 {
		t.Fatalf("version %q digest %q", p.SchemaVersion, p.Digest)
	}
	if got := strings.Join(p.Sources(), ","); got != "forge_discussions,remediation_threads,references" {
		t.Fatalf("sources %s", got)
	}
	if p.ForgeDiscussions.MaxThreads != 20 || p.References[0].Recognizer.Prefix != "DEMO" || p.RemediationThreads.Projections != nil {
		t.Fatalf("parsed %+v", p)
	}
	// The digest is of the canonical form: whitespace and key order do not change it.
	re := mutate(t, func(map[string]any) {})
	p2, err := parsePolicy(re)
	if err != nil || p2.Digest != p.Digest {
		t.Fatalf("re-encoded digest %v %v vs %v", err, p2, p.Digest)
	}
	// Any semantic change does.
	p3, err := parsePolicy(mutate(t, func(m map[string]any) { obj(m, "budgets")["max_records"] = 31 }))
	if err != nil || p3.Digest == p.Digest {
		t.Fatalf("changed policy kept digest")
	}
}

func TestPolicyV3CIOutcomesDefaults(t *testing.T) {
	b := mutate(t, func(m map[string]any) {
		m["schema_version"] = policyV3
		c := ciSelector()
		delete(c, "required")
		m["ci_outcomes"] = c
	})
	p, err := parsePolicy(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.CIOutcomes.MaxAgeSeconds != 86400 || p.CIOutcomes.Required || len(p.CIOutcomes.Checks) != 2 {
		t.Fatalf("ci %+v", p.CIOutcomes)
	}
}

func TestPolicyRangeEdgesAccepted(t *testing.T) {
	edges := []struct {
		name string
		f    func(m map[string]any)
	}{
		{"budgets.max_records=1", func(m map[string]any) { obj(m, "budgets")["max_records"] = 1 }},
		{"budgets.max_records=128", func(m map[string]any) { obj(m, "budgets")["max_records"] = 128 }},
		{"budgets.max_chars=500000", func(m map[string]any) { obj(m, "budgets")["max_chars"] = 500000 }},
		{"budgets.max_bytes=2000000", func(m map[string]any) { obj(m, "budgets")["max_bytes"] = 2000000 }},
		{"budgets.max_lines=50000", func(m map[string]any) { obj(m, "budgets")["max_lines"] = 50000 }},
		{"budgets.timeout_ms=100", func(m map[string]any) { obj(m, "budgets")["timeout_ms"] = 100 }},
		{"budgets.timeout_ms=120000", func(m map[string]any) { obj(m, "budgets")["timeout_ms"] = 120000 }},
		{"source max_chars=100000", func(m map[string]any) { obj(m, "forge_discussions", "budgets")["max_chars"] = 100000 }},
		{"source max_bytes=400000", func(m map[string]any) { obj(m, "forge_discussions", "budgets")["max_bytes"] = 400000 }},
		{"source max_lines=10000", func(m map[string]any) { obj(m, "forge_discussions", "budgets")["max_lines"] = 10000 }},
		{"max_age_seconds=0", func(m map[string]any) { obj(m, "forge_discussions")["max_age_seconds"] = 0 }},
		{"max_age_seconds=31536000", func(m map[string]any) { obj(m, "forge_discussions")["max_age_seconds"] = 31536000 }},
		{"max_threads=100", func(m map[string]any) { obj(m, "forge_discussions")["max_threads"] = 100 }},
		{"max_replies_per_thread=1", func(m map[string]any) { obj(m, "forge_discussions")["max_replies_per_thread"] = 1 }},
		{"max_items=500", func(m map[string]any) { obj(m, "forge_discussions")["max_items"] = 500 }},
		{"account_classes all four", func(m map[string]any) {
			obj(m, "forge_discussions")["account_classes"] = []any{"automation", "system", "toolkit_bot", "user"}
		}},
		{"references.max_records=64", func(m map[string]any) { ref0(m)["max_records"] = 64 }},
		{"ci max_age_seconds=60", func(m map[string]any) {
			m["schema_version"] = policyV3
			c := ciSelector()
			c["max_age_seconds"] = 60
			m["ci_outcomes"] = c
		}},
		{"ci max_age_seconds=604800", func(m map[string]any) {
			m["schema_version"] = policyV3
			c := ciSelector()
			c["max_age_seconds"] = 604800
			m["ci_outcomes"] = c
		}},
		{"v1 with discussions and references", func(m map[string]any) { m["schema_version"] = policyV1; delete(m, "remediation_threads") }},
		{"https_url recognizer", func(m map[string]any) {
			ref0(m)["recognizer"] = map[string]any{"type": "https_url", "origin": "https://docs.example.invalid", "path_prefix": "/published/"}
		}},
		{"explicit recognizer", func(m map[string]any) {
			ref0(m)["recognizer"] = map[string]any{"type": "explicit"}
			ref0(m)["resource_class"] = "document"
		}},
		{"adapter name 64 chars", func(m map[string]any) { ref0(m)["adapter"] = "a" + strings.Repeat("b", 63) }},
		{"issue_key prefix 16 chars", func(m map[string]any) {
			ref0(m)["recognizer"] = map[string]any{"type": "issue_key", "prefix": "A" + strings.Repeat("9", 15)}
		}},
		{"only references", func(m map[string]any) { delete(m, "forge_discussions"); delete(m, "remediation_threads") }},
		{"retain count", func(m map[string]any) {
			pr := obj(ref0(m), "projections")
			pr["retrieve"] = []any{"count", "descriptor", "state"}
			pr["model"] = []any{"descriptor"}
			pr["publish"] = []any{}
			pr["retain"] = []any{"count"}
		}},
	}
	for _, e := range edges {
		t.Run(e.name, func(t *testing.T) {
			if _, err := parsePolicy(mutate(t, e.f)); err != nil {
				t.Fatalf("rejected: %v", err)
			}
		})
	}
}

func TestPolicyRejections(t *testing.T) {
	raw := func(s string) func() []byte { return func() []byte { return []byte(s) } }
	mut := func(f func(m map[string]any)) func() []byte { return func() []byte { return mutate(t, f) } }
	example := string(examplePolicy(t))
	cases := []struct {
		rule string
		doc  func() []byte
		want string // substring naming the field and rule
	}{
		{"oversized policy fails closed", raw(strings.Repeat(" ", maxPolicyBytes+1)), "over the 65536-byte (64 KiB) bound"},
		{"invalid UTF-8 fails closed", raw("{\"schema_version\":\"\xff\"}"), "UTF-8"},
		{"duplicate key fails closed", raw(strings.Replace(example, `"max_records": 32,`, `"max_records": 32, "max_records": 31,`, 1)), "$.budgets.max_records: duplicate key"},
		{"trailing data fails closed", raw(example + "{}"), "trailing data"},
		{"not an object", raw(`[]`), "$: must be a JSON object"},
		{"unknown version fails closed", mut(func(m map[string]any) { m["schema_version"] = "ocr.review-context-policy/v4" }), "$.schema_version: unknown version"},
		{"missing version", mut(func(m map[string]any) { delete(m, "schema_version") }), "$.schema_version: required field missing"},
		{"unknown top-level field", mut(func(m map[string]any) { m["extra"] = true }), "$.extra: unknown field"},
		{"unknown nested field", mut(func(m map[string]any) { obj(m, "forge_discussions")["Max_threads"] = 1 }), "$.forge_discussions.Max_threads: unknown field"},
		{"null is not a value", mut(func(m map[string]any) { obj(m, "forge_discussions")["required"] = nil }), "$.forge_discussions.required: must be true or false"},
		{"v1 rejects remediation_threads", mut(func(m map[string]any) { m["schema_version"] = policyV1 }), "$.remediation_threads: needs"},
		{"v2 rejects ci_outcomes", mut(func(m map[string]any) { m["ci_outcomes"] = ciSelector() }), "$.ci_outcomes: needs"},
		{"at least one source", mut(func(m map[string]any) {
			delete(m, "forge_discussions")
			delete(m, "remediation_threads")
			delete(m, "references")
		}), "selects no source"},
		{"empty references is no source", mut(func(m map[string]any) {
			delete(m, "forge_discussions")
			delete(m, "remediation_threads")
			m["references"] = []any{}
		}), "selects no source"},
		{"budgets required", mut(func(m map[string]any) { delete(m, "budgets") }), "$.budgets: required field missing"},
		{"budgets.max_records 0", mut(func(m map[string]any) { obj(m, "budgets")["max_records"] = 0 }), "$.budgets.max_records: 0 outside the allowed range 1..128"},
		{"budgets.max_records 129", mut(func(m map[string]any) { obj(m, "budgets")["max_records"] = 129 }), "1..128"},
		{"budgets.max_chars 500001", mut(func(m map[string]any) { obj(m, "budgets")["max_chars"] = 500001 }), "$.budgets.max_chars"},
		{"budgets.max_bytes 2000001", mut(func(m map[string]any) { obj(m, "budgets")["max_bytes"] = 2000001 }), "$.budgets.max_bytes"},
		{"budgets.max_lines 50001", mut(func(m map[string]any) { obj(m, "budgets")["max_lines"] = 50001 }), "$.budgets.max_lines"},
		{"budgets.timeout_ms 99", mut(func(m map[string]any) { obj(m, "budgets")["timeout_ms"] = 99 }), "100..120000"},
		{"budgets.timeout_ms 120001", mut(func(m map[string]any) { obj(m, "budgets")["timeout_ms"] = 120001 }), "100..120000"},
		{"integer with fraction", raw(strings.Replace(example, `"max_records": 32`, `"max_records": 32.0`, 1)), "without fraction"},
		{"integer with exponent", raw(strings.Replace(example, `"max_records": 32`, `"max_records": 3.2e1`, 1)), "without fraction"},
		{"integer as string", mut(func(m map[string]any) { obj(m, "budgets")["max_records"] = "32" }), "must be an integer"},
		{"source max_chars 100001", mut(func(m map[string]any) { obj(m, "forge_discussions", "budgets")["max_chars"] = 100001 }), "$.forge_discussions.budgets.max_chars"},
		{"source max_bytes 400001", mut(func(m map[string]any) { obj(m, "forge_discussions", "budgets")["max_bytes"] = 400001 }), "$.forge_discussions.budgets.max_bytes"},
		{"source max_lines 0", mut(func(m map[string]any) { obj(m, "remediation_threads", "budgets")["max_lines"] = 0 }), "$.remediation_threads.budgets.max_lines"},
		{"max_age_seconds 31536001", mut(func(m map[string]any) { obj(m, "forge_discussions")["max_age_seconds"] = 31536001 }), "$.forge_discussions.max_age_seconds"},
		{"max_age_seconds negative", mut(func(m map[string]any) { obj(m, "forge_discussions")["max_age_seconds"] = -1 }), "$.forge_discussions.max_age_seconds"},
		{"max_threads 0", mut(func(m map[string]any) { obj(m, "forge_discussions")["max_threads"] = 0 }), "$.forge_discussions.max_threads"},
		{"max_threads 101", mut(func(m map[string]any) { obj(m, "forge_discussions")["max_threads"] = 101 }), "$.forge_discussions.max_threads"},
		{"max_replies_per_thread 101", mut(func(m map[string]any) { obj(m, "forge_discussions")["max_replies_per_thread"] = 101 }), "max_replies_per_thread"},
		{"max_items 501", mut(func(m map[string]any) { obj(m, "forge_discussions")["max_items"] = 501 }), "max_items"},
		{"account class unknown", mut(func(m map[string]any) { obj(m, "forge_discussions")["account_classes"] = []any{"bot"} }), "$.forge_discussions.account_classes[0]"},
		{"account classes unsorted", mut(func(m map[string]any) { obj(m, "forge_discussions")["account_classes"] = []any{"user", "automation"} }), "sorted and unique"},
		{"account classes duplicate", mut(func(m map[string]any) { obj(m, "forge_discussions")["account_classes"] = []any{"user", "user"} }), "sorted and unique"},
		{"account classes empty", mut(func(m map[string]any) { obj(m, "forge_discussions")["account_classes"] = []any{} }), "at least one class"},
		{"remediation never toolkit_bot", mut(func(m map[string]any) {
			obj(m, "remediation_threads")["account_classes"] = []any{"toolkit_bot", "user"}
		}), "cannot include toolkit_bot"},
		{"remediation projections are fixed", mut(func(m map[string]any) {
			obj(m, "remediation_threads")["projections"] = obj(m, "forge_discussions")["projections"]
		}), "$.remediation_threads.projections: unknown field"},
		{"projection not subset of retrieve", mut(func(m map[string]any) {
			obj(m, "forge_discussions", "projections")["retrieve"] = []any{"descriptor", "state"}
		}), "$.forge_discussions.projections.model[2]: \"text\" is not in retrieve"},
		{"publish not subset of retrieve", mut(func(m map[string]any) {
			obj(m, "forge_discussions", "projections")["publish"] = []any{"count"}
		}), "$.forge_discussions.projections.publish[0]"},
		{"retain text impossible", mut(func(m map[string]any) {
			obj(m, "forge_discussions", "projections")["retain"] = []any{"state", "text"}
		}), "cannot be retained"},
		{"retain descriptor impossible", mut(func(m map[string]any) {
			obj(m, "forge_discussions", "projections")["retain"] = []any{"descriptor"}
		}), "cannot be retained"},
		{"projection unknown field", mut(func(m map[string]any) {
			obj(m, "forge_discussions", "projections")["retrieve"] = []any{"descriptor", "url"}
		}), "is not a projection field"},
		{"projection unsorted", mut(func(m map[string]any) {
			obj(m, "forge_discussions", "projections")["model"] = []any{"text", "state"}
		}), "$.forge_discussions.projections.model: must be sorted and unique"},
		{"projection empty retrieve", mut(func(m map[string]any) {
			obj(m, "forge_discussions", "projections")["retrieve"] = []any{}
			obj(m, "forge_discussions", "projections")["model"] = []any{}
			obj(m, "forge_discussions", "projections")["publish"] = []any{}
			obj(m, "forge_discussions", "projections")["retain"] = []any{}
		}), "retrieve: must name at least one field"},
		{"projections missing", mut(func(m map[string]any) { delete(obj(m, "forge_discussions"), "projections") }), "$.forge_discussions.projections: required field missing"},
		{"references more than 16", mut(func(m map[string]any) {
			var l []any
			for i := 0; i < 17; i++ {
				r := map[string]any{}
				b, _ := json.Marshal(ref0(m))
				json.Unmarshal(b, &r)
				r["tenant"] = "t" + strings.Repeat("x", i)
				l = append(l, r)
			}
			m["references"] = l
		}), "at most 16"},
		{"duplicate reference", mut(func(m map[string]any) { m["references"] = []any{ref0(m), ref0(m)} }), "duplicates an earlier reference"},
		{"adapter name pattern", mut(func(m map[string]any) { ref0(m)["adapter"] = "Tracker" }), "$.references[0].adapter: must match"},
		{"adapter name too long", mut(func(m map[string]any) { ref0(m)["adapter"] = "a" + strings.Repeat("b", 64) }), "$.references[0].adapter"},
		{"tenant name pattern", mut(func(m map[string]any) { ref0(m)["tenant"] = "9eng" }), "$.references[0].tenant: must match"},
		{"resource class closed", mut(func(m map[string]any) { ref0(m)["resource_class"] = "wiki" }), "resource_class: must be issue or document"},
		{"references max_records 65", mut(func(m map[string]any) { ref0(m)["max_records"] = 65 }), "$.references[0].max_records"},
		{"references max_records 0", mut(func(m map[string]any) { ref0(m)["max_records"] = 0 }), "$.references[0].max_records"},
		{"issue_key prefix lowercase", mut(func(m map[string]any) { ref0(m)["recognizer"] = map[string]any{"type": "issue_key", "prefix": "demo"} }), "prefix: must match"},
		{"issue_key prefix 17 chars", mut(func(m map[string]any) {
			ref0(m)["recognizer"] = map[string]any{"type": "issue_key", "prefix": "A" + strings.Repeat("B", 16)}
		}), "prefix: must match"},
		{"recognizer type unknown", mut(func(m map[string]any) { ref0(m)["recognizer"] = map[string]any{"type": "regex"} }), "type: must be issue_key"},
		{"recognizer extra field", mut(func(m map[string]any) {
			ref0(m)["recognizer"] = map[string]any{"type": "explicit", "prefix": "X"}
		}), "$.references[0].recognizer.prefix: unknown field"},
		{"https_url http origin", mut(func(m map[string]any) {
			ref0(m)["recognizer"] = map[string]any{"type": "https_url", "origin": "http://docs.example.invalid", "path_prefix": "/p/"}
		}), "origin: must be exactly https://"},
		{"https_url origin with path", mut(func(m map[string]any) {
			ref0(m)["recognizer"] = map[string]any{"type": "https_url", "origin": "https://docs.example.invalid/x", "path_prefix": "/p/"}
		}), "origin"},
		{"https_url origin with credentials", mut(func(m map[string]any) {
			ref0(m)["recognizer"] = map[string]any{"type": "https_url", "origin": "https://u:p@docs.example.invalid", "path_prefix": "/p/"}
		}), "origin"},
		{"https_url path traversal", mut(func(m map[string]any) {
			ref0(m)["recognizer"] = map[string]any{"type": "https_url", "origin": "https://docs.example.invalid", "path_prefix": "/a/../b/"}
		}), "path_prefix"},
		{"ci checks empty", mut(func(m map[string]any) {
			m["schema_version"] = policyV3
			m["ci_outcomes"] = map[string]any{"checks": []any{}}
		}), "$.ci_outcomes.checks: 0 entries, need 1..32"},
		{"ci max_age_seconds 59", mut(func(m map[string]any) {
			m["schema_version"] = policyV3
			c := ciSelector()
			c["max_age_seconds"] = 59
			m["ci_outcomes"] = c
		}), "60..604800"},
		{"ci max_age_seconds 604801", mut(func(m map[string]any) {
			m["schema_version"] = policyV3
			c := ciSelector()
			c["max_age_seconds"] = 604801
			m["ci_outcomes"] = c
		}), "60..604800"},
		{"ci check names unsorted", mut(func(m map[string]any) {
			m["schema_version"] = policyV3
			c := ciSelector()
			l := c["checks"].([]any)
			l[0], l[1] = l[1], l[0]
			m["ci_outcomes"] = c
		}), "$.ci_outcomes.checks[].name: must be sorted and unique"},
		{"ci path prefix absolute", mut(func(m map[string]any) {
			m["schema_version"] = policyV3
			m["ci_outcomes"] = map[string]any{"checks": []any{map[string]any{"name": "unit", "path_prefixes": []any{"/pkg"}}}}
		}), "$.ci_outcomes.checks[0].path_prefixes[0]: must be a normalized"},
		{"ci path prefix dotdot", mut(func(m map[string]any) {
			m["schema_version"] = policyV3
			m["ci_outcomes"] = map[string]any{"checks": []any{map[string]any{"name": "unit", "path_prefixes": []any{"pkg/../x"}}}}
		}), "normalized"},
		{"ci path prefixes unsorted", mut(func(m map[string]any) {
			m["schema_version"] = policyV3
			m["ci_outcomes"] = map[string]any{"checks": []any{map[string]any{"name": "unit", "path_prefixes": []any{"pkg/", "cmd/"}}}}
		}), "path_prefixes: must be sorted and unique"},
		{"ci path prefixes 33", mut(func(m map[string]any) {
			m["schema_version"] = policyV3
			var l []any
			for i := 0; i < 33; i++ {
				l = append(l, "p"+strings.Repeat("a", i+1))
			}
			m["ci_outcomes"] = map[string]any{"checks": []any{map[string]any{"name": "unit", "path_prefixes": l}}}
		}), "33 entries, need 1..32"},
		{"ci check name with newline", mut(func(m map[string]any) {
			m["schema_version"] = policyV3
			m["ci_outcomes"] = map[string]any{"checks": []any{map[string]any{"name": "a\nb", "path_prefixes": []any{"pkg/"}}}}
		}), "$.ci_outcomes.checks[0].name"},
		{"ci 33 checks", mut(func(m map[string]any) {
			m["schema_version"] = policyV3
			var l []any
			for i := 0; i < 33; i++ {
				l = append(l, map[string]any{"name": "j" + strings.Repeat("a", i+1), "path_prefixes": []any{"pkg/"}})
			}
			m["ci_outcomes"] = map[string]any{"checks": l}
		}), "33 entries, need 1..32"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			_, err := parsePolicy(c.doc())
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrPolicy) {
				t.Fatalf("error does not wrap ErrPolicy: %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not name %q", err, c.want)
			}
		})
	}
}

func FuzzParsePolicy(f *testing.F) {
	f.Add(examplePolicy(f))
	f.Add([]byte(`{"schema_version":"ocr.review-context-policy/v3","budgets":{},"ci_outcomes":{"checks":[]}}`))
	f.Add([]byte(`{"a":{"a":{"a":[[[[[]]]]]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePolicy(b)
		if err != nil {
			if !errors.Is(err, ErrPolicy) {
				t.Fatalf("error not wrapping ErrPolicy: %v", err)
			}
			return
		}
		if len(p.Digest) != 64 || len(p.Sources()) == 0 {
			t.Fatalf("accepted policy without digest or source")
		}
		// An accepted policy is stable: re-parsing the same bytes gives the same digest.
		p2, err := parsePolicy(b)
		if err != nil || p2.Digest != p.Digest {
			t.Fatalf("re-parse differs")
		}
	})
}
