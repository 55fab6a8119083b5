package github

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
)

func writeEvent(t *testing.T, payload string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(p, []byte(payload), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The entity kind follows the event: pull_request* events are change proposals; issues and
// issue_comment events are work items unless the issue is a pull request; an event about
// another number names nothing.
func TestEntityKindFromTheEvent(t *testing.T) {
	cases := []struct {
		name, event, payload string
		number               int
		want                 string
	}{
		{"pull_request", "pull_request", `{"number":5,"pull_request":{"number":5}}`, 5, acquisition.KindChangeProposal},
		{"pull_request_target", "pull_request_target", `{"pull_request":{"number":5}}`, 5, acquisition.KindChangeProposal},
		{"review comment", "pull_request_review_comment", `{"pull_request":{"number":5}}`, 5, acquisition.KindChangeProposal},
		{"issues", "issues", `{"issue":{"number":7}}`, 7, acquisition.KindWorkItem},
		{"issue_comment on an issue", "issue_comment", `{"issue":{"number":7,"pull_request":null}}`, 7, acquisition.KindWorkItem},
		{"issue_comment on a pull request", "issue_comment", `{"issue":{"number":7,"pull_request":{"url":"x"}}}`, 7, acquisition.KindChangeProposal},
		{"another number", "issues", `{"issue":{"number":8}}`, 7, ""},
		{"unrelated event", "push", `{"ref":"refs/heads/main"}`, 7, ""},
		{"not JSON", "issues", `{"issue":`, 7, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := readEvent(writeEvent(t, tc.payload))
			if got := ev.kind(tc.event, tc.number); got != tc.want {
				t.Errorf("kind = %q, want %q", got, tc.want)
			}
		})
	}
}

var receiptIDRule = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_=-]{0,127}$`)

// The receipt id is gha-<run id>-<attempt> under Actions (attempt 1 by default) and a
// documented local fallback elsewhere; both satisfy the receipt id rule, and the link is the
// run's page.
func TestReceiptIDAndRunLink(t *testing.T) {
	start := time.Date(2026, 9, 8, 12, 0, 0, 5, time.UTC)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name     string
		vars     map[string]string
		link, id string
	}{
		{"actions", map[string]string{"GITHUB_RUN_ID": "42", "GITHUB_RUN_ATTEMPT": "3", "GITHUB_SERVER_URL": "https://github.com/", "GITHUB_REPOSITORY": "o/r"},
			"https://github.com/o/r/actions/runs/42", "gha-42-3"},
		{"attempt defaults to 1", map[string]string{"GITHUB_RUN_ID": "42", "GITHUB_SERVER_URL": "https://ghe.example.com", "GITHUB_REPOSITORY": "o/r"},
			"https://ghe.example.com/o/r/actions/runs/42", "gha-42-1"},
		{"no server url: no link", map[string]string{"GITHUB_RUN_ID": "42"}, "", "gha-42-1"},
	}
	for _, tc := range cases {
		link, id := ciIdentity(env(tc.vars), start)
		if link != tc.link || id != tc.id || !receiptIDRule.MatchString(id) {
			t.Errorf("%s: link %q id %q, want %q %q", tc.name, link, id, tc.link, tc.id)
		}
	}
	for _, bad := range []string{"", "x", "0", "1 2", "-1"} {
		_, id := ciIdentity(env(map[string]string{"GITHUB_RUN_ID": bad}), start)
		if !strings.HasPrefix(id, "local-20260908T120000000000005Z-") || !receiptIDRule.MatchString(id) {
			t.Errorf("GITHUB_RUN_ID %q: id %q is not the local fallback", bad, id)
		}
	}
}

func FuzzReadEvent(f *testing.F) {
	for _, s := range []string{`{"number":5,"pull_request":{"number":5}}`, `{"issue":{"number":7,"pull_request":{}}}`, `{"issue":{"number":-1}}`, `[]`, `{"issue":null}`, "\x00"} {
		f.Add([]byte(s), "issue_comment", 7)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, payload []byte, name string, number int) {
		p := filepath.Join(dir, "e.json")
		if err := os.WriteFile(p, payload, 0o600); err != nil {
			t.Skip()
		}
		ev := readEvent(p)
		k := ev.kind(name, number)
		if k != "" && k != acquisition.KindWorkItem && k != acquisition.KindChangeProposal {
			t.Fatalf("kind %q", k)
		}
		if k != "" && ev.number() != number && (ev.Issue == nil || ev.Issue.Number != number) {
			t.Fatalf("kind %q for an event about another number", k)
		}
	})
}
