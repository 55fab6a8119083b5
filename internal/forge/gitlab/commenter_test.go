package gitlab

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge"
	"github.com/forgectx/forgectx/internal/snapshot/acquisition"
	"github.com/forgectx/forgectx/test/httpfake"
)

const marker = "<!-- forgectx:status -->"

func notesPage(notes ...string) string { return "[" + strings.Join(notes, ",") + "]" }

func noteJSON(id, author int, body string, system bool) string {
	sys := "false"
	if system {
		sys = "true"
	}
	return `{"id":` + itoa(id) + `,"type":null,"body":"` + body + `","attachment":null,"author":{"id":` + itoa(author) +
		`,"username":"u` + itoa(author) + `","name":"U","state":"active"},"created_at":"2026-11-20T10:00:00.000Z","updated_at":"2026-11-20T10:00:00.000Z","system":` + sys +
		`,"noteable_id":9007,"noteable_type":"MergeRequest","project_id":42,"resolvable":false,"confidential":false,"internal":false,"noteable_iid":7,"commands_changes":{}}`
}

func TestGitLabCommenterFindsOwnMarkedNotesAcrossPages(t *testing.T) {
	for _, tc := range []struct {
		kind, path string
	}{
		{acquisition.KindChangeProposal, "/api/v4/projects/42/merge_requests/7/notes"},
		{acquisition.KindWorkItem, "/api/v4/projects/42/issues/7/notes"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			f := httpfake.New(t)
			f.Expect("GET", "/api/v4/user", httpfake.JSON(200, fixture(t, "common/user_104.json")))
			p1 := httpfake.JSON(200, notesPage(
				noteJSON(1, 101, "human quoting "+marker, false), // not ours
				noteJSON(2, 104, marker+" status: running", false),
				noteJSON(3, 104, "unrelated bot note", false), // no marker
			))
			p1.Header.Set("X-Next-Page", "2")
			f.Expect("GET", tc.path+"?order_by=created_at&per_page=100&sort=asc", p1)
			f.Expect("GET", tc.path+"?order_by=created_at&page=2&per_page=100&sort=asc", httpfake.JSON(200, notesPage(
				noteJSON(4, 104, marker+" receipt", true), // system note: never a candidate
				noteJSON(5, 104, marker+" receipt 2", false),
			)))
			m, err := newCommenter(testClient(t, f), tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.FindComments(context.Background(), forge.Ref{Repo: "42", Number: 7}, marker)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].ID != "2" || got[1].ID != "5" || got[0].AuthorID != "104" || !strings.Contains(got[1].Body, "receipt 2") {
				t.Errorf("found %+v", got)
			}
		})
	}
}

// bodyJSON is the request body client-go sends (encoding/json escapes < and >).
func bodyJSON(body string) []byte {
	b, _ := json.Marshal(map[string]string{"body": body})
	return b
}

