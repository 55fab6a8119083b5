package realforge

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/forgectx/forgectx/test/realforge/giteaserver"
)

// TestRealForge seeds one Gitea server and drives the forgectx binary against it: the seeding
// costs about half a minute, so every scenario that leaves the data unchanged shares it.
func TestRealForge(t *testing.T) {
	srv := giteaserver.Start(t, giteaserver.Config{})
	sc := seed(t, srv)
	repo := sc.repo.FullName()

	t.Run("issue/admin-tokens", func(t *testing.T) {
		// The instance admin and the repository-admin token the docs recommend see the same
		// issue: every role as Gitea reports it, every comment (more than one page), the
		// deleted author's comment refused, hostile content nowhere.
		for name, tok := range map[string]string{"instance-admin": srv.Admin.Token, "repo-admin": sc.repoAdmin.Token} {
			t.Run(name, func(t *testing.T) {
				s := mustSnapshot(t, srv.APIURL, tok, repo, sc.issue, workItemProfile)
				verify(t, s)
				noHostile(t, s.out)
				if got := s.sum.acquired("comments"); got != sc.issueComments {
					t.Errorf("comments acquired = %d, want %d (all pages)", got, sc.issueComments)
				}
				// state/actors.json lists the actors of emitted records: the read collaborator's
				// comment is refused (below triage), so reader is checked through the gap below.
				want := map[string]string{"owner": "admin", "repo-admin": "admin", "writer": "write"}
				got := roles(t, s.out)
				for login, role := range want {
					if got[login] != role {
						t.Errorf("role of %s = %q, want %q (all: %v)", login, got[login], role, got)
					}
				}
				if _, ok := got["leaver"]; ok {
					t.Errorf("the deleted account is still an actor by login: %v", got)
				}
				// Ghost (the deleted author) is never admitted, and the read collaborator is
				// below the observation threshold (triage): both refused, not dropped silently.
				if s.sum.gap("comments", "authorization_failed") == 0 {
					t.Errorf("no comments authorization_failed gap for the Ghost and read-only authors: %+v", s.sum.Summary.Gaps)
				}
				var idx struct {
					Source struct{ Forge, Host, Repository string } `json:"source"`
				}
				readJSON(t, filepath.Join(s.out, "index.json"), &idx)
				if idx.Source.Forge != "forgejo" || idx.Source.Repository != "owner/widgets" || !strings.HasPrefix(idx.Source.Host, "127.0.0.1:") {
					t.Errorf("index source = %+v, want forge forgejo, owner/widgets on 127.0.0.1:PORT", idx.Source)
				}
			})
		}
	})

	t.Run("issue/read-only-token", func(t *testing.T) {
		// A read collaborator's token cannot read other users' permissions: every role is
		// unverified, nothing is admitted and the entity aborts (fail closed), never a tree that
		// looks authorised.
		s := snapshot(t, srv.APIURL, sc.reader.Token, repo, sc.issue, workItemProfile)
		if s.code == 0 {
			got := roles(t, s.out)
			for login, role := range got {
				if !strings.Contains(role, "<nil>") && !strings.Contains(role, "unverified") && login != "reader" {
					t.Errorf("read-only token verified the role of %s as %s", login, role)
				}
			}
			if s.sum.gap("actors", "authorization_failed") == 0 {
				t.Errorf("read-only token: no actors authorization_failed gap: %+v", s.sum.Summary.Gaps)
			}
			return
		}
		if s.code != 1 || hasAnyFile(s.out) {
			t.Fatalf("read-only token: exit %d, tree written %v; want exit 1 and no tree\n%s", s.code, hasAnyFile(s.out), tailStr(s.stderr, 1500))
		}
	})

	t.Run("issue/non-collaborator-token", func(t *testing.T) {
		// The repository is private: a non-collaborator cannot read it at all.
		s := snapshot(t, srv.APIURL, sc.outsider.Token, repo, sc.issue, workItemProfile)
		if s.code != 1 || hasAnyFile(s.out) {
			t.Fatalf("outsider token: exit %d, tree %v; want exit 1 and no tree", s.code, hasAnyFile(s.out))
		}
	})

	t.Run("pull/admin-tokens", func(t *testing.T) {
		for name, tok := range map[string]string{"instance-admin": srv.Admin.Token, "repo-admin": sc.repoAdmin.Token} {
			t.Run(name, func(t *testing.T) {
				s := mustSnapshot(t, srv.APIURL, tok, repo, sc.pull, pullProfile)
				verify(t, s)
				noHostile(t, s.out)
				if name == "repo-admin" {
					// Gitea counts the other user's pending review in X-Total-Count and hides
					// it from this token: the list cannot be shown complete, so the reviews
					// scope is a fetch_failed gap, never a silently short list.
					if s.sum.gap("reviews", "fetch_failed") == 0 {
						t.Fatalf("repo-admin: no reviews fetch_failed gap for a list short of X-Total-Count: %+v", s.sum.Summary.Gaps)
					}
					return
				}
				checkPull(t, sc, s)
			})
		}
	})

	t.Run("pull/read-only-token", func(t *testing.T) {
		s := snapshot(t, srv.APIURL, sc.reader.Token, repo, sc.pull, pullProfile)
		if s.code == 0 && s.sum.gap("actors", "authorization_failed") == 0 {
			t.Fatalf("read-only token: a tree without an actors authorization_failed gap: %+v", s.sum.Summary.Gaps)
		}
		if s.code != 0 && (s.code != 1 || hasAnyFile(s.out)) {
			t.Fatalf("read-only token: exit %d, tree %v", s.code, hasAnyFile(s.out))
		}
	})

	t.Run("determinism/two-live-runs", func(t *testing.T) {
		for _, n := range []int64{sc.issue, sc.pull} {
			p := workItemProfile
			if n == sc.pull {
				p = pullProfile
			}
			a := mustSnapshot(t, srv.APIURL, sc.repoAdmin.Token, repo, n, p)
			b := mustSnapshot(t, srv.APIURL, sc.repoAdmin.Token, repo, n, p)
			sameTree(t, a.out, b.out)
			if a.sum.IndexSHA256 != b.sum.IndexSHA256 {
				t.Errorf("#%d: index digests differ: %s vs %s", n, a.sum.IndexSHA256, b.sum.IndexSHA256)
			}
		}
	})

	t.Run("determinism/concurrency-1-and-4", func(t *testing.T) { sameTreeAtConcurrency(t, srv.APIURL, sc, repo) })

	t.Run("determinism/record-replay", func(t *testing.T) {
		for _, n := range []int64{sc.issue, sc.pull} {
			p := workItemProfile
			if n == sc.pull {
				p = pullProfile
			}
			cas := filepath.Join(t.TempDir(), "cassette")
			live := mustSnapshot(t, srv.APIURL, sc.repoAdmin.Token, repo, n, p, "--record", cas)
			replay := mustSnapshot(t, "", "", repo, n, p, "--replay", cas)
			sameTree(t, live.out, replay.out)
			// The cassette never carries the token.
			for path, b := range files(t, cas) {
				if strings.Contains(string(b), sc.repoAdmin.Token) {
					t.Errorf("cassette %s contains the token", path)
				}
			}
		}
	})

	// Last: it adds comments (status and receipts) to the issue.
	t.Run("run", func(t *testing.T) { testRun(t, sc) })
}

