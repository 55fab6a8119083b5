package distill

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// giteaActionsEvent is the GITHUB_EVENT_NAME Gitea/Forgejo Actions gives a job for each
// webhook event type (X-Gitea-Event-Type).
var giteaActionsEvent = map[string]string{
	"issues": "issues", "issue_label": "issues", "issue_comment": "issue_comment",
	"pull_request": "pull_request", "pull_request_label": "pull_request", "pull_request_comment": "issue_comment",
	"pull_request_review_approved": "pull_request_review", "pull_request_review_rejected": "pull_request_review",
	"pull_request_review_comment": "pull_request_review_comment",
}

// giteaReviewState is the excerpt's state of each Gitea review hook type.
var giteaReviewState = map[string]string{
	"pull_request_review_approved": "approved", "pull_request_review_rejected": "changes_requested",
	"pull_request_review_comment": "commented",
}

// wantGitea is the excerpt the spec asks of a recorded Gitea delivery, built from the payload
// itself: the item (issue or pull request) with its label names on a label event, the comment,
// or the review (state from its type, body from its content, the pull request's address, the
// sender's login), and the root action unless a comment's created/edited.
func wantGitea(t *testing.T, root map[string]any) map[string]any {
	t.Helper()
	want := map[string]any{}
	action, _ := root["action"].(string)
	get := func(m map[string]any, keys ...string) any {
		v, ok := lookup(m, keys)
		if !ok {
			t.Fatalf("payload lacks %v", keys)
		}
		if n, ok := v.(json.Number); ok {
			f, _ := n.Float64()
			return f
		}
		return v
	}
	switch {
	case root["comment"] != nil:
		c := root["comment"].(map[string]any)
		want["comment"] = map[string]any{"body": get(c, "body"), "html_url": get(c, "html_url"), "author": get(c, "user", "login")}
	case root["review"] != nil:
		r := root["review"].(map[string]any)
		want["review"] = map[string]any{"state": giteaReviewState[get(r, "type").(string)], "body": get(r, "content"),
			"html_url": get(root, "pull_request", "html_url"), "author": get(root, "sender", "login")}
	case root["pull_request"] != nil:
		p := root["pull_request"].(map[string]any)
		want["pull_request"] = map[string]any{"number": get(p, "number"), "title": get(p, "title"), "state": get(p, "state"),
			"html_url": get(p, "html_url"), "merged": get(p, "merged"), "draft": get(p, "draft")}
	case root["issue"] != nil:
		i := root["issue"].(map[string]any)
		want["issue"] = map[string]any{"number": get(i, "number"), "title": get(i, "title"), "state": get(i, "state"), "html_url": get(i, "html_url")}
	}
	if strings.HasPrefix(action, "label_") {
		names := []any{}
		if action == "label_updated" {
			item := "issue"
			if root["pull_request"] != nil {
				item = "pull_request"
			}
			ls, _ := root[item].(map[string]any)["labels"].([]any)
			for _, l := range ls {
				names = append(names, l.(map[string]any)["name"])
			}
		}
		want["labels"] = names
	}
	if action != "" && !(root["comment"] != nil && (action == "created" || action == "edited")) {
		want["action"] = action
	}
	return want
}

// The payloads real Gitea servers sent (test/fixtures/webhooks/gitea/<version>, recorded by
// test/realforge TestWebhookPayloads with the headers they came with) distil, under every name
// the event is known by — the Actions event name, X-Gitea-Event-Type and X-Gitea-Event — to
// exactly the spec's containers, field by field equal to the payload's values, each well under
// the payload's size.
func TestRecordedGiteaWebhooks(t *testing.T) {
	manifests, err := filepath.Glob(filepath.Join(fixtures, "gitea", "*", "headers.json"))
	if err != nil || len(manifests) < 2 {
		t.Fatalf("recorded Gitea versions: %v (%v), want at least 2", manifests, err)
	}
	for _, m := range manifests {
		version := filepath.Base(filepath.Dir(m))
		var headers map[string]struct {
			Event     string `json:"x_gitea_event"`
			EventType string `json:"x_gitea_event_type"`
		}
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &headers); err != nil {
			t.Fatal(err)
		}
		files := make([]string, 0, len(headers))
		for f := range headers {
			files = append(files, f)
		}
		sort.Strings(files)
		if len(files) < 11 {
			t.Errorf("gitea %s: %d recorded deliveries, want every event kind docs/distill.md lists (11)", version, len(files))
		}
		for _, file := range files {
			h := headers[file]
			payload := readFixture(t, filepath.Join("gitea", version, file))
			root, warn := decodeObject(payload, 1<<25)
			if warn != "" {
				t.Fatalf("%s/%s: %s", version, file, warn)
			}
			want := wantGitea(t, root)
			for _, ev := range []string{giteaActionsEvent[h.EventType], h.EventType, h.Event} {
				t.Run(fmt.Sprintf("%s/%s/%s", version, strings.TrimSuffix(file, ".json"), ev), func(t *testing.T) {
					out, rep := Excerpt(Forgejo, ev, payload, Options{})
					var got map[string]any
					if err := json.Unmarshal(out, &got); err != nil {
						t.Fatalf("excerpt %s: %v", out, err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("excerpt %s\nwant         %v", out, want)
					}
					if rep.Warning != "" {
						t.Errorf("warning %q", rep.Warning)
					}
					if 100*len(out) > 4*len(payload) {
						t.Errorf("excerpt %d bytes of a %d-byte payload (over 4%%)", len(out), len(payload))
					}
				})
			}
		}
	}
}

