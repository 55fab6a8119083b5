package forgejo

import (
	"net/url"
	"strings"
	"testing"
)

func envOf(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

// TestActionsEnvironmentDefaults: FORGEJO_* wins over the GITHUB_* compatibility variables, the
// API URL is the server URL + /api/v1, the number comes from the event payload (or a pull ref).
func TestActionsEnvironmentDefaults(t *testing.T) {
	prEvent := []byte(`{"action":"opened","number":12,"pull_request":{"number":12,"head":{"sha":"` + strings.ToUpper(headSHA) + `"}}}`)
	issueCommentOnPR := []byte(`{"action":"created","issue":{"number":12,"pull_request":{"merged":false}},"comment":{"id":1}}`)
	issueEvent := []byte(`{"action":"opened","issue":{"number":7,"pull_request":null}}`)
	for _, tc := range []struct {
		name    string
		env     map[string]string
		event   []byte
		api     string
		repo    string
		number  int
		kind    string
		head    string
		job     string
		token   string
		wantErr string
	}{
		{
			name: "forgejo variables win",
			env: map[string]string{"FORGEJO_SERVER_URL": "https://code.example/", "GITHUB_SERVER_URL": "https://wrong.example",
				"FORGEJO_REPOSITORY": "Acme/Widgets", "GITHUB_REPOSITORY": "wrong/repo", "FORGEJO_RUN_NUMBER": "41", "FORGEJO_TOKEN": "x", "GITHUB_TOKEN": "x"},
			event: prEvent, api: "https://code.example/api/v1", repo: "Acme/Widgets", number: 12, kind: "change_proposal", head: headSHA,
			job: "https://code.example/Acme/Widgets/actions/runs/41", token: "FORGEJO_TOKEN",
		},
		{
			name:  "github compatibility variables alone",
			env:   map[string]string{"GITHUB_SERVER_URL": "https://code.example", "GITHUB_REPOSITORY": "Acme/Widgets", "GITHUB_RUN_NUMBER": "3", "GITHUB_TOKEN": "x"},
			event: issueEvent, api: "https://code.example/api/v1", repo: "Acme/Widgets", number: 7, kind: "work_item",
			job: "https://code.example/Acme/Widgets/actions/runs/3", token: "GITHUB_TOKEN",
		},
		{
			name:  "comment on a pull request",
			env:   map[string]string{"GITHUB_SERVER_URL": "http://localhost:3000", "GITHUB_REPOSITORY": "a/b"},
			event: issueCommentOnPR, api: "http://localhost:3000/api/v1", repo: "a/b", number: 12, kind: "change_proposal",
		},
		{
			name:  "pull ref without payload",
			env:   map[string]string{"GITHUB_SERVER_URL": "https://code.example", "GITHUB_REPOSITORY": "a/b", "GITHUB_REF": "refs/pull/5/head"},
			event: nil, api: "https://code.example/api/v1", repo: "a/b", number: 5, kind: "change_proposal",
		},
		{
			// The variable set a Forgejo runner gives a pull_request job on a sub-path install.
			name: "real runner variables on a sub-path install: GITHUB_API_URL is used",
			env: map[string]string{"GITHUB_SERVER_URL": "https://example.com/forgejo", "GITHUB_API_URL": "https://example.com/forgejo/api/v1",
				"GITHUB_REPOSITORY": "Acme/Widgets", "GITHUB_REPOSITORY_OWNER": "Acme", "GITHUB_EVENT_NAME": "pull_request",
				"GITHUB_REF": "refs/pull/12/head", "GITHUB_REF_NAME": "12/head", "GITHUB_SHA": headSHA, "GITHUB_RUN_ID": "118",
				"GITHUB_RUN_NUMBER": "9", "GITHUB_ACTIONS": "true", "GITHUB_ACTOR": "alice", "GITHUB_TOKEN": "x",
				"FORGEJO_TOKEN": "", "GITEA_ACTIONS": "true", "FORGEJO_ACTIONS": "true"},
			event: prEvent, api: "https://example.com/forgejo/api/v1", repo: "Acme/Widgets", number: 12, kind: "change_proposal", head: headSHA,
			job: "https://example.com/forgejo/Acme/Widgets/actions/runs/9", token: "GITHUB_TOKEN",
		},
		{
			name: "FORGEJO_API_URL wins over GITHUB_API_URL, non-default port",
			env: map[string]string{"FORGEJO_SERVER_URL": "https://code.example:3443", "FORGEJO_API_URL": "https://code.example:3443/api/v1/",
				"GITHUB_API_URL": "https://wrong.example/api/v1", "FORGEJO_REPOSITORY": "a/b"},
			event: issueEvent, api: "https://code.example:3443/api/v1", repo: "a/b", number: 7, kind: "work_item",
		},
		{name: "bad api url", env: map[string]string{"GITHUB_SERVER_URL": "https://x.example", "GITHUB_API_URL": "https://x.example/api/v3", "GITHUB_REPOSITORY": "a/b"}, event: issueEvent, wantErr: "GITHUB_API_URL"},
		{name: "no server", env: map[string]string{"GITHUB_REPOSITORY": "a/b"}, event: issueEvent, wantErr: "SERVER_URL"},
		{name: "bad server", env: map[string]string{"GITHUB_SERVER_URL": "code.example", "GITHUB_REPOSITORY": "a/b"}, event: issueEvent, wantErr: "http(s)"},
		{name: "bad repo", env: map[string]string{"GITHUB_SERVER_URL": "https://x.example", "GITHUB_REPOSITORY": "ab"}, event: issueEvent, wantErr: "REPOSITORY"},
		{name: "no number", env: map[string]string{"GITHUB_SERVER_URL": "https://x.example", "GITHUB_REPOSITORY": "a/b", "GITHUB_REF": "refs/heads/main"}, event: []byte(`{"ref":"refs/heads/main"}`), wantErr: "no issue or pull request number"},
		{name: "bad payload", env: map[string]string{"GITHUB_SERVER_URL": "https://x.example", "GITHUB_REPOSITORY": "a/b"}, event: []byte(`[1,2`), wantErr: "event payload"},
		{name: "bad run number", env: map[string]string{"GITHUB_SERVER_URL": "https://x.example", "GITHUB_REPOSITORY": "a/b", "GITHUB_RUN_NUMBER": "x"}, event: issueEvent, wantErr: "RUN_NUMBER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ActionsEnvironmentDefaults(envOf(tc.env), tc.event)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Ref.Forge != "forgejo" || d.Ref.APIURL != tc.api || d.Ref.Repo != tc.repo || d.Ref.Number != tc.number ||
				d.EntityKind != tc.kind || d.HeadSHA != tc.head || d.JobURL != tc.job || d.TokenEnv != tc.token {
				t.Errorf("defaults = %+v", d)
			}
			c, err := New(Options{APIURL: d.Ref.APIURL})
			if err != nil {
				t.Fatalf("derived API URL is not accepted by New: %v", err)
			}
			u, _ := url.Parse(d.Ref.APIURL)
			if c.Host() != strings.ToLower(u.Host) {
				t.Errorf("source.host %q for %s", c.Host(), d.Ref.APIURL)
			}
		})
	}
}

