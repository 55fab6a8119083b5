package giteaserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CreateUser creates an individual account through the admin API (no forced password change)
// and gives it an "all"-scope token, made by the user itself with password authentication.
func (s *Server) CreateUser(t testing.TB, login string) *User {
	t.Helper()
	u := &User{Login: login, Password: "pw-" + login + "-Secret1"}
	var got struct {
		ID int64 `json:"id"`
	}
	s.MustDo(t, s.Admin.Token, "", "POST", "/admin/users", map[string]any{
		"username": login, "email": login + "@example.invalid", "password": u.Password,
		"must_change_password": false, "visibility": "public",
	}, &got)
	u.ID = got.ID
	u.Token = s.passwordToken(t, u)
	return u
}

// passwordToken creates a token as the user, authenticated by its password (basic auth).
func (s *Server) passwordToken(t testing.TB, u *User) string {
	t.Helper()
	b := strings.NewReader(`{"name":"forgectx","scopes":["all"]}`)
	req, err := http.NewRequest("POST", s.APIURL+"/users/"+url.PathEscape(u.Login)+"/tokens", b)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(u.Login, u.Password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 201 {
		t.Fatalf("token for %s: HTTP %d: %s", u.Login, resp.StatusCode, tail(string(raw), 300))
	}
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	if err := json.Unmarshal(raw, &tok); err != nil || tok.SHA1 == "" {
		t.Fatalf("token for %s: %v", u.Login, err)
	}
	return tok.SHA1
}

// CreateBot creates a bot-type account (Gitea's user type 4) with the gitea CLI, the only way
// to make one. Gitea creates bots with must-change-password set and no password: the bot cannot
// log in, and until the flag is cleared (here, by the admin API) Gitea answers every API request
// made with its token 403 "You must change your password". Its token is made by the CLI
// (generate-access-token needs no login).
func (s *Server) CreateBot(t testing.TB, login string) *User {
	t.Helper()
	s.cli(t, "admin", "user", "create", "--username", login, "--email", login+"@example.invalid", "--user-type", "bot")
	tok := s.cliToken(t, login)
	u := &User{Login: login, Token: tok}
	s.MustDo(t, s.Admin.Token, "", "PATCH", "/admin/users/"+url.PathEscape(login), map[string]any{
		"login_name": login, "source_id": 0, "must_change_password": false,
	}, nil)
	var got struct {
		ID int64 `json:"id"`
	}
	s.MustDo(t, tok, "", "GET", "/user", nil, &got)
	u.ID = got.ID
	return u
}

// DeleteUser deletes an account (not purged: its comments stay and Gitea shows them as Ghost).
func (s *Server) DeleteUser(t testing.TB, u *User) {
	t.Helper()
	s.MustDo(t, s.Admin.Token, "", "DELETE", "/admin/users/"+url.PathEscape(u.Login), nil, nil)
}

// CreateRepo creates a private repository owned by owner, initialised with a README on main.
// Private, so that a non-collaborator's permission is none rather than read.
func (s *Server) CreateRepo(t testing.TB, owner *User, name string) Repo {
	t.Helper()
	var got struct {
		ID int64 `json:"id"`
	}
	s.MustDo(t, owner.Token, "", "POST", "/user/repos", map[string]any{
		"name": name, "private": true, "auto_init": true, "default_branch": "main", "readme": "Default",
	}, &got)
	return Repo{Owner: owner.Login, Name: name, ID: got.ID}
}

// AddCollaborator grants u permission ("read", "write" or "admin") on repo.
func (s *Server) AddCollaborator(t testing.TB, repo Repo, u *User, permission string) {
	t.Helper()
	s.MustDo(t, s.Admin.Token, "", "PUT", "/repos/"+repo.FullName()+"/collaborators/"+url.PathEscape(u.Login),
		map[string]any{"permission": permission}, nil)
}

// PutFile creates path on branch with content, committed by as.
func (s *Server) PutFile(t testing.TB, as *User, repo Repo, branch, path, content string) {
	t.Helper()
	s.MustDo(t, as.Token, "", "POST", "/repos/"+repo.FullName()+"/contents/"+path, map[string]any{
		"branch": branch, "content": base64.StdEncoding.EncodeToString([]byte(content)), "message": "add " + path,
	}, nil)
}

// PushBranch clones repo over HTTP as as (token in the URL, loopback only), creates branch from
// the default branch, writes files, commits and pushes it. It returns the new head SHA.
func (s *Server) PushBranch(t testing.TB, as *User, repo Repo, branch string, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("realforge: git is not installed")
	}
	work := filepath.Join(s.dir, "clone-"+repo.Name+"-"+branch)
	u, _ := url.Parse(s.URL)
	u.User = url.UserPassword(as.Login, as.Token)
	u.Path = "/" + repo.FullName() + ".git"
	git := func(dir string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+s.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME="+as.Login, "GIT_AUTHOR_EMAIL="+as.Login+"@example.invalid",
			"GIT_COMMITTER_NAME="+as.Login, "GIT_COMMITTER_EMAIL="+as.Login+"@example.invalid",
			"GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			// The output may echo the remote URL: never print the token.
			t.Fatalf("git %s: %v\n%s", args[0], err, strings.ReplaceAll(string(out), as.Token, "***"))
		}
		return strings.TrimSpace(string(out))
	}
	git(s.dir, "clone", "-q", u.String(), work)
	git(work, "checkout", "-q", "-b", branch)
	for p, c := range files {
		full := filepath.Join(work, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(work, "add", "-A")
	git(work, "commit", "-q", "-m", "change on "+branch)
	git(work, "push", "-q", "origin", branch)
	return git(work, "rev-parse", "HEAD")
}

// CreateIssue opens an issue as as and returns its number.
func (s *Server) CreateIssue(t testing.TB, as *User, repo Repo, title, body string) int64 {
	t.Helper()
	var got struct {
		Number int64 `json:"number"`
	}
	s.MustDo(t, as.Token, "", "POST", "/repos/"+repo.FullName()+"/issues", map[string]any{"title": title, "body": body}, &got)
	return got.Number
}

// Comment posts an issue (or pull request) comment as as and returns its id.
func (s *Server) Comment(t testing.TB, as *User, repo Repo, number int64, body string) int64 {
	t.Helper()
	var got struct {
		ID int64 `json:"id"`
	}
	s.MustDo(t, as.Token, "", "POST", fmt.Sprintf("/repos/%s/issues/%d/comments", repo.FullName(), number), map[string]any{"body": body}, &got)
	return got.ID
}

// CreatePull opens a pull request from head into main as as and returns its number.
func (s *Server) CreatePull(t testing.TB, as *User, repo Repo, head, title, body string) int64 {
	t.Helper()
	var got struct {
		Number int64 `json:"number"`
	}
	s.MustDo(t, as.Token, "", "POST", "/repos/"+repo.FullName()+"/pulls", map[string]any{"head": head, "base": "main", "title": title, "body": body}, &got)
	return got.Number
}

// ReviewComment is an inline comment of a review: NewLine comments the new side (right),
// OldLine the old side (left) of Path.
type ReviewComment struct {
	Path             string
	Body             string
	NewLine, OldLine int64
}

// Review submits a review as as. event is APPROVED, REQUEST_CHANGES, COMMENT or PENDING (left
// unsubmitted: visible to its author and instance admins only). It returns the review id.
func (s *Server) Review(t testing.TB, as *User, repo Repo, number int64, event, body string, comments ...ReviewComment) int64 {
	t.Helper()
	cs := make([]map[string]any, 0, len(comments))
	for _, c := range comments {
		cs = append(cs, map[string]any{"path": c.Path, "body": c.Body, "new_position": c.NewLine, "old_position": c.OldLine})
	}
	var got struct {
		ID int64 `json:"id"`
	}
	s.MustDo(t, as.Token, "", "POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo.FullName(), number),
		map[string]any{"event": event, "body": body, "comments": cs}, &got)
	return got.ID
}

// Dismiss dismisses a review as as (a repository admin).
func (s *Server) Dismiss(t testing.TB, as *User, repo Repo, number, reviewID int64, message string) {
	t.Helper()
	s.MustDo(t, as.Token, "", "POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews/%d/dismissals", repo.FullName(), number, reviewID),
		map[string]any{"message": message}, nil)
}