func hasAnyFile(dir string) bool {
	ents, err := os.ReadDir(dir)
	return err == nil && len(ents) > 0
}

// checkPull asserts the pull request's reviews and threads as Gitea holds them.
func checkPull(t *testing.T, sc *scenario, s snap) {
	t.Helper()
	var rel struct {
		Reviews []struct{ ID, State string } `json:"reviews"`
		Threads []struct {
			ID, Path, Side string
			Line           int
		} `json:"threads"`
	}
	readJSON(t, filepath.Join(s.out, "relations", "reviews.json"), &rel)
	var states []string
	for _, r := range rel.Reviews {
		states = append(states, r.State)
	}
	sort.Strings(states)
	// approved (repo-admin), changes_requested (owner), commented (writer), dismissed (the
	// bot's approval); the pending review is not a submitted review.
	if got, want := strings.Join(states, ","), "approved,changes_requested,commented,dismissed"; got != want {
		t.Errorf("review states = %s, want %s", got, want)
	}
	var sides []string
	for _, th := range rel.Threads {
		if th.Path != "lib.txt" {
			t.Errorf("thread %s on %q, want lib.txt", th.ID, th.Path)
		}
		sides = append(sides, th.Side+":"+itoa(th.Line))
	}
	sort.Strings(sides)
	if got, want := strings.Join(sides, ","), "left:5,right:3"; got != want {
		t.Errorf("threads = %s, want %s (the pending review's inline comment is no thread)", got, want)
	}
	var st struct {
		Threads []struct {
			ID       string `json:"id"`
			Resolved bool   `json:"resolved"`
		} `json:"threads"`
	}
	readJSON(t, filepath.Join(s.out, "state", "threads.json"), &st)
	resolved := map[string]bool{}
	for _, th := range st.Threads {
		resolved[th.ID] = th.Resolved
	}
	if want := itoa(int(sc.resolvedComment)); len(resolved) != 2 || !resolved[want] {
		t.Errorf("thread resolution = %v, want thread %s resolved (resolved through the web form) and one open", resolved, want)
	}
	got := roles(t, s.out)
	for login, role := range map[string]string{"owner": "admin", "repo-admin": "admin", "writer": "write", "author": "write", "ci-bot": "admin"} {
		if got[login] != role {
			t.Errorf("role of %s = %q, want %q (all: %v)", login, got[login], role, got)
		}
	}
	if hasString(t, s.out, "pending inline") || hasString(t, s.out, "Draft thoughts") {
		t.Error("the pending review's content reached the tree")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// sameTreeAtConcurrency: the same tree read one request at a time and through a pool of 4
// (declared pages read ahead): the issue's comments are more than one page.
func sameTreeAtConcurrency(t *testing.T, apiURL string, sc *scenario, repo string) {
	t.Helper()
	for _, n := range []int64{sc.issue, sc.pull} {
		p := workItemProfile
		if n == sc.pull {
			p = pullProfile
		}
		one := mustSnapshot(t, apiURL, sc.repoAdmin.Token, repo, n, p, "--concurrency", "1")
		four := mustSnapshot(t, apiURL, sc.repoAdmin.Token, repo, n, p, "--concurrency", "4")
		sameTree(t, one.out, four.out)
		if one.sum.IndexSHA256 != four.sum.IndexSHA256 {
			t.Errorf("#%d: index digests differ: %s at 1, %s at 4", n, one.sum.IndexSHA256, four.sum.IndexSHA256)
		}
	}
}
