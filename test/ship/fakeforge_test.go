package ship

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forgectx/forgectx/internal/forge/cassette"
	"github.com/forgectx/forgectx/test/ghscenario"
)

// fakeForge is a loopback forge API for a `forgectx run` started as a subprocess. Reads are
// answered from a recorded-shape cassette (GitHub: the ghscenario issue; GitLab: the recorded
// merge request under test/fixtures/gitlab); the only writes it accepts are creating a comment
// (note) on the entity and editing one, which it records. Any other request fails the test, and
// so does a cassette read never made. Bodies of the writes carry wall-clock times (the
// subprocess's clock is not pinned), so the fake records them for assertions rather than
// matching them byte for byte (test/e2e does that in-process).
type fakeForge struct {
	t   testing.TB
	srv *httptest.Server
	sc  *ghscenario.Scenario

	create, edit *regexp.Regexp // the write routes
	editMethod   string
	reply        func(f *fakeForge, w http.ResponseWriter, status int, id int64, body string)
	origin       string         // scheme://host the cassette was recorded against
	author       map[string]any // the comment writes' author, when the reply needs one

	mu     sync.Mutex
	reads  map[string]cassette.Interaction
	served map[string]int
	writes []fakeWrite
	nextID int64
}

type fakeWrite struct {
	Method, Path, Body string
}

var (
	createComment = regexp.MustCompile(`^/repos/octo-org/Hello-World/issues/[0-9]+/comments$`)
	editComment   = regexp.MustCompile(`^/repos/octo-org/Hello-World/issues/comments/([0-9]+)$`)
)

// newFakeForge is the GitHub fake: octo-org/Hello-World#7.
func newFakeForge(t testing.TB) *fakeForge {
	t.Helper()
	sc := ghscenario.Issue()
	c, err := ghscenario.Build(sc)
	must(t, err)
	f := &fakeForge{t: t, sc: sc, create: createComment, edit: editComment, editMethod: http.MethodPatch, reply: githubComment}
	f.start(c)
	return f
}

// newGitLabFake is the GitLab fake: merge request !7 of Acme/Platform/widgets as recorded in
// test/fixtures/gitlab/cassettes/mr, the token's user (GET /api/v4/user) and an empty notes
// list for the status-comment lookup.
func newGitLabFake(t testing.TB) *fakeForge {
	t.Helper()
	c, err := cassette.Load(filepath.Join(root, "test", "fixtures", "gitlab", "cassettes", "mr"))
	must(t, err)
	notes := "/api/v4/projects/Acme%2FPlatform%2Fwidgets/merge_requests/7/notes"
	for _, extra := range []struct{ url, body string }{
		{"https://gitlab.example.com/api/v4/user", string(gitlabSelf())},
		{"https://gitlab.example.com" + notes + "?order_by=created_at&per_page=100&sort=asc", "[]"},
	} {
		c.Interactions = append(c.Interactions, cassette.Interaction{
			Request:  cassette.Request{Method: "GET", URL: extra.url},
			Response: &cassette.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: cassette.NewBody([]byte(extra.body))},
		})
	}
	f := &fakeForge{t: t, create: regexp.MustCompile("^" + regexp.QuoteMeta(notes) + "$"),
		edit: regexp.MustCompile("^" + regexp.QuoteMeta(notes) + "/([0-9]+)$"), editMethod: http.MethodPut, reply: gitlabNote}
	f.start(c)
	return f
}

// newForgejoFake is the Forgejo fake: Acme/Widgets#7 as recorded in
// test/fixtures/forgejo/issue (its comment list also answers the status-comment lookup).
func newForgejoFake(t testing.TB) *fakeForge {
	t.Helper()
	c, err := cassette.Load(filepath.Join(root, "test", "fixtures", "forgejo", "issue"))
	must(t, err)
	f := &fakeForge{t: t, create: regexp.MustCompile(`^/api/v1/repos/Acme/Widgets/issues/7/comments$`),
		edit: regexp.MustCompile(`^/api/v1/repos/Acme/Widgets/issues/comments/([0-9]+)$`), editMethod: http.MethodPatch, reply: forgejoComment}
	f.start(c)
	return f
}