func TestGitLabCommenterCreateAndUpdate(t *testing.T) {
	body := marker + " status: done"
	t.Run("create posts the body and returns the note id", func(t *testing.T) {
		f := httpfake.New(t)
		f.ExpectBody("POST", "/api/v4/projects/42/merge_requests/7/notes", bodyJSON(body), httpfake.JSON(201, noteJSON(9, 104, body, false)))
		m, _ := newCommenter(testClient(t, f), acquisition.KindChangeProposal)
		c, err := m.CreateComment(context.Background(), forge.Ref{Repo: "42", Number: 7}, body)
		if err != nil || c.ID != "9" || c.AuthorID != "104" {
			t.Fatalf("%+v %v", c, err)
		}
	})
	t.Run("create is not retried after a 5xx (the note may exist)", func(t *testing.T) {
		f := httpfake.New(t)
		f.ExpectBody("POST", "/api/v4/projects/42/issues/7/notes", bodyJSON(body), httpfake.ServerError())
		m, _ := newCommenter(testClient(t, f), acquisition.KindWorkItem)
		if _, err := m.CreateComment(context.Background(), forge.Ref{Repo: "42", Number: 7}, body); err == nil || !strings.Contains(err.Error(), "HTTP 500") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("create is retried after a 429", func(t *testing.T) {
		f := httpfake.New(t)
		rl := httpfake.JSON(http.StatusTooManyRequests, `{"message":"429"}`)
		f.ExpectBody("POST", "/api/v4/projects/42/merge_requests/7/notes", bodyJSON(body), rl, httpfake.JSON(201, noteJSON(9, 104, body, false)))
		m, _ := newCommenter(testClient(t, f), acquisition.KindChangeProposal)
		if _, err := m.CreateComment(context.Background(), forge.Ref{Repo: "42", Number: 7}, body); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("update puts the body", func(t *testing.T) {
		f := httpfake.New(t)
		f.ExpectBody("PUT", "/api/v4/projects/42/merge_requests/7/notes/9", bodyJSON(body), httpfake.ServerError(), httpfake.JSON(200, noteJSON(9, 104, body, false)))
		m, _ := newCommenter(testClient(t, f), acquisition.KindChangeProposal)
		if err := m.UpdateComment(context.Background(), forge.Ref{Repo: "42", Number: 7}, "9", body); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("bad inputs fail before any request", func(t *testing.T) {
		f := httpfake.New(t)
		m, _ := newCommenter(testClient(t, f), acquisition.KindChangeProposal)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := m.UpdateComment(ctx, forge.Ref{Repo: "42", Number: 7}, "09", body); err == nil {
			t.Error("leading zero id accepted")
		}
		if _, err := m.FindComments(ctx, forge.Ref{Repo: "42", Number: 7}, ""); err == nil {
			t.Error("empty marker accepted")
		}
		if _, err := m.CreateComment(ctx, forge.Ref{Repo: "42", Number: 0}, body); err == nil {
			t.Error("iid 0 accepted")
		}
		if _, err := newCommenter(testClient(t, f), "epic"); err == nil {
			t.Error("kind epic accepted")
		}
	})
}

func TestGitLabCIDefaults(t *testing.T) {
	base := map[string]string{
		"GITLAB_CI":       "true",
		"CI_SERVER_URL":   "https://gitlab.example.com:8443",
		"CI_API_V4_URL":   "https://gitlab.example.com:8443/api/v4",
		"CI_PROJECT_ID":   "42",
		"CI_PROJECT_PATH": "Acme/Platform/widgets",
		"CI_JOB_URL":      "https://gitlab.example.com:8443/Acme/Platform/widgets/-/jobs/9001",
		"CI_COMMIT_SHA":   headSHA,
		"CI_JOB_TOKEN":    "glcbt-xyz",
	}
	with := func(kv ...string) func(string) string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	other := strings.Repeat("c", 40)
	for _, tc := range []struct {
		name string
		env  func(string) string
		want CIEnv
		err  string
	}{
		{"merge-request pipeline", with("CI_MERGE_REQUEST_IID", "7", "CI_MERGE_REQUEST_PROJECT_ID", "42"), CIEnv{
			Ref:  forge.Ref{Forge: "gitlab", APIURL: "https://gitlab.example.com:8443/api/v4", Repo: "42", Number: 7},
			Kind: "change_proposal", ServerURL: "https://gitlab.example.com:8443", JobURL: base["CI_JOB_URL"], CommitSHA: headSHA, TokenEnv: "CI_JOB_TOKEN"}, ""},
		{"fork pipeline addresses the target project", with("CI_MERGE_REQUEST_IID", "7", "CI_MERGE_REQUEST_PROJECT_ID", "40"), CIEnv{
			Ref:  forge.Ref{Forge: "gitlab", APIURL: "https://gitlab.example.com:8443/api/v4", Repo: "40", Number: 7},
			Kind: "change_proposal", ServerURL: "https://gitlab.example.com:8443", JobURL: base["CI_JOB_URL"], CommitSHA: headSHA, TokenEnv: "CI_JOB_TOKEN"}, ""},
		{"merged-results pipeline: the checked-out merge commit is CI_COMMIT_SHA, the MR head is kept apart", with("CI_MERGE_REQUEST_IID", "7", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", other, "GITLAB_TOKEN", "glpat-x"), CIEnv{
			Ref:  forge.Ref{Forge: "gitlab", APIURL: "https://gitlab.example.com:8443/api/v4", Repo: "42", Number: 7},
			Kind: "change_proposal", ServerURL: "https://gitlab.example.com:8443", JobURL: base["CI_JOB_URL"], CommitSHA: headSHA, MergeRequestHeadSHA: other, TokenEnv: "GITLAB_TOKEN"}, ""},
		{"detached MR pipeline: CI_MERGE_REQUEST_SOURCE_BRANCH_SHA is set but empty", with("CI_MERGE_REQUEST_IID", "7", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", "", "CI_MERGE_REQUEST_EVENT_TYPE", "detached", "CI_PIPELINE_SOURCE", "merge_request_event"), CIEnv{
			Ref:  forge.Ref{Forge: "gitlab", APIURL: "https://gitlab.example.com:8443/api/v4", Repo: "42", Number: 7},
			Kind: "change_proposal", ServerURL: "https://gitlab.example.com:8443", JobURL: base["CI_JOB_URL"], CommitSHA: headSHA, TokenEnv: "CI_JOB_TOKEN"}, ""},
		{"sub-path install: CI_SERVER_URL carries the relative root", with("CI_API_V4_URL", "", "CI_SERVER_URL", "https://example.com/gitlab"), CIEnv{
			Ref:       forge.Ref{Forge: "gitlab", APIURL: "https://example.com/gitlab/api/v4", Repo: "42"},
			ServerURL: "https://example.com/gitlab", JobURL: base["CI_JOB_URL"], CommitSHA: headSHA, TokenEnv: "CI_JOB_TOKEN"}, ""},
		{"bad merge-request head", with("CI_MERGE_REQUEST_IID", "7", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", "HEAD"), CIEnv{}, "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"},
		{"branch pipeline has no entity", with("CI_API_V4_URL", ""), CIEnv{
			Ref:       forge.Ref{Forge: "gitlab", APIURL: "https://gitlab.example.com:8443/api/v4", Repo: "42"},
			ServerURL: "https://gitlab.example.com:8443", JobURL: base["CI_JOB_URL"], CommitSHA: headSHA, TokenEnv: "CI_JOB_TOKEN"}, ""},
		{"path when no id", with("CI_PROJECT_ID", ""), CIEnv{
			Ref:       forge.Ref{Forge: "gitlab", APIURL: "https://gitlab.example.com:8443/api/v4", Repo: "Acme/Platform/widgets"},
			ServerURL: "https://gitlab.example.com:8443", JobURL: base["CI_JOB_URL"], CommitSHA: headSHA, TokenEnv: "CI_JOB_TOKEN"}, ""},
		{"not GitLab CI", with("GITLAB_CI", ""), CIEnv{}, "GITLAB_CI"},
		{"no server", with("CI_API_V4_URL", "", "CI_SERVER_URL", ""), CIEnv{}, "CI_SERVER_URL"},
		{"bad iid", with("CI_MERGE_REQUEST_IID", "07"), CIEnv{}, "CI_MERGE_REQUEST_IID"},
		{"bad project id", with("CI_PROJECT_ID", "4x2"), CIEnv{}, "CI_PROJECT_ID"},
		{"bad project path", with("CI_PROJECT_ID", "", "CI_PROJECT_PATH", "acme/../x"), CIEnv{}, "CI_PROJECT_PATH"},
		{"no project", with("CI_PROJECT_ID", "", "CI_PROJECT_PATH", ""), CIEnv{}, "CI_PROJECT_PATH"},
		{"bad sha", with("CI_COMMIT_SHA", "HEAD"), CIEnv{}, "CI_COMMIT_SHA"},
		{"bad api url", with("CI_API_V4_URL", "gitlab.example.com"), CIEnv{}, "api url"},
	} {
		got, err := CIDefaults(tc.env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want mention of %s", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s:\n got %+v %v\nwant %+v", tc.name, got, err, tc.want)
		}
	}
}

// FuzzCIDefaults: arbitrary variable values never panic, and accepted values are well formed.
func FuzzCIDefaults(f *testing.F) {
	f.Add("https://gitlab.example.com", "42", "7", headSHA)
	f.Add("http://[::1", "-1", "0x7", "")
	f.Fuzz(func(t *testing.T, server, project, iid, sha string) {
		env := map[string]string{"GITLAB_CI": "true", "CI_SERVER_URL": server, "CI_PROJECT_ID": project, "CI_MERGE_REQUEST_IID": iid, "CI_COMMIT_SHA": sha}
		e, err := CIDefaults(func(k string) string { return env[k] })
		if err != nil {
			return
		}
		if e.Ref.Repo == "" || (iid != "" && e.Ref.Number < 1) || (e.CommitSHA != "" && !validSHA(e.CommitSHA)) {
			t.Fatalf("accepted malformed defaults %+v", e)
		}
	})
}

// TestGitLabCIDefaultsFromTriggerPayload: a pipeline triggered by a webhook (GitLab's
// TRIGGER_PAYLOAD file variable) names the issue or merge request of an issue, merge request or
// note event, in the project the event came from; other events name none; a payload that is
// not a webhook, or names an entity without an iid, names no entity and is reported in
// TriggerError (naming TRIGGER_PAYLOAD) without failing the other defaults.
func TestGitLabCIDefaultsFromTriggerPayload(t *testing.T) {
	dir := t.TempDir()
	env := func(payload string) func(string) string {
		m := map[string]string{
			"GITLAB_CI": "true", "CI_API_V4_URL": "https://gitlab.example.com/api/v4", "CI_PROJECT_ID": "99",
			"CI_PIPELINE_SOURCE": "trigger", "CI_COMMIT_SHA": headSHA, "TRIGGER_PAYLOAD": payload,
		}
		return func(k string) string { return m[k] }
	}
	read := func(path string) ([]byte, error) {
		b, err := os.ReadFile(path)
		return b, err
	}
	for _, tc := range []struct {
		file, event, kind, repo string
		number                  int
		err                     string
	}{
		{"issue.json", "issue", "work_item", "14", 23, ""},
		{"merge_request.json", "merge_request", "change_proposal", "14", 1, ""},
		{"note_merge_request.json", "note", "change_proposal", "5", 1, ""},
		{"note_issue.json", "note", "work_item", "5", 17, ""},
		{"push.json", "", "", "99", 0, ""},
	} {
		path := filepath.Join(fixtureDir(t), "webhooks", tc.file)
		got, err := ciDefaultsWith(env(path), read)
		if err != nil || got.Trigger != tc.event || got.Kind != tc.kind || got.Ref.Repo != tc.repo || got.Ref.Number != tc.number || got.CommitSHA != headSHA {
			t.Errorf("%s: %+v %v", tc.file, got, err)
		}
	}
	// The production reader reads the file variable too.
	if got, err := CIDefaults(env(filepath.Join(fixtureDir(t), "webhooks", "issue.json"))); err != nil || got.Ref.Number != 23 {
		t.Errorf("CIDefaults with a payload file: %+v %v", got, err)
	}
	// An MR pipeline's own variables win over a payload.
	mr := func(k string) string {
		if k == "CI_MERGE_REQUEST_IID" {
			return "7"
		}
		return env(filepath.Join(fixtureDir(t), "webhooks", "issue.json"))(k)
	}
	if got, err := ciDefaultsWith(mr, read); err != nil || got.Ref.Number != 7 || got.Ref.Repo != "99" || got.Trigger != "" {
		t.Errorf("MR variables and a payload: %+v %v", got, err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for name, payload := range map[string]string{
		"not json":              write("a", "object_kind=issue"),
		"iid missing":           write("b", `{"object_kind":"issue","project":{"id":1},"object_attributes":{"id":3}}`),
		"iid a string":          write("c", `{"object_kind":"merge_request","project":{"id":1},"object_attributes":{"iid":"1"}}`),
		"iid negative":          write("d", `{"object_kind":"merge_request","project":{"id":1},"object_attributes":{"iid":-1,"target_project_id":1}}`),
		"no project":            write("e", `{"object_kind":"issue","object_attributes":{"iid":3}}`),
		"attributes missing":    write("f", `{"object_kind":"merge_request","project":{"id":1}}`),
		"missing file":          filepath.Join(dir, "nope"),
		"a directory":           dir,
		"deeply nested":         write("g", strings.Repeat("[", 100000)),
		"inline but broken":     `{"object_kind":`,
		"iid beyond int32":      write("h", `{"object_kind":"issue","project":{"id":1},"object_attributes":{"iid":4294967296}}`),
		"huge number":           write("i", `{"object_kind":"issue","project":{"id":1},"object_attributes":{"iid":1e400}}`),
		"note on an issue, bad": write("j", `{"object_kind":"note","project":{"id":1},"object_attributes":{"noteable_type":"Issue"},"issue":{"iid":0}}`),
	} {
		got, err := CIDefaults(env(payload))
		if err != nil || got.Kind != "" || got.Ref.Number != 0 || got.Ref.Repo != "99" || got.TriggerError == nil || !strings.Contains(got.TriggerError.Error(), "TRIGGER_PAYLOAD") {
			t.Errorf("%s: %+v %v, want no entity and a TRIGGER_PAYLOAD TriggerError", name, got, err)
		}
	}
	// Inline JSON (a non-file variable) is accepted.
	if got, err := CIDefaults(env(`{"object_kind":"issue","project":{"id":3},"object_attributes":{"iid":4}}`)); err != nil || got.Ref.Number != 4 || got.Ref.Repo != "3" {
		t.Errorf("inline payload: %+v %v", got, err)
	}
}

// FuzzTriggerPayload: an arbitrary webhook payload never panics, and a named entity always
// has a positive iid and project.
func FuzzTriggerPayload(f *testing.F) {
	for _, name := range []string{"issue.json", "merge_request.json", "note_merge_request.json", "note_issue.json", "push.json"} {
		f.Add(fixture(f, filepath.Join("webhooks", name)))
	}
	f.Add([]byte(`{"object_kind":"note","object_attributes":{"noteable_type":"MergeRequest"},"merge_request":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := triggerEntity(raw)
		if err != nil || ev.kind == "" {
			return
		}
		if ev.iid < 1 || ev.project < 1 {
			t.Fatalf("accepted %+v", ev)
		}
	})
}

// TestGitLabCIDefaultsFromARealMergedResultsJob: the predefined variables GitLab sets for a
// merged-results merge-request pipeline on a self-managed instance on port 8443 under a
// sub-path, verbatim in shape; the derived API URL gives the right source.host.
func TestGitLabCIDefaultsFromARealMergedResultsJob(t *testing.T) {
	mergeCommit := strings.Repeat("d", 40)
	vars := map[string]string{
		"CI": "true", "GITLAB_CI": "true", "CI_SERVER": "yes",
		"CI_SERVER_URL": "https://gitlab.example.com:8443/gitlab", "CI_SERVER_HOST": "gitlab.example.com", "CI_SERVER_PORT": "8443",
		"CI_SERVER_PROTOCOL": "https", "CI_SERVER_FQDN": "gitlab.example.com:8443",
		"CI_API_V4_URL": "https://gitlab.example.com:8443/gitlab/api/v4", "CI_API_GRAPHQL_URL": "https://gitlab.example.com:8443/gitlab/api/graphql",
		"CI_PROJECT_ID": "42", "CI_PROJECT_PATH": "acme/platform/widgets", "CI_PROJECT_NAMESPACE": "acme/platform",
		"CI_PIPELINE_ID": "1001", "CI_PIPELINE_IID": "77", "CI_PIPELINE_SOURCE": "merge_request_event",
		"CI_JOB_ID": "9001", "CI_JOB_NAME": "forgectx", "CI_JOB_URL": "https://gitlab.example.com:8443/gitlab/acme/platform/widgets/-/jobs/9001",
		"CI_JOB_TOKEN": "glcbt-64_AbCdEf0123456789", "CI_COMMIT_SHA": mergeCommit, "CI_COMMIT_REF_NAME": "refs/merge-requests/7/merge",
		"CI_MERGE_REQUEST_ID": "9007", "CI_MERGE_REQUEST_IID": "7", "CI_MERGE_REQUEST_PROJECT_ID": "42",
		"CI_MERGE_REQUEST_PROJECT_PATH": "acme/platform/widgets", "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "42",
		"CI_MERGE_REQUEST_EVENT_TYPE": "merged_result", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": headSHA,
		"CI_MERGE_REQUEST_TARGET_BRANCH_SHA": strings.Repeat("e", 40), "CI_MERGE_REQUEST_DIFF_BASE_SHA": strings.Repeat("f", 40),
		"CI_MERGE_REQUEST_TITLE": "Add widget caching", "CI_MERGE_REQUEST_LABELS": "backend,performance",
		"GITLAB_USER_ID": "101", "GITLAB_USER_LOGIN": "alice",
	}
	e, err := CIDefaults(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := CIEnv{
		Ref:  forge.Ref{Forge: "gitlab", APIURL: "https://gitlab.example.com:8443/gitlab/api/v4", Repo: "42", Number: 7},
		Kind: "change_proposal", ServerURL: "https://gitlab.example.com:8443/gitlab", JobURL: vars["CI_JOB_URL"],
		CommitSHA: mergeCommit, MergeRequestHeadSHA: headSHA, TokenEnv: "CI_JOB_TOKEN",
	}
	if e != want {
		t.Errorf("got  %+v\nwant %+v", e, want)
	}
	c, err := New(Options{APIURL: e.Ref.APIURL, Token: vars[e.TokenEnv], TokenKind: kindForToken(e.TokenEnv, vars[e.TokenEnv])})
	if err != nil || c.Host() != "gitlab.example.com:8443" || c.base.Path != "/gitlab/api/v4/" || c.opts.TokenKind != tokenJob {
		t.Errorf("client from the CI defaults: %v %+v", err, c)
	}
}
