package distill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// carriedSources is, per event rule, every payload path whose value may reach the excerpt
// (docs/distill.md, written out here independently of the rule tables). A value placed anywhere
// else must never appear in the excerpt (abuse case 3).
var carriedSources = map[string][]string{
	"issue_comment": {"action", "comment.body", "comment.html_url", "comment.user.login"},
	"pull_request_review_comment": {"action", "comment.path", "comment.start_line", "comment.line", "comment.original_line",
		"comment.body", "comment.html_url", "comment.user.login"},
	"pull_request_review": {"action", "review.state", "review.body", "review.html_url", "review.user.login"},
	"issues":              {"action", "issue.number", "issue.title", "issue.state", "issue.html_url", "label.name"},
	"pull_request": {"action", "pull_request.number", "pull_request.title", "pull_request.state", "pull_request.html_url",
		"pull_request.merged", "pull_request.draft", "label.name"},
	"workflow_run": {"action", "workflow_run.id", "workflow_run.name", "workflow_run.status", "workflow_run.conclusion",
		"workflow_run.html_url", "workflow_run.head_branch"},
	"check_run": {"action", "check_run.id", "check_run.name", "check_run.status", "check_run.conclusion", "check_run.html_url",
		"check_run.check_suite.head_branch", "check_run.output.title", "check_run.output.summary"},
	"check_suite": {"action", "check_suite.id", "check_suite.status", "check_suite.conclusion", "check_suite.head_branch"},
	"status":      {"action", "state", "context", "description", "target_url"},
}

// mayCarry reports whether a value placed at path p may reach the excerpt: p is a carried
// source or contains one (replacing comment.user with an object that has a login).
func mayCarry(event, p string) bool {
	for _, s := range carriedSources[event] {
		if s == p || strings.HasPrefix(s, p+".") {
			return true
		}
	}
	return false
}

const canary = "CANARY7f3a"

// hostileValues replace one payload value at a time: the wrong JSON type everywhere, each
// carrying the canary and an API URL where it can.
var hostileValues = []struct {
	name string
	v    any
}{
	{"object where a string is expected", map[string]any{"login": canary, "body": canary, "name": canary, "title": canary,
		"html_url": "https://api.github.com/" + canary, "url": "https://api.github.com/" + canary, "performed_via_github_app": canary}},
	{"array where an object is expected", []any{canary, map[string]any{"login": canary, "body": canary}}},
	{"number as a login", json.Number("424242")},
	{"API URL string", "https://api.github.com/repos/o/r/" + canary},
}

// maxHostileDepth bounds the paths mutated: every carried source is at most 4 deep
// (check_run.check_suite.head_branch); deeper values only get the object variant.
const maxHostileDepth = 4

// location is one path into a decoded payload.
type location struct {
	keys []any // string keys and int indexes
}

func (l location) String() string {
	parts := make([]string, len(l.keys))
	for i, k := range l.keys {
		switch k := k.(type) {
		case string:
			parts[i] = k
		case int:
			parts[i] = strconv.Itoa(k)
		}
	}
	return strings.Join(parts, ".")
}

// locations lists every object member and the first element of every array, depth first, with
// map keys sorted.
func locations(v any, prefix []any, out *[]location) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(append([]any{}, prefix...), k)
			*out = append(*out, location{p})
			locations(t[k], p, out)
		}
	case []any:
		if len(t) > 0 {
			p := append(append([]any{}, prefix...), 0)
			*out = append(*out, location{p})
			locations(t[0], p, out)
		}
	}
}

// replaceAt sets the value at loc and returns a function restoring the original.
func replaceAt(root any, loc location, v any) func() {
	cur := root
	for _, k := range loc.keys[:len(loc.keys)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k.(string)]
		case []any:
			cur = c[k.(int)]
		}
	}
	switch c := cur.(type) {
	case map[string]any:
		key := loc.keys[len(loc.keys)-1].(string)
		old := c[key]
		c[key] = v
		return func() { c[key] = old }
	case []any:
		i := loc.keys[len(loc.keys)-1].(int)
		old := c[i]
		c[i] = v
		return func() { c[i] = old }
	}
	panic("unreachable")
}