// ReviewCommentIDs lists the ids of a review's inline comments, in Gitea's order.
func (s *Server) ReviewCommentIDs(t testing.TB, as *User, repo Repo, number, reviewID int64) []int64 {
	t.Helper()
	var got []struct {
		ID int64 `json:"id"`
	}
	s.MustDo(t, as.Token, "", "GET", fmt.Sprintf("/repos/%s/pulls/%d/reviews/%d/comments", repo.FullName(), number, reviewID), nil, &got)
	ids := make([]int64, len(got))
	for i, c := range got {
		ids[i] = c.ID
	}
	return ids
}

// ResolveConversation marks the conversation of a review comment resolved as as. Gitea has no
// API for it: this logs in through the web form and posts the pull request page's
// resolve_conversation form with the session's CSRF token.
func (s *Server) ResolveConversation(t testing.TB, as *User, repo Repo, number, commentID int64) {
	t.Helper()
	web := s.Login(t, as)
	web.Post(t, "/"+repo.FullName()+"/issues/resolve_conversation",
		fmt.Sprintf("/%s/pulls/%d/files", repo.FullName(), number),
		url.Values{"origin": {"timeline"}, "action": {"Resolve"}, "comment_id": {fmt.Sprint(commentID)}})
}

// Web is a logged-in browser session.
type Web struct {
	s   *Server
	jar *cookiejar.Jar
	c   *http.Client
}