// newForgejoFakeAsAdmin is the Forgejo fake for a repository admin's token (what the Forgejo
// example uses): GET /user answers the bot account, which authors the comment writes.
func newForgejoFakeAsAdmin(t testing.TB) *fakeForge {
	t.Helper()
	c, err := cassette.Load(filepath.Join(root, "test", "fixtures", "forgejo", "issue"))
	must(t, err)
	self := map[string]any{"id": 4242, "login": "forgectx-bot", "full_name": "", "email": "", "is_admin": false}
	b, _ := json.Marshal(self)
	c.Interactions = append(c.Interactions, cassette.Interaction{
		Request:  cassette.Request{Method: "GET", URL: "https://forgejo.example/api/v1/user"},
		Response: &cassette.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: cassette.NewBody(b)},
	})
	f := &fakeForge{t: t, create: regexp.MustCompile(`^/api/v1/repos/Acme/Widgets/issues/7/comments$`),
		edit: regexp.MustCompile(`^/api/v1/repos/Acme/Widgets/issues/comments/([0-9]+)$`), editMethod: http.MethodPatch, reply: forgejoComment, author: self}
	f.start(c)
	return f
}

// forgejoComment answers a comment write in Forgejo's shape, authored by f.author, else the
// automatic Actions token's pseudo-user (-2).
func forgejoComment(f *fakeForge, w http.ResponseWriter, status int, id int64, body string) {
	now := time.Now().UTC().Format(time.RFC3339)
	author := f.author
	if author == nil {
		author = map[string]any{"id": -2, "login": "forgejo-actions", "full_name": "", "email": ""}
	}
	b, _ := json.Marshal(map[string]any{"id": id, "body": body, "html_url": fmt.Sprintf("%s/Acme/Widgets/issues/7#issuecomment-%d", f.srv.URL, id),
		"created_at": now, "updated_at": now, "assets": []any{},
		"user": author})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func gitlabSelf() []byte {
	b, _ := json.Marshal(map[string]any{"id": 150, "username": "forgectx-bot", "name": "forgectx", "state": "active", "bot": true,
		"avatar_url": "https://gitlab.example.com/uploads/-/system/user/avatar/150/avatar.png", "web_url": "https://gitlab.example.com/forgectx-bot"})
	return b
}

// gitlabNote answers a note write in GitLab's note shape, authored by the token's bot user.
func gitlabNote(f *fakeForge, w http.ResponseWriter, status int, id int64, body string) {
	var self map[string]any
	json.Unmarshal(gitlabSelf(), &self)
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	b, _ := json.Marshal(map[string]any{"id": id, "type": nil, "body": body, "attachment": nil, "author": self,
		"created_at": now, "updated_at": now, "system": false, "noteable_id": 1007, "noteable_type": "MergeRequest",
		"project_id": 42, "resolvable": false, "confidential": false, "internal": false, "noteable_iid": 7, "commands_changes": map[string]any{}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func (f *fakeForge) start(c *cassette.Cassette) {
	t := f.t
	f.reads, f.served, f.nextID = map[string]cassette.Interaction{}, map[string]int{}, 9001
	for _, in := range c.Interactions {
		body, err := in.Request.Body.Bytes()
		must(t, err)
		k, err := cassette.Key(in.Request.Method, in.Request.URL, body)
		must(t, err)
		if _, dup := f.reads[k]; !dup { // a repeated read replays the first answer
			f.reads[k] = in
		}
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	// Pagination links point at the recorded origin; they are rewritten to the fake.
	f.origin = ghscenario.APIURL
	if u, err := url.Parse(c.Meta.APIURL); err == nil && u.Host != "" {
		f.origin = u.Scheme + "://" + u.Host
	}
	t.Cleanup(func() {
		f.srv.Close()
		for _, k := range sortedKeys(f.reads) {
			if f.served[k] == 0 {
				t.Errorf("fake forge: expected request never made: %s", k)
			}
		}
	})
}

func (f *fakeForge) URL() string { return f.srv.URL }

// expectNoRequests drops every recorded read: the run under test must not call the forge at
// all, and any request it makes fails the test as unexpected.
func (f *fakeForge) expectNoRequests() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = map[string]cassette.Interaction{}
}

func (f *fakeForge) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	k, err := cassette.Key(r.Method, r.URL.String(), body)
	if err != nil {
		f.t.Errorf("fake forge: bad request: %v", err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if in, ok := f.reads[k]; ok {
		f.served[k]++
		rb, err := in.Response.Body.Bytes()
		if err != nil {
			f.t.Errorf("fake forge: %v", err)
		}
		for h, vs := range in.Response.Header {
			if h == "Content-Length" {
				continue
			}
			for _, v := range vs {
				if h == "Link" {
					v = strings.ReplaceAll(v, f.origin, f.srv.URL)
				}
				w.Header().Add(h, v)
			}
		}
		w.WriteHeader(in.Response.Status)
		w.Write(rb)
		return
	}
	var req struct {
		Body string `json:"body"`
	}
	switch {
	case r.Method == http.MethodPost && f.create.MatchString(r.URL.EscapedPath()):
		if json.Unmarshal(body, &req) != nil || req.Body == "" {
			f.t.Errorf("fake forge: comment create without a body")
		}
		f.writes = append(f.writes, fakeWrite{r.Method, r.URL.Path, req.Body})
		f.nextID++
		f.reply(f, w, http.StatusCreated, f.nextID, req.Body)
	case r.Method == f.editMethod && f.edit.MatchString(r.URL.EscapedPath()):
		if json.Unmarshal(body, &req) != nil || req.Body == "" {
			f.t.Errorf("fake forge: comment edit without a body")
		}
		f.writes = append(f.writes, fakeWrite{r.Method, r.URL.Path, req.Body})
		var id int64
		fmt.Sscan(f.edit.FindStringSubmatch(r.URL.EscapedPath())[1], &id)
		f.reply(f, w, http.StatusOK, id, req.Body)
	default:
		f.t.Errorf("fake forge: unexpected request: %s", k)
		http.Error(w, "unexpected request "+k, http.StatusNotImplemented)
	}
}

// githubComment answers a comment write in GitHub's issue-comment shape, authored by the
// Actions bot.
func githubComment(f *fakeForge, w http.ResponseWriter, status int, id int64, body string) {
	now := time.Now().UTC().Format(time.RFC3339)
	repo := "https://api.github.com/repos/octo-org/Hello-World"
	u := ghscenario.Actions
	c := map[string]any{
		"id": id, "node_id": fmt.Sprintf("IC_kwDOLq3Xz86AA%04d", id%10000), "url": fmt.Sprintf("%s/issues/comments/%d", repo, id),
		"html_url": fmt.Sprintf("https://github.com/octo-org/Hello-World/issues/%d#issuecomment-%d", f.sc.Number, id),
		"body":     body, "created_at": now, "updated_at": now, "author_association": "NONE",
		"issue_url": fmt.Sprintf("%s/issues/%d", repo, f.sc.Number),
		"user": map[string]any{"login": u.Login, "id": u.ID, "node_id": u.NodeID, "type": "Bot", "site_admin": false,
			"url": "https://api.github.com/users/" + url.PathEscape(u.Login), "html_url": "https://github.com/apps/github-actions"},
	}
	b, _ := json.Marshal(c)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// Writes returns the comment writes in arrival order.
func (f *fakeForge) Writes() []fakeWrite {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeWrite(nil), f.writes...)
}

// methods lists the writes' methods, e.g. [POST POST PATCH].
func methods(ws []fakeWrite) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Method
	}
	return out
}