// TestHostileVariantsOfTheCorpus replaces, one at a time, every value of the first example of
// each of the nine event types with the wrong JSON type (objects where strings are expected,
// arrays where objects are expected, numbers as logins) or an API URL carrying a canary (null
// and booleans are TestAbuse4's), and
// checks that the excerpt is still one JSON object of allow-listed keys, that no address field
// is an API URL, that nothing placed outside a carried path reaches the excerpt, and that a
// carried field of the wrong type is left out rather than converted (abuse cases 3 and 4).
func TestHostileVariantsOfTheCorpus(t *testing.T) {
	start := time.Now()
	corpus := githubCorpus(t)
	events := make([]string, 0, len(corpus))
	for ev := range corpus {
		events = append(events, ev)
	}
	sort.Strings(events)
	n := 0
	for _, ev := range events {
		payload := readFixture(t, strings.TrimPrefix(corpus[ev][0], fixtures+"/"))
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.UseNumber()
		var root any
		if err := dec.Decode(&root); err != nil {
			t.Fatal(err)
		}
		var locs []location
		locations(root, nil, &locs)
		for _, loc := range locs {
			for i, hv := range hostileValues {
				if i > 0 && len(loc.keys) > maxHostileDepth {
					break
				}
				restore := replaceAt(root, loc, hv.v)
				mutated, err := json.Marshal(root)
				restore()
				if err != nil {
					t.Fatal(err)
				}
				out, rep := Excerpt(gitHub, ev, mutated, Options{})
				n++
				where := fmt.Sprintf("%s %s = %s", ev, loc, hv.name)
				checkHostile(t, where, ev, loc.String(), out, rep)
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d variants", n)
	}
	t.Logf("%d hostile variants in %v", n, time.Since(start))
}

func checkHostile(t *testing.T, where, ev, path string, out []byte, rep Report) {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&m); err != nil || dec.More() {
		t.Fatalf("%s: not one JSON object: %s", where, out)
	}
	if (len(m) == 0) != (rep.Warning != "") {
		t.Errorf("%s: excerpt %s with warning %q", where, out, rep.Warning)
	}
	s := string(out)
	if !mayCarry(ev, path) && (strings.Contains(s, canary) || strings.Contains(s, "api.github.com")) {
		t.Errorf("%s: a value outside the carried paths reached the excerpt: %s", where, out)
	}
	for _, bad := range []string{"performed_via_github_app", `"sender"`, `"repository"`, `"user"`, `"installation"`} {
		if strings.Contains(s, bad) {
			t.Errorf("%s: %s in %s", where, bad, out)
		}
	}
	for k, v := range m {
		switch k {
		case "event", "action", "label":
			if _, ok := v.(string); !ok {
				t.Errorf("%s: %s is %T", where, k, v)
			}
			continue
		}
		c, ok := v.(map[string]any)
		if !ok || k != containerOf[ev] {
			t.Errorf("%s: unexpected top-level %q: %s", where, k, out)
			continue
		}
		for ck, cv := range c {
			if !contains(allowedKeys[k], ck) {
				t.Errorf("%s: %s.%s is not on the allow-list", where, k, ck)
			}
			switch ck {
			case "html_url", "target_url":
				if u, _ := cv.(string); !isWebURL(u) {
					t.Errorf("%s: %s.%s = %v is not a web URL", where, k, ck, cv)
				}
			case "author", "body", "title", "name", "state", "path", "head_branch":
				if _, ok := cv.(string); !ok {
					t.Errorf("%s: %s.%s is %T, want a string", where, k, ck, cv)
				}
			case "number", "id", "line", "start_line", "original_line":
				if _, ok := cv.(float64); !ok {
					t.Errorf("%s: %s.%s is %T, want a number", where, k, ck, cv)
				}
			case "merged", "draft":
				if _, ok := cv.(bool); !ok {
					t.Errorf("%s: %s.%s is %T, want a boolean", where, k, ck, cv)
				}
			}
		}
	}
}

// Duplicate keys: the last occurrence wins, exactly as encoding/json decides, at the root, in a
// container and in a nested user object — including a duplicate that changes the type.
func TestDuplicateKeysLastWinsLikeEncodingJSON(t *testing.T) {
	for _, c := range []struct{ name, payload, want string }{
		{"duplicate body", `{"comment":{"body":"first","html_url":"https://github.com/o/r/issues/1#c","body":"second"}}`,
			`{"comment":{"body":"second","html_url":"https://github.com/o/r/issues/1#c"}}`},
		{"a web URL then an API URL", `{"comment":{"body":"b","html_url":"https://github.com/o/r/issues/1#c","html_url":"https://api.github.com/repos/o/r/issues/comments/1"}}`,
			`{"comment":{"body":"b"}}`},
		{"an API URL then a web URL", `{"comment":{"body":"b","html_url":"https://api.github.com/x","html_url":"https://github.com/o/r/issues/1#c"}}`,
			`{"comment":{"body":"b","html_url":"https://github.com/o/r/issues/1#c"}}`},
		{"duplicate login in the user object", `{"comment":{"body":"b","user":{"login":"alice","login":"mallory"}}}`,
			`{"comment":{"body":"b","author":"mallory"}}`},
		{"duplicate container, the last of the wrong type", `{"comment":{"body":"b"},"comment":"x"}`, `{}`},
		{"duplicate container, the last an object", `{"comment":"x","comment":{"body":"b"}}`,
			`{"comment":{"body":"b"}}`},
		{"duplicate action", `{"action":"created","action":"deleted","comment":{"body":"b"}}`,
			`{"action":"deleted","comment":{"body":"b"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _ := Excerpt(gitHub, "issue_comment", []byte(c.payload), Options{})
			if string(out) != c.want {
				t.Fatalf("got  %s\nwant %s", out, c.want)
			}
			// The same payload through encoding/json alone, re-encoded without duplicates,
			// distils to the same excerpt: the decoder's choice is the distiller's.
			var v any
			if err := json.Unmarshal([]byte(c.payload), &v); err != nil {
				t.Fatal(err)
			}
			dedup, _ := json.Marshal(v)
			again, _ := Excerpt(gitHub, "issue_comment", dedup, Options{})
			if !reflect.DeepEqual(again, out) {
				t.Fatalf("encoding/json decides differently: %s vs %s", again, out)
			}
		})
	}
}

// Invalid UTF-8 inside JSON strings becomes U+FFFD (encoding/json's decoding, before any rule
// runs, addresses included), and the excerpt is valid UTF-8.
func TestInvalidUTF8InsideJSONStrings(t *testing.T) {
	payload := []byte("{\"comment\":{\"body\":\"a\xffb\xc3\",\"html_url\":\"https://github.com/o/r/issues/1#c\xfe\",\"user\":{\"login\":\"al\xffice\"}}}")
	out, _ := Excerpt(gitHub, "issue_comment", payload, Options{})
	want := "{\"comment\":{\"body\":\"a\ufffdb\ufffd\",\"html_url\":\"https://github.com/o/r/issues/1#c\ufffd\",\"author\":\"al\ufffdice\"}}"
	if string(out) != want {
		t.Fatalf("got  %q\nwant %q", out, want)
	}
}

// Nesting deeper than encoding/json's limit (10,000) is not JSON to the decoder: {} with a
// warning, never a panic or a stack overflow; nesting within the limit costs nothing.
func TestDeeplyNestedJSON(t *testing.T) {
	base := readFixture(t, "github/issue_comment/00-created.json")
	nest := func(depth int) []byte {
		return append(append(append(bytes.TrimSuffix(bytes.TrimSpace(base), []byte("}")), `,"x":`...),
			append(bytes.Repeat([]byte("["), depth), bytes.Repeat([]byte("]"), depth)...)...), '}')
	}
	out, rep := Excerpt(gitHub, "issue_comment", nest(9000), Options{})
	if !strings.Contains(string(out), `"body":"You are totally right!`) || rep.Warning != "" {
		t.Fatalf("depth 9000: %s (%s)", out, rep.Warning)
	}
	out, rep = Excerpt(gitHub, "issue_comment", nest(200000), Options{})
	if string(out) != "{}" || rep.Warning != warnPayloadNotJSON {
		t.Fatalf("depth 200000: %s (%s)", out, rep.Warning)
	}
	// Deep nesting inside a carried container is the wrong type for the field.
	deep := `{"comment":{"body":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `,"html_url":"https://github.com/o/r/issues/1#c"}}`
	out, _ = Excerpt(gitHub, "issue_comment", []byte(deep), Options{})
	if string(out) != `{"comment":{"html_url":"https://github.com/o/r/issues/1#c"}}` {
		t.Fatalf("deep body: %s", out)
	}
}

// A 10 MB body is capped like any other, quickly, and its address survives.
func TestTenMegabyteBody(t *testing.T) {
	payload := issueCommentPayload(t, func(_, c map[string]any) {
		c["body"] = strings.Repeat("log line with text 0123456789\n", 10<<20/30)
	})
	start := time.Now()
	out, rep := Excerpt(gitHub, "issue_comment", payload, Options{})
	elapsed := time.Since(start)
	c := obj(t, decode(t, out), "comment")
	if c["html_url"] != "https://github.com/Codertocat/Hello-World/issues/1#issuecomment-492700400" ||
		!strings.Contains(c["body"].(string), "\n"+markerPrefix) || len(out) > DefaultMaxTextChars+400 {
		t.Fatalf("excerpt of %d bytes: %.300s", len(out), out)
	}
	if !reflect.DeepEqual(rep.Truncated, []string{"comment.body"}) {
		t.Errorf("truncated %v", rep.Truncated)
	}
	t.Logf("10 MB body distilled in %v", elapsed)
}

// gitlabCarried is, per GitLab rule, every payload path whose value may reach the excerpt
// (docs/distill.md, "GitLab events"), written out independently of the rule tables. N stands for
// any array index.
var gitlabCarried = map[string][]string{
	"note": {"object_attributes.action", "object_attributes.noteable_type", "object_attributes.position.new_path",
		"object_attributes.position.new_line", "object_attributes.position.old_path", "object_attributes.position.old_line",
		"object_attributes.note", "object_attributes.url", "user.username"},
	"merge_request": {"object_attributes.action", "object_attributes.iid", "object_attributes.title", "object_attributes.state",
		"object_attributes.url", "object_attributes.draft", "object_attributes.work_in_progress",
		"changes.labels.previous.N.title", "changes.labels.current.N.title"},
	"issue": {"object_attributes.action", "object_attributes.iid", "object_attributes.title", "object_attributes.state",
		"object_attributes.url", "changes.labels.previous.N.title", "changes.labels.current.N.title"},
	"pipeline": {"object_attributes.action", "object_attributes.id", "object_attributes.name", "object_attributes.status",
		"object_attributes.url", "object_attributes.ref", "project.web_url",
		"builds.N.id", "builds.N.name", "builds.N.stage", "builds.N.failure_reason", "builds.N.status"},
	"build": {"object_attributes.action", "build_id", "build_name", "build_stage", "build_status", "build_failure_reason",
		"ref", "repository.homepage", "project.web_url"},
}

var gitlabAllowed = map[string][]string{
	"note":          {"noteable_type", "new_path", "new_line", "old_path", "old_line", "note", "url", "author"},
	"merge_request": {"iid", "title", "state", "url", "draft", "labels_added", "labels_removed"},
	"issue":         {"iid", "title", "state", "url", "labels_added", "labels_removed"},
	"pipeline":      {"id", "name", "status", "url", "ref", "failed_jobs"},
	"job":           {"build_id", "build_name", "build_stage", "build_status", "build_failure_reason", "url", "ref"},
}

func gitlabMayCarry(rule, p string) bool {
	parts := strings.Split(p, ".")
	for i, s := range parts {
		if _, err := strconv.Atoi(s); err == nil {
			parts[i] = "N"
		}
	}
	p = strings.Join(parts, ".")
	for _, s := range gitlabCarried[rule] {
		if s == p || strings.HasPrefix(s, p+".") {
			return true
		}
	}
	return false
}

// TestHostileVariantsOfGitLabPayloads is TestHostileVariantsOfTheCorpus for GitLab's webhook
// shapes: every value of one payload per rule replaced by the wrong type or an API URL with a
// canary; nothing outside the carried paths reaches the excerpt, every key is allow-listed and
// every url is a web URL.
func TestHostileVariantsOfGitLabPayloads(t *testing.T) {
	n := 0
	for _, c := range []struct{ file, rule, container string }{
		{"note_merge_request_diff.json", "note", "note"},
		{"merge_request.json", "merge_request", "merge_request"},
		{"issue.json", "issue", "issue"},
		{"pipeline_failed.json", "pipeline", "pipeline"},
		{"build_failed.json", "build", "job"},
	} {
		dec := json.NewDecoder(bytes.NewReader(readFixture(t, "gitlab/"+c.file)))
		dec.UseNumber()
		var root any
		if err := dec.Decode(&root); err != nil {
			t.Fatal(err)
		}
		var locs []location
		locations(root, nil, &locs)
		for _, loc := range locs {
			for i, hv := range hostileValues {
				if i > 0 && len(loc.keys) > maxHostileDepth+1 {
					break
				}
				restore := replaceAt(root, loc, hv.v)
				mutated, err := json.Marshal(root)
				restore()
				if err != nil {
					t.Fatal(err)
				}
				out, rep := Excerpt(gitLab, c.rule, mutated, Options{})
				n++
				where := fmt.Sprintf("gitlab %s %s = %s", c.rule, loc, hv.name)
				var m map[string]any
				if err := json.Unmarshal(out, &m); err != nil {
					t.Fatalf("%s: not JSON: %s", where, out)
				}
				if (len(m) == 0) != (rep.Warning != "") {
					t.Errorf("%s: excerpt %s with warning %q", where, out, rep.Warning)
				}
				s := string(out)
				if !gitlabMayCarry(c.rule, loc.String()) && (strings.Contains(s, canary) || strings.Contains(s, "api.github.com")) {
					t.Errorf("%s: a value outside the carried paths reached the excerpt: %s", where, out)
				}
				for k, v := range m {
					if k == "event" || k == "action" {
						continue
					}
					cm, ok := v.(map[string]any)
					if k != c.container || !ok {
						t.Errorf("%s: unexpected top-level %q: %s", where, k, out)
						continue
					}
					for ck, cv := range cm {
						if !contains(gitlabAllowed[k], ck) {
							t.Errorf("%s: %s.%s is not on the allow-list", where, k, ck)
						}
						if ck == "url" {
							if u, _ := cv.(string); !isWebURL(u) {
								t.Errorf("%s: url %v is not a web URL", where, cv)
							}
						}
					}
				}
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d variants", n)
	}
}