func TestPullFromRef(t *testing.T) {
	for ref, want := range map[string]int{
		"refs/pull/12/head": 12, "refs/pull/12/merge": 12, "refs/pull/012/head": 0, "refs/pull/-1/head": 0,
		"refs/heads/main": 0, "refs/pull/": 0, "": 0,
	} {
		if got := pullFromRef(ref); got != want {
			t.Errorf("pullFromRef(%q) = %d, want %d", ref, got, want)
		}
	}
}

// FuzzActionsEvent: the event payload is untrusted; the parser never panics and only ever
// yields a positive number with a known kind.
func FuzzActionsEvent(f *testing.F) {
	f.Add([]byte(`{"pull_request":{"number":12,"head":{"sha":"` + headSHA + `"}}}`))
	f.Add([]byte(`{"issue":{"number":7,"pull_request":{}}}`))
	f.Add([]byte(`{"issue":{"number":-7}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"pull_request":null,"issue":{"number":1e30}}`))
	f.Fuzz(func(t *testing.T, event []byte) {
		n, kind, head, err := eventEntity(event)
		if err != nil {
			return
		}
		if n < 0 || (n > 0 && kind != "work_item" && kind != "change_proposal") || (n == 0 && kind != "") {
			t.Fatalf("eventEntity = %d %q", n, kind)
		}
		if head != "" && !isGitOID(head) {
			t.Fatalf("head %q is not a Git object ID", head)
		}
	})
}
