package distill

import (
	"reflect"
	"testing"
)

// The payloads a real Gitea 1.25.5 sent (test/fixtures/webhooks/gitea, recorded by
// test/realforge TestWebhookPayloads) distil, as a Forgejo/Gitea Actions job names their events,
// to exactly the spec's containers and fields, each well under the payload's size.
func TestRecordedGiteaWebhooks(t *testing.T) {
	for _, tc := range []struct {
		file, event, action string
		container           string
		fields              []string
	}{
		{"issues.json", "issues", "opened", "issue", []string{"number", "title", "state", "html_url"}},
		{"issue_label.json", "issues", "label_updated", "issue", []string{"number", "title", "state", "html_url"}},
		{"issue_comment.json", "issue_comment", "", "comment", []string{"body", "html_url", "author"}},
		{"pull_request_comment.json", "issue_comment", "", "comment", []string{"body", "html_url", "author"}},
		{"pull_request.json", "pull_request", "opened", "pull_request", []string{"number", "title", "state", "html_url", "merged", "draft"}},
		{"pull_request_label.json", "pull_request", "label_updated", "pull_request", []string{"number", "title", "state", "html_url", "merged", "draft"}},
		{"pull_request_review_approved.json", "pull_request_review", "reviewed", "review", []string{"state", "body", "html_url", "author"}},
		{"pull_request_review_rejected.json", "pull_request_review", "reviewed", "review", []string{"state", "body", "html_url", "author"}},
		{"pull_request_review_comment.json", "pull_request_review_comment", "reviewed", "review", []string{"state", "body", "html_url", "author"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			payload := readFixture(t, "gitea/"+tc.file)
			out, rep := Excerpt(Forgejo, tc.event, payload, Options{})
			m := decode(t, out)
			// The rule's container names the event; a created comment carries no action.
			action, _ := m["action"].(string)
			if _, has := m["event"]; has || rep.Event != tc.event || action != tc.action || rep.Warning != "" {
				t.Errorf("event key %v (report %q) action %q warning %q, want report %s, action %q", m["event"], rep.Event, action, rep.Warning, tc.event, tc.action)
			}
			var keys []string
			for k := range m {
				if k != "event" && k != "action" {
					keys = append(keys, k)
				}
			}
			if !reflect.DeepEqual(keys, []string{tc.container}) {
				t.Fatalf("containers %v, want [%s]: %s", keys, tc.container, out)
			}
			c, _ := m[tc.container].(map[string]any)
			var got []string
			for _, f := range tc.fields {
				if _, ok := c[f]; ok {
					got = append(got, f)
				}
			}
			if len(got) != len(c) || len(got) != len(tc.fields) {
				t.Errorf("%s fields %v, want exactly %v: %s", tc.container, c, tc.fields, out)
			}
			if 100*len(out) > 4*len(payload) {
				t.Errorf("excerpt %d bytes of a %d-byte payload (over 4%%)", len(out), len(payload))
			}
		})
	}
}