// A Gitea label event's labels list: null is no labels, a wrong-typed list is left out (the
// item is still carried), a label without a name is skipped, and on GitHub (whose label events
// carry the label object) the names are not read.
func TestGiteaLabelEventShapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		forge   Forge
		event   string
		payload string
		want    string
	}{
		{"NullIsNoLabels", Forgejo, "issues", `{"action":"label_updated","issue":{"number":1,"labels":null}}`, `{"action":"label_updated","issue":{"number":1},"labels":[]}`},
		{"WrongTypeLeftOut", Forgejo, "issue_label", `{"action":"label_updated","issue":{"number":1,"labels":"bug"}}`, `{"action":"label_updated","issue":{"number":1}}`},
		{"NamelessSkipped", Forgejo, "pull_request_label", `{"action":"label_updated","pull_request":{"number":2,"labels":[{"id":1},{"name":"bug"}]}}`, `{"action":"label_updated","pull_request":{"number":2},"labels":["bug"]}`},
		{"ClearedIsEmpty", Forgejo, "pull_request", `{"action":"label_cleared","pull_request":{"number":2,"labels":[{"name":"bug"}]}}`, `{"action":"label_cleared","pull_request":{"number":2},"labels":[]}`},
		{"OtherActionsCarryNoLabels", Forgejo, "issues", `{"action":"opened","issue":{"number":1,"labels":[{"name":"bug"}]}}`, `{"action":"opened","issue":{"number":1}}`},
		{"GitHubReadsTheLabelObject", gitHub, "issues", `{"action":"labeled","label":{"name":"bug"},"issue":{"number":1,"labels":[{"name":"bug"},{"name":"p1"}]}}`, `{"action":"labeled","issue":{"number":1},"label":"bug"}`},
		{"GiteaNamesAreForgejoOnly", gitHub, "issue_label", `{"action":"label_updated","issue":{"number":1,"labels":[{"name":"bug"}]}}`, `{"event":"issue_label","action":"label_updated","issue":{"number":1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := Excerpt(tc.forge, tc.event, []byte(tc.payload), Options{})
			if string(out) != tc.want {
				t.Errorf("excerpt %s, want %s", out, tc.want)
			}
		})
	}
}

// A comment-type review delivered under X-Gitea-Event pull_request_comment (a pull request
// payload with a review and no comment) distils to the review; a pull request comment under
// the same name (the Actions name) to the comment, without the review beside it.
func TestGiteaPullRequestCommentIsTheCommentOrTheReview(t *testing.T) {
	review := `{"action":"reviewed","pull_request":{"number":2,"html_url":"https://gitea.example/o/r/pulls/2"},"review":{"type":"pull_request_review_comment","content":"One more note."},"sender":{"login":"rev"}}`
	out, _ := Excerpt(Forgejo, "pull_request_comment", []byte(review), Options{})
	if want := `{"action":"reviewed","review":{"state":"commented","body":"One more note.","html_url":"https://gitea.example/o/r/pulls/2","author":"rev"}}`; string(out) != want {
		t.Errorf("review: %s, want %s", out, want)
	}
	comment := `{"action":"created","comment":{"body":"hi","html_url":"https://gitea.example/o/r/pulls/2#issuecomment-5","user":{"login":"rev"}},"review":{"type":"pull_request_review_comment","content":"x"}}`
	out, _ = Excerpt(Forgejo, "pull_request_comment", []byte(comment), Options{})
	if want := `{"comment":{"body":"hi","html_url":"https://gitea.example/o/r/pulls/2#issuecomment-5","author":"rev"}}`; string(out) != want {
		t.Errorf("comment: %s, want %s", out, want)
	}
}
