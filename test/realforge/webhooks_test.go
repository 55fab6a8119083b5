package realforge

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/test/realforge/giteaserver"
)

var update = flag.Bool("update", false, "rewrite test/fixtures/webhooks/gitea/<version> from the payloads the server sends")

// webhookFixtures holds one directory per Gitea version (test/fixtures/webhooks/gitea/1.25.5).
const webhookFixtures = "../fixtures/webhooks/gitea"

// delivery is one webhook request as Gitea sent it.
type delivery struct {
	event, eventType string // X-Gitea-Event, X-Gitea-Event-Type
	body             []byte
}

// receiver is the loopback endpoint the seeded repository's webhook delivers to.
type receiver struct {
	mu   sync.Mutex
	got  map[string]delivery // by fixture name (deliveryName), first delivery of each
	srv  *httptest.Server
	want []string
}

// deliveryName names a delivery's fixture: its X-Gitea-Event-Type, with "_cleared" for a
// label event whose action is label_cleared (the item's last labels removed at once).
func deliveryName(eventType string, body []byte) string {
	var p struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(body, &p) == nil && p.Action == "label_cleared" {
		return eventType + "_cleared"
	}
	return eventType
}

func newReceiver(t *testing.T, want []string) *receiver {
	r := &receiver{got: map[string]delivery{}, want: want}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		et := req.Header.Get("X-Gitea-Event-Type")
		name := deliveryName(et, b)
		r.mu.Lock()
		if _, ok := r.got[name]; !ok {
			r.got[name] = delivery{event: req.Header.Get("X-Gitea-Event"), eventType: et, body: b}
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// wait blocks until every wanted event type has been delivered (Gitea delivers from a queue).
func (r *receiver) wait(t *testing.T) map[string]delivery {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		r.mu.Lock()
		var missing []string
		for _, w := range r.want {
			if _, ok := r.got[w]; !ok {
				missing = append(missing, w)
			}
		}
		got := map[string]delivery{}
		for k, v := range r.got {
			got[k] = v
		}
		r.mu.Unlock()
		if len(missing) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook deliveries missing after 90s: %v (got %d types)", missing, len(got))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// actionsEvent is the GITHUB_EVENT_NAME Forgejo/Gitea Actions gives a job for each webhook
// event type, which is the --event distill is run with in CI.
var actionsEvent = map[string]string{
	"issues":                       "issues",
	"issue_label":                  "issues",
	"issue_comment":                "issue_comment",
	"pull_request":                 "pull_request",
	"pull_request_label":           "pull_request",
	"pull_request_comment":         "issue_comment",
	"pull_request_review_approved": "pull_request_review",
	"pull_request_review_rejected": "pull_request_review",
	"pull_request_review_comment":  "pull_request_review_comment",
}

// excerptOf is what the spec requires of each delivery's excerpt, whatever name the event is
// distilled under (container → fields; "labels" is the item's label names).
var excerptOf = map[string]map[string][]string{
	"issues":                       {"issue": {"number", "title", "state", "html_url"}},
	"issue_label":                  {"issue": {"number", "title", "state", "html_url"}, "labels": nil},
	"issue_label_cleared":          {"issue": {"number", "title", "state", "html_url"}, "labels": nil},
	"issue_comment":                {"comment": {"body", "html_url", "author"}},
	"pull_request":                 {"pull_request": {"number", "title", "state", "html_url", "merged", "draft"}},
	"pull_request_label":           {"pull_request": {"number", "title", "state", "html_url", "merged", "draft"}, "labels": nil},
	"pull_request_label_cleared":   {"pull_request": {"number", "title", "state", "html_url", "merged", "draft"}, "labels": nil},
	"pull_request_comment":         {"comment": {"body", "html_url", "author"}},
	"pull_request_review_approved": {"review": {"state", "body", "html_url", "author"}},
	"pull_request_review_rejected": {"review": {"state", "body", "html_url", "author"}},
	"pull_request_review_comment":  {"review": {"state", "body", "html_url", "author"}},
}

// headerNames is a version's headers.json: each fixture's X-Gitea-Event and
// X-Gitea-Event-Type as the server sent them.
type headerNames struct {
	Event     string `json:"x_gitea_event"`
	EventType string `json:"x_gitea_event_type"`
}

// TestWebhookPayloads registers a webhook on a seeded repository pointing at a loopback
// receiver, performs the actions behind each event type, captures what Gitea really sends and
// runs `forgectx distill --forge forgejo` over every payload: a lean excerpt with the spec's
// fields, never the raw payload. -update rewrites test/fixtures/webhooks/gitea (scrubbed).
func TestWebhookPayloads(t *testing.T) {
	types := make([]string, 0, len(actionsEvent))
	for k := range actionsEvent {
		types = append(types, k)
	}
	sort.Strings(types)
	names := make([]string, 0, len(excerptOf))
	for k := range excerptOf {
		names = append(names, k)
	}
	sort.Strings(names)
	rcv := newReceiver(t, names)
	srv := giteaserver.Start(t, giteaserver.Config{})
	owner := srv.CreateUser(t, "owner")
	reviewer := srv.CreateUser(t, "reviewer")
	author := srv.CreateUser(t, "author")
	repo := srv.CreateRepo(t, owner, "widgets")
	srv.AddCollaborator(t, repo, reviewer, "write")
	srv.AddCollaborator(t, repo, author, "write")
	srv.PutFile(t, owner, repo, "main", "lib.txt", oldFile)
	srv.Hook(t, repo, rcv.srv.URL+"/hook", types)

	var label struct {
		ID int64 `json:"id"`
	}
	srv.MustDo(t, owner.Token, "", "POST", "/repos/"+repo.FullName()+"/labels", map[string]any{"name": "bug", "color": "#ee0701"}, &label)
	issue := srv.CreateIssue(t, author, repo, "Widget crashes on start", "Steps: start it.")
	srv.MustDo(t, owner.Token, "", "POST", fmt.Sprintf("/repos/%s/issues/%d/labels", repo.FullName(), issue), map[string]any{"labels": []int64{label.ID}}, nil)
	srv.Comment(t, reviewer, repo, issue, "Please fix the crash in lib.txt.")
	srv.PushBranch(t, author, repo, "feature", map[string]string{"lib.txt": newFile})
	pull := srv.CreatePull(t, author, repo, "feature", "Fix the crash", "Changes line three.")
	srv.MustDo(t, owner.Token, "", "POST", fmt.Sprintf("/repos/%s/issues/%d/labels", repo.FullName(), pull), map[string]any{"labels": []int64{label.ID}}, nil)
	srv.Comment(t, reviewer, repo, pull, "Looks good overall.")
	srv.Review(t, reviewer, repo, pull, "REQUEST_CHANGES", "Keep line three lower case.",
		giteaserver.ReviewComment{Path: "lib.txt", Body: "Why upper case?", NewLine: 3})
	srv.Review(t, reviewer, repo, pull, "COMMENT", "One more note.",
		giteaserver.ReviewComment{Path: "lib.txt", Body: "Line five was removed on purpose?", OldLine: 5})
	srv.Review(t, owner, repo, pull, "APPROVED", "LGTM.")
	// Removing every label at once is label_cleared (the item then has no labels).
	srv.MustDo(t, owner.Token, "", "DELETE", fmt.Sprintf("/repos/%s/issues/%d/labels", repo.FullName(), issue), nil, nil)
	srv.MustDo(t, owner.Token, "", "DELETE", fmt.Sprintf("/repos/%s/issues/%d/labels", repo.FullName(), pull), nil, nil)

	got := rcv.wait(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := filepath.Join(webhookFixtures, srv.Version)
	headers := map[string]headerNames{}
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		d := got[name]
		headers[name+".json"] = headerNames{Event: d.event, EventType: d.eventType}
		t.Run(name, func(t *testing.T) {
			payload := scrub(d.body, host)
			if *update {
				var v any
				if err := json.Unmarshal(payload, &v); err != nil {
					t.Fatal(err)
				}
				pretty, _ := json.MarshalIndent(v, "", "  ")
				if err := os.WriteFile(filepath.Join(dir, name+".json"), append(pretty, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// Distilled under each name a job or a receiver knows the event by: the Actions
			// event name, X-Gitea-Event-Type and X-Gitea-Event.
			for _, ev := range []string{actionsEvent[d.eventType], d.eventType, d.event} {
				checkExcerpt(t, name, ev, payload)
			}
		})
	}
	if *update {
		b, _ := json.MarshalIndent(headers, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, "headers.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scrub makes a captured payload a fixture: the loopback host and port become gitea.example
// (they change with every server; the bare 127.0.0.1 is in the no-reply e-mail addresses and the
// SSH URL). The payloads carry no secret: the hook has none, and the signature travels in a
// header that is not kept.
func scrub(b []byte, host string) []byte {
	b = bytes.ReplaceAll(b, []byte("http://"+host), []byte("https://gitea.example"))
	b = bytes.ReplaceAll(b, []byte(host), []byte("gitea.example"))
	return bytes.ReplaceAll(b, []byte("127.0.0.1"), []byte("gitea.example"))
}

// checkExcerpt distils one payload under the event name ev as a Forgejo Actions job or a
// webhook receiver would (--forge forgejo --event ev) and checks it is a small JSON object with
// the spec's containers and fields for the delivery name, and nothing of the raw payload's bulk.
func checkExcerpt(t *testing.T, name, ev string, payload []byte) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "payload.json")
	if err := os.WriteFile(p, payload, 0o600); err != nil {
		t.Fatal(err)
	}
	r := forgectx(t, nil, "distill", "--forge", "forgejo", "--event", ev, "--payload", p)
	if r.code != 0 {
		t.Fatalf("distill exit %d: %s", r.code, r.stderr)
	}
	out := strings.TrimSuffix(r.stdout, "\n")
	var ex map[string]any
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatalf("excerpt is not JSON: %v", err)
	}
	for container, fields := range excerptOf[name] {
		if container == "labels" {
			if _, ok := ex["labels"].([]any); !ok {
				t.Errorf("%s --event %s: excerpt %s has no labels list (the label is the event)", name, ev, out)
			}
			continue
		}
		c, ok := ex[container].(map[string]any)
		if !ok {
			t.Errorf("%s --event %s: excerpt %s has no %s container", name, ev, out, container)
			continue
		}
		for _, f := range fields {
			if _, ok := c[f]; !ok {
				t.Errorf("%s --event %s: excerpt %s lacks %s.%s", name, ev, out, container, f)
			}
		}
	}
	for _, k := range []string{"repository", "sender", "api/v1", "avatar_url"} {
		if strings.Contains(out, k) {
			t.Errorf("%s --event %s: excerpt carries %q: %s", name, ev, k, out)
		}
	}
	if len(out)*20 > len(payload) {
		t.Errorf("%s --event %s: excerpt is %d of %d payload bytes: not lean", name, ev, len(out), len(payload))
	}
	t.Logf("%s --event %s: %d chars of %d (%.2f%%): %s", name, ev, len(out), len(payload), 100*float64(len(out))/float64(len(payload)), out)
}