// Login signs in through /user/login with the user's password.
func (s *Server) Login(t testing.TB, u *User) *Web {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	w := &Web{s: s, jar: jar, c: &http.Client{Jar: jar, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	w.get(t, "/user/login")
	resp := w.post(t, "/user/login", url.Values{"user_name": {u.Login}, "password": {u.Password}})
	if resp != http.StatusSeeOther && resp != http.StatusFound {
		t.Fatalf("web login as %s: HTTP %d", u.Login, resp)
	}
	return w
}

func (w *Web) get(t testing.TB, path string) {
	t.Helper()
	resp, err := w.c.Get(w.s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
	}
}

func (w *Web) csrf() string {
	u, _ := url.Parse(w.s.URL)
	for _, c := range w.jar.Cookies(u) {
		if c.Name == "_csrf" {
			v, err := url.QueryUnescape(c.Value)
			if err == nil {
				return v
			}
			return c.Value
		}
	}
	return ""
}

// post sends form with the session's CSRF token when the server issued one: Gitea 1.25 sets
// a _csrf cookie and requires the token in the form; Gitea 1.27 replaced the tokens with
// cross-origin checks on Sec-Fetch-Site / Origin, which this client does not send, so its
// same-origin form passes without a token (verified: the resolve and cancel forms work on both).
func (w *Web) post(t testing.TB, path string, form url.Values) int {
	t.Helper()
	if tok := w.csrf(); tok != "" {
		form.Set("_csrf", tok)
	}
	resp, err := w.c.PostForm(w.s.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Post loads page (refreshing the CSRF cookie for the logged-in session) and posts form to path.
func (w *Web) Post(t testing.TB, path, page string, form url.Values) {
	t.Helper()
	w.get(t, page)
	if code := w.post(t, path, form); code/100 != 2 && code/100 != 3 {
		t.Fatalf("POST %s: HTTP %d", path, code)
	}
}

// CommitStatus reports a commit status on sha as as (what Woodpecker, Drone or any external
// CI does instead of Actions).
func (s *Server) CommitStatus(t testing.TB, as *User, repo Repo, sha, state, context, description string) {
	t.Helper()
	s.MustDo(t, as.Token, "", "POST", "/repos/"+repo.FullName()+"/statuses/"+sha, map[string]any{
		"state": state, "context": context, "description": description, "target_url": s.URL + "/ci/" + context,
	}, nil)
}

// Hook registers a Gitea-type webhook on repo delivering events (e.g. "issue_comment",
// "pull_request", "pull_request_review_approved") as JSON to target, which must be a loopback
// URL ([webhook] ALLOWED_HOST_LIST = loopback). It returns the hook id.
func (s *Server) Hook(t testing.TB, repo Repo, target string, events []string) int64 {
	t.Helper()
	var got struct {
		ID int64 `json:"id"`
	}
	s.MustDo(t, s.Admin.Token, "", "POST", "/repos/"+repo.FullName()+"/hooks", map[string]any{
		"type": "gitea", "active": true, "events": events, "branch_filter": "*",
		"config": map[string]string{"url": target, "content_type": "json"},
	}, &got)
	return got.ID
}
